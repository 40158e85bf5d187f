"""rocprofiler-sdk kernel_replay/tests/memory_snapshot_test.cpp: the capture contract the window keys
on. ``Snapshot.ok`` is what declines a dispatch (``snapshot_failed``); a snapshot that captured
nothing is a successful one, and a failed one is never restored, even with some blocks already in it.

Upstream starts each case from an empty process-wide inventory; hdemu's inventory is the runtime's,
so the empty case snaps agent 1 of the ported suites' platform, where nothing is allocated. Upstream's
``restore`` of this version returns the number of regions restored (0 for an empty snapshot); the
later ``restore`` (snap_allocator_patterns.cpp) returns success, which is what hdemu's does."""
import pytest

from hostside import hsa
from hostside.replay import _snapshot as ms
from tests.upstream.replay import _snap as K

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/memory_snapshot_test.cpp"
TEST_AGENT = 1
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def rt():
    hsa.configure(dict(K.CONFIG))
    try:
        yield hsa.runtime()
    finally:
        hsa.configure(None)
        hsa.shutdown()


def test_kernel_replay_memory_snapshot_default_snapshot_is_ok_and_empty():
    snapshot = ms.Snapshot(TEST_AGENT)
    assert snapshot.ok
    assert snapshot.empty()


def test_kernel_replay_memory_snapshot_snap_with_empty_inventory_succeeds(rt):
    assert ms.snap_inventory(TEST_AGENT) == {}, "the agent must have no tracked memory for this case"
    snapshot = ms.snap(TEST_AGENT)
    assert snapshot.ok
    assert snapshot.empty()


def test_kernel_replay_memory_snapshot_restore_of_empty_snapshot_is_noop():
    snapshot = ms.Snapshot(TEST_AGENT)
    assert ms.restore(snapshot) is True
    assert snapshot.skipped == 0


def test_kernel_replay_memory_snapshot_failed_capture_is_distinguishable_from_empty_capture():
    failed = ms.Snapshot(TEST_AGENT, ok=False)
    assert not failed.ok
    assert failed.empty()
    partial = ms.Snapshot(TEST_AGENT, ok=False)
    partial.blocks.append(ms.Block(0, 0, 0, 0, 0))
    assert not partial.ok
    assert not partial.empty()                    # non-empty but must still not be restored
    assert ms.restore(partial) is False
