"""The replay service's write path on a real (embedded) platform, without HIP and without
``replay.configure``: ``VirtualGPU.write_dispatch_locked`` (explicit completion signal and reserved2,
nothing rung, the cross-engine barrier covered by the caller's doorbell) and a counting-only
interception (``DispatchCounting``: the interceptor counts, delivers the record, then forwards
completion to the application's signal)."""
import time

import numpy as np
import pytest

import hostside.platform  # noqa: F401 - registers the embedded platform the Runtime starts
from hostside import clr, replay
from hostside.hsa import HSA_SIGNAL_CONDITION_EQ, Runtime
from shm_layout import counters as C
from shm_layout import layouts as L

from tests.rawq import KERNEL_SRC

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def rt():
    r = Runtime(config={"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "queue_size_max": 256, "engines": 2})
    r.co = r.load_code_object(KERNEL_SRC, "basic.py")
    yield r
    r.shutdown()


@pytest.fixture
def vgpu(rt):
    v = clr.VirtualGPU(rt, 0, 64)
    yield v
    v.destroy()


def _dev_i32(rt, addr, n):
    """The host mapping of ``n`` i32 of agent 0's device memory at ``addr``."""
    off = addr - L.device_base(0)
    return rt.pm.segs["mem0"].u8[off:off + 4 * n].view(np.int32)


def _zero(sig, timeout=20.0):
    return sig.wait(HSA_SIGNAL_CONDITION_EQ, 0, timeout)


def test_write_dispatch_locked_sets_completion_and_reserved2_and_rings_nothing(rt, vgpu):
    k, sig = rt.co.kernels["inc"]
    n = 16
    x = rt.allocate(0, 4 * n, L.ALLOC_DEVICE)
    blk = rt.allocate(None, C.REQUEST_BYTES, L.ALLOC_HOST)
    try:
        vgpu.fill(x, 5, n, 4)                              # SDMA last: the dispatch needs a barrier first
        rec = rt.host_view(blk, C.REQUEST_BYTES).view(C.counter_request)
        rec["n_slots"] = 2
        rec["ids"][0][:2] = [C.counter_id("WORKITEMS"), C.counter_id("POINTER_ARGS")]
        done = rt.signals.create(1)
        q = vgpu.queue
        rung = int(q.a64[q.i_rung])
        with vgpu.lock:
            wq, idx = vgpu.write_dispatch_locked(clr.Dispatch(k, sig, (x, n), (n, 1, 1), (n, 1, 1), 0, 1),
                                                 done.handle, blk)
        assert wq is q and idx == 1 and vgpu.last_engine == "aql"       # packet 0 is the barrier
        time.sleep(0.1)
        assert int(q.a64[q.i_rung]) == rung and done.load() == 1         # written, not rung
        q.ring_doorbell(idx)                                             # covers the barrier too
        assert _zero(done) == 0
        assert _dev_i32(rt, x, n).tolist() == [6] * n    # after the fill
        assert int(rec["n_written"][0]) == 2 and rec["out"][0][:2].tolist() == [n, 1]
        done.destroy()
    finally:
        rt.free(blk)
        rt.free(x)


def test_counting_only_interception_delivers_then_completes(rt, vgpu):
    k, sig = rt.co.kernels["inc"]
    n = 8
    x = rt.allocate(0, 4 * n, L.ALLOC_DEVICE)
    got = []
    ctx = replay.Context("unit")
    before = clr.interceptor()
    try:
        replay.DispatchCounting(ctx, ["WORKGROUPS", "WORKITEMS"], got.append)
        vgpu.fill(x, 0, n, 4)                               # SDMA, then kernels through the interceptor
        vgpu.launch(k, sig, [x, n], (n, 1, 1), (4, 1, 1), 0, 1)          # inactive context: not counted
        ctx.start()
        vgpu.launch(k, sig, [x, n], (n, 1, 1), (4, 1, 1), 0, 1)
        app = vgpu.last_signal
        vgpu.synchronize()
        assert app.load() == 0 and replay.flush(10.0)
        assert _dev_i32(rt, x, n).tolist() == [2] * n
        assert len(got) == 1
        r = got[0]
        assert r.values == {"WORKGROUPS": 2, "WORKITEMS": n} and r.replay_pass is None and r.kernel == "inc"
        assert replay.statistics().counted >= 1 and replay.outcomes() == []     # no service: no outcomes
    finally:
        ctx.destroy()
        clr.set_interceptor(before)
        rt.free(x)
