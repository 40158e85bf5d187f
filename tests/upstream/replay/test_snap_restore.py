"""rocprofiler-sdk kernel_replay/tests/snap_restore.cpp (the version with the module-variable cases):
the tracker captures hipMalloc and forgets hipFree, ``snap``/``restore`` revert device memory and
module globals, and kernarg and host memory stay out of the snapshot. Driven on
``hostside.replay._snapshot`` directly, as upstream drives ``memory_snapshot``.

Upstream's buffers are 8 Mi floats (32 MB); here 1 Mi floats (4 MiB), which the ported suites'
32 MiB device fits three times over. Like upstream, inventory assertions are deltas and membership,
never absolute sizes (the runtime allocates too)."""
import numpy as np
import pytest

from hostside import hip, hsa
from hostside.replay import _snapshot as msnp
from shm_layout import layouts as L
from tests.upstream.replay import _snap as K

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/snap_restore.cpp"
N_ELEMS = 1 << 20
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from K.platform_module()


def inventory_contains(p, agent) -> bool:
    return p in msnp.snap_inventory(agent)


def test_kernel_replay_snapshot_hipmalloc_autocaptured_and_freed(mod):
    agent = K.gpu_agent()
    before_alloc = len(msnp.snap_inventory(agent))
    buffer = hip.hipMalloc(N_ELEMS * 4)
    assert buffer
    assert len(msnp.snap_inventory(agent)) == before_alloc + 1, "hipMalloc was not auto-captured"
    assert inventory_contains(buffer, agent), "our device pointer is not in the inventory"
    before_free = len(msnp.snap_inventory(agent))
    hip.hipFree(buffer)
    assert len(msnp.snap_inventory(agent)) == before_free - 1, "hipFree was not auto-removed"
    assert not inventory_contains(buffer, agent), "freed pointer still present in inventory"


def test_kernel_replay_snapshot_restore_reverts_device_memory(mod):
    agent = K.gpu_agent()
    buffer = hip.hipMalloc(N_ELEMS * 4)
    assert inventory_contains(buffer, agent)
    expect_a = 1.0 + np.arange(N_ELEMS, dtype=np.float32)
    K.iota(mod, buffer, 1.0, N_ELEMS)
    assert np.array_equal(K.read_device(buffer, N_ELEMS), expect_a), "pre-mutation"
    snapshot = msnp.snap(agent)
    K.add(mod, buffer, 9000.0, N_ELEMS)
    assert np.array_equal(K.read_device(buffer, N_ELEMS), expect_a + 9000.0), "mutation did not land"
    msnp.restore(snapshot)
    assert np.array_equal(K.read_device(buffer, N_ELEMS), expect_a), "restore did not revert"
    hip.hipFree(buffer)


def test_kernel_replay_snapshot_restore_prevents_inplace_accumulation_across_passes(mod):
    agent = K.gpu_agent()
    passes, y0, a = 5, 100.0, 2.0
    x = hip.hipMalloc(N_ELEMS * 4)
    y = hip.hipMalloc(N_ELEMS * 4)
    K.fill(mod, x, 1.0, N_ELEMS)
    K.fill(mod, y, y0, N_ELEMS)
    K.set_module_counter(mod, 0)                # saxpy bumps it once per pass
    snapshot = msnp.snap(agent)
    for p in range(passes):
        K.saxpy(mod, y, x, a, N_ELEMS)
        assert np.all(K.read_device(y, N_ELEMS) == y0 + a), f"pass {p}"
        assert K.read_module_counter(mod) == 1, f"module counter after saxpy, pass {p}"
        msnp.restore(snapshot)
        assert np.all(K.read_device(y, N_ELEMS) == y0), f"post-restore pass {p}"
        assert K.read_module_counter(mod) == 0, f"module counter post-restore, pass {p}"
    assert np.all(K.read_device(y, N_ELEMS) == y0), "accumulated across passes"
    assert K.read_module_counter(mod) == 0, "module counter accumulated across passes"
    hip.hipFree(y)
    hip.hipFree(x)


def test_kernel_replay_snapshot_restore_reverts_multiple_buffers(mod):
    agent = K.gpu_agent()
    base = [1.0, 100.0, 10000.0]
    buffers = []
    for b in base:
        buffers.append(hip.hipMalloc(N_ELEMS * 4))
        K.iota(mod, buffers[-1], b, N_ELEMS)
    snapshot = msnp.snap(agent)
    for d in buffers:
        K.add(mod, d, 77000.0, N_ELEMS)
    ramp = np.arange(N_ELEMS, dtype=np.float32)
    for i, d in enumerate(buffers):
        assert np.array_equal(K.read_device(d, N_ELEMS), np.float32(base[i]) + np.float32(77000.0) + ramp), i
    msnp.restore(snapshot)
    for i, d in enumerate(buffers):
        assert np.array_equal(K.read_device(d, N_ELEMS), np.float32(base[i]) + ramp), f"restored buf {i}"
    for d in buffers:
        hip.hipFree(d)


def test_kernel_replay_snapshot_pool_filter_excludes_kernarg_and_cpu(mod):
    agent = K.gpu_agent()
    dev = hip.hipMalloc(4096)
    assert msnp.query_alloc(dev).trackable, "device VRAM should be snapshot-trackable"
    assert inventory_contains(dev, agent), "device VRAM missing from the agent snapshot"
    host = hip.hipHostMalloc(4096)
    assert not inventory_contains(host, agent), "host memory leaked into the agent snapshot"
    rt = hsa.runtime()
    karg = rt.allocate(None, 256, L.ALLOC_KERNARG)      # the kernarg pool (hdemu: fine-grained, kind kernarg)
    try:
        assert karg
        assert not msnp.query_alloc(karg).trackable, "kernarg memory must be excluded from snapshots"
        assert not inventory_contains(karg, agent), "kernarg pointer present in the agent snapshot"
    finally:
        rt.free(karg)
    hip.hipHostFree(host)
    hip.hipFree(dev)


def test_kernel_replay_snapshot_restore_reverts_module_variable(mod):
    agent = K.gpu_agent()
    k_base = 7
    K.set_module_counter(mod, k_base)
    assert K.read_module_counter(mod) == k_base, "failed to seed the device global"
    snapshot = msnp.snap(agent)
    K.bump_module_counter(mod)
    K.sync_ok()
    assert K.read_module_counter(mod) == k_base + 1, "kernel mutation did not land"
    msnp.restore(snapshot)
    assert K.read_module_counter(mod) == k_base, "module variable was not restored by snapshot/restore"


def test_kernel_replay_snapshot_restore_prevents_module_variable_accumulation_across_passes(mod):
    agent = K.gpu_agent()
    k_base, passes = 0, 5
    K.set_module_counter(mod, k_base)
    snapshot = msnp.snap(agent)
    for p in range(passes):
        K.bump_module_counter(mod)
        K.sync_ok()
        assert K.read_module_counter(mod) == k_base + 1, f"mutation, pass {p}"
        msnp.restore(snapshot)
        assert K.read_module_counter(mod) == k_base, f"post-restore, pass {p}"
    assert K.read_module_counter(mod) == k_base, "module variable accumulated across passes"
