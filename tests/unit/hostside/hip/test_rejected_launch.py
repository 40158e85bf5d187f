"""A launch HIP rejects (bad argument or geometry) raises at the call and leaves its stream exactly as
it was: no ring slot, no completion signal, no barrier reserved. Each case is followed by a good
launch and a sync on the same stream, bounded by a short wait timeout."""
import struct

import numpy as np
import pytest

from hostside import clr
from hostside import hip
from hostside import hsa
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 2})


@pytest.fixture(autouse=True)
def short_waits(mod, monkeypatch):
    """A wedged stream fails its sync in 5 s instead of HDEMU_WAIT_TIMEOUT_S."""
    monkeypatch.setattr(hsa.runtime(), "wait_timeout_s", 5.0)


def state(stream):
    """Everything a launch reserves or moves on the stream's command layer: packet ids (AQL and SDMA
    queues), the ring's next signal and whether it is armed, the stream's last signal and engine, the
    command count, packets waiting for a doorbell. (What the stream creates lazily may exist after a
    rejected command, unused: the SDMA queue, the ring's next signal, created at 0.)"""
    v = stream.vgpu
    sdma = v.sdma.load_write_index() if v.sdma is not None else 0
    nxt = v.sigs[v.sig_next].load() if v.sig_next < len(v.sigs) else 0
    return (v.queue.load_write_index(), sdma, v.sig_next, nxt, v.last_signal, v.last_engine,
            v.commands, dict(v.pending))


def inc(mod, stream, x, n=16, grid=(1, 1, 1), block=None, args=None):
    block = block or (n, 1, 1)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), *grid, *block, 0, stream,
                              [x, n] if args is None else args)


BAD = {
    "scalar 'abc' for a u32": dict(args=["X", "abc"]),
    "-1 for a u32": dict(args=["X", -1]),
    "2**40 for a u32": dict(args=["X", 2 ** 40]),
    "1.5 for a u32": dict(args=["X", 1.5]),
    "a float for a pointer": dict(args=[1.5, 16]),
    "a string for a pointer": dict(args=["0x1000", 16]),
    "gridDim -1": dict(grid=(-1, 1, 1)),
    "gridDimY -1": dict(grid=(1, -1, 1)),
    "gridDim 1.5": dict(grid=(1.5, 1, 1)),
    "gridDim 'abc'": dict(grid=("abc", 1, 1)),
    "gridDim None": dict(grid=(None, 1, 1)),
    "gridDimZ 2**32": dict(grid=(1, 1, 2 ** 32)),
    "blockDim 1.5": dict(block=(1.5, 1, 1)),
    "blockDim -1": dict(block=(-1, 1, 1)),
    "blockDimY 2**16": dict(block=(1, 2 ** 16, 1)),
}


@pytest.mark.parametrize("after", ["aql", "sdma"])
@pytest.mark.parametrize("case", list(BAD))
def test_rejected_launch_leaves_the_stream_as_it_was(mod, case, after):
    """``after``: the stream's last command ran on that engine (after SDMA work a launch puts a
    cross-engine barrier first; a rejected one must not)."""
    s = hip.hipStreamCreate()
    x = hip.hipMalloc(64)
    try:
        hip.hipMemset(x, 0, 64)
        inc(mod, s, x)
        if after == "sdma":
            hip.hipMemsetAsync(x, 0, 64, s)
        kw = dict(BAD[case])
        if "args" in kw:
            kw["args"] = [x if a == "X" else a for a in kw["args"]]
        before = state(s)
        with pytest.raises(hip.HipError) as ei:
            inc(mod, s, x, **kw)
        assert ei.value.name == "hipErrorInvalidValue"
        assert state(s) == before
        inc(mod, s, x)
        hip.hipStreamSynchronize(s)
        out = np.empty(16, np.int32)
        hip.hipMemcpy(out, x, 64, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(out, np.full(16, 1 if after == "sdma" else 2, np.int32))
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(x)


def test_rejected_launches_on_the_null_stream_do_not_wedge_it(mod):
    x = hip.hipMalloc(64)
    try:
        hip.hipMemset(x, 0, 64)
        for kw in BAD.values():
            kw = dict(kw)
            if "args" in kw:
                kw["args"] = [x if a == "X" else a for a in kw["args"]]
            with pytest.raises(hip.HipError, match="hipErrorInvalidValue"):
                inc(mod, None, x, **kw)
        inc(mod, None, x)
        hip.hipDeviceSynchronize()
        out = np.empty(16, np.int32)
        hip.hipMemcpy(out, x, 64, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(out, np.ones(16, np.int32))
    finally:
        hip.hipFree(x)


def test_rejected_launch_never_reaches_the_interceptor(mod):
    """With an interceptor installed (kernel replay), a launch HIP rejects is refused before the
    interceptor sees it (the interceptor takes a completion signal of the stream first)."""
    seen = []
    s = hip.hipStreamCreate()
    x = hip.hipMalloc(64)
    prev = clr.interceptor()
    clr.set_interceptor(lambda v, d: seen.append(d) or v.submit_dispatch(d.kobj, d.sig, d.args, d.grid,
                                                                          d.block, d.group_segment, d.dims))
    try:
        hip.hipMemset(x, 0, 64)
        for kw in BAD.values():
            kw = dict(kw)
            if "args" in kw:
                kw["args"] = [x if a == "X" else a for a in kw["args"]]
            with pytest.raises(hip.HipError, match="hipErrorInvalidValue"):
                inc(mod, s, x, **kw)
        assert seen == []
        inc(mod, s, x)
        hip.hipStreamSynchronize(s)
        assert len(seen) == 1
    finally:
        clr.set_interceptor(prev)
        hip.hipStreamDestroy(s)
        hip.hipFree(x)


def test_rejected_marker_and_copy_leave_the_stream_as_it_was(mod):
    """The command layer's other writers validate before they reserve too: a marker with a
    dependency that is not a signal handle, a copy of a negative size."""
    s = hip.hipStreamCreate()
    v = s.vgpu
    x = hip.hipMalloc(64)
    try:
        inc(mod, s, x)
        before = state(s)
        with pytest.raises(hsa.HsaError, match="signal handle"):
            v.marker(["not a handle"])
        assert state(s) == before
        with pytest.raises(struct.error):
            v.copy(x, x, -1)
        assert state(s) == before
        with pytest.raises(struct.error):
            v.fill(x, -1, 4)
        assert state(s) == before
        assert state(s) == before
        inc(mod, s, x)
        hip.hipStreamSynchronize(s)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(x)
