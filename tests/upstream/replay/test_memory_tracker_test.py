"""rocprofiler-sdk kernel_replay/tests/memory_tracker_test.cpp: the inventory's per-agent scoping and
removal on free. Upstream seeds its process-wide map with fake addresses; hdemu's tracker is the
runtime's, so the port seeds it with real allocations (``hsa.Runtime.allocate``, upstream's
``record_alloc``) on the two agents of the ported suites' platform and frees them
(``Runtime.free``, upstream's ``record_free``). Sizes are multiples of the allocation alignment (256
bytes; upstream's 64/128/256 would round up), and as the runtime has allocations of its own the
assertions are over the entries this test made. The wrapper-installation and tracking-gate cases
are in NOT_PORTED.md."""
import pytest

from hostside import hsa
from hostside.replay import _snapshot as mt
from shm_layout import layouts as L
from tests.upstream.replay import _snap as K

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/memory_tracker_test.cpp"
AGENT_A, AGENT_B = 0, 1
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def rt():
    for _mod in K.platform_module():
        yield hsa.runtime()


@pytest.fixture
def seeded(rt):
    made = []

    def seed(size, agent):
        made.append(rt.allocate(agent, size, L.ALLOC_DEVICE))
        return made[-1]

    yield seed
    for p in made:
        if rt.pointer_info(p) is not None:
            rt.free(p)


def test_kernel_replay_memory_tracker_snap_inventory_scopes_to_agent(rt, seeded):
    before_a, before_b = set(mt.snap_inventory(AGENT_A)), set(mt.snap_inventory(AGENT_B))
    p1, p2, p3 = seeded(256, AGENT_A), seeded(512, AGENT_A), seeded(1024, AGENT_B)
    a = mt.snap_inventory(AGENT_A)
    assert set(a) - before_a == {p1, p2}
    assert a[p1].size == 256
    assert a[p2].size == 512
    assert p3 not in a
    b = mt.snap_inventory(AGENT_B)
    assert set(b) - before_b == {p3}
    assert b[p3].size == 1024


def test_kernel_replay_memory_tracker_record_free_removes_from_inventory(rt, seeded):
    before = set(mt.snap_inventory(AGENT_A))
    p = seeded(256, AGENT_A)
    assert set(mt.snap_inventory(AGENT_A)) - before == {p}
    rt.free(p)
    assert set(mt.snap_inventory(AGENT_A)) - before == set()
