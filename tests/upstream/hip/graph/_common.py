"""What the ported graph cases share: hip-tests' guards (``Resources``), the capture sequences of
stream_capture_common.hh, and the parameters and marks for stream types and capture modes."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import function, launch

__all__ = ["LAUNCH_ITERS", "N", "MODES", "STREAM_TYPES", "Resources", "capture_simple",
           "capture_linear", "capture_branched", "capture_compute", "unchecked", "run_threads",
           "expect_error", "kparams", "function", "launch"]

#: kLaunchIters of stream_capture_common.hh
LAUNCH_ITERS = 10
#: upstream's N = 1000000 elements, kept small
N = 4096

MODES = [pytest.param(hip.hipStreamCaptureModeGlobal, id="Global"),
         pytest.param(hip.hipStreamCaptureModeThreadLocal, id="ThreadLocal"),
         pytest.param(hip.hipStreamCaptureModeRelaxed, id="Relaxed")]


STREAM_TYPES = ["perThread", "created"]


def expect_error(err, fn, *args):
    """HIP_CHECK_ERROR(fn(args), err)."""
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == err, f"{fn.__name__}: {ei.value.error.name}, expected {err.name}"


def unchecked(fn, *args):
    """A call whose result upstream ignores (a ``<<<>>>`` launch): the error, or None."""
    try:
        fn(*args)
    except hip.HipError as exc:
        return exc.error
    return None


def run_threads(*targets):
    """std::thread per callable, joined; an exception (a failed REQUIRE) in a thread fails the case."""
    errors = []

    def body(t):
        try:
            t()
        except BaseException as exc:    # noqa: BLE001 - handed to the test's thread
            errors.append(exc)

    ts = [threading.Thread(target=body, args=(t,)) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
        assert not t.is_alive(), "a test thread did not finish"
    if errors:
        raise errors[0]


def kparams(mod, name, args, grid=1, block=1, shared=0):
    return hip.hipKernelNodeParams(function(mod, name), grid, block, shared, list(args))


class Resources:
    """hip-tests' StreamGuard / StreamsGuard / EventsGuard / LinearAllocGuard in one place."""

    def __init__(self, mod):
        self.mod = mod
        self._streams, self._events, self._dev, self._pinned = [], [], [], []
        self._graphs, self._execs = [], []

    def stream(self, kind: str = "created"):
        if kind == "perThread":
            return hip.hipStreamPerThread
        s = hip.hipStreamCreate()
        self._streams.append(s)
        return s

    def stream_with_flags(self, flags):
        s = hip.hipStreamCreateWithFlags(flags)
        self._streams.append(s)
        return s

    def stream_with_priority(self, priority):
        s = hip.hipStreamCreateWithPriority(hip.hipStreamDefault, priority)
        self._streams.append(s)
        return s

    def streams(self, n: int):
        return [self.stream() for _ in range(n)]

    def event(self):
        e = hip.hipEventCreate()
        self._events.append(e)
        return e

    def events(self, n: int):
        return [self.event() for _ in range(n)]

    def malloc(self, nbytes: int) -> int:
        p = hip.hipMalloc(nbytes)
        self._dev.append(p)
        return p

    def pinned(self, dtype, count: int):
        """(pointer, numpy view) of hipHostMalloc memory."""
        p = hip.hipHostMalloc(np.dtype(dtype).itemsize * count)
        self._pinned.append(p)
        return p, hip.host_array(p, dtype, count)

    def graph(self):
        g = hip.hipGraphCreate(0)
        self._graphs.append(g)
        return g

    def keep(self, obj):
        """Track a graph or exec made elsewhere (stream capture, instantiate)."""
        (self._execs if isinstance(obj, hip.hipGraphExec_t) else self._graphs).append(obj)
        return obj

    def instantiate(self, graph):
        return self.keep(hip.hipGraphInstantiate(graph))

    def release(self):
        for _pass in range(2):            # origins first end the captures their forked streams are in
            for s in self._streams:
                if not getattr(s, "destroyed", False) and \
                        hip.hipStreamIsCapturing(s) != hip.hipStreamCaptureStatusNone:
                    g = unchecked_value(hip.hipStreamEndCapture, s)
                    if isinstance(g, hip.hipGraph_t):
                        self._graphs.append(g)
        unchecked(hip.hipDeviceSynchronize)
        for e in self._execs:
            unchecked(hip.hipGraphExecDestroy, e)
        for g in self._graphs:
            unchecked(hip.hipGraphDestroy, g)
        for e in self._events:
            unchecked(hip.hipEventDestroy, e)
        for s in self._streams:
            unchecked(hip.hipStreamDestroy, s)
        for p in self._dev:
            unchecked(hip.hipFree, p)
        for p in self._pinned:
            unchecked(hip.hipHostFree, p)
        hip.hipThreadExchangeStreamCaptureMode(hip.hipStreamCaptureModeGlobal)
        hip.hipGetLastError()


def unchecked_value(fn, *args):
    try:
        return fn(*args)
    except hip.HipError as exc:
        return exc.error


# -- stream_capture_common.hh ------------------------------------------------------------------------
def capture_simple(h1, d1, h2, n, stream, itemsize=4):
    nbytes = n * itemsize
    hip.hipMemsetAsync(d1, 0, nbytes, stream)
    hip.hipMemcpyAsync(d1, h1, nbytes, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemcpyAsync(h2, d1, nbytes, hip.hipMemcpyDeviceToHost, stream)


def capture_linear(h1, d1, h2, d2, n, stream, itemsize=4):
    nbytes = n * itemsize
    hip.hipMemcpyAsync(d1, h1, nbytes, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemsetAsync(d2, 0, nbytes, stream)


def capture_branched(h1, d1, h2, d2, n, stream, streams, events, itemsize=4):
    nbytes = n * itemsize
    hip.hipEventRecord(events[0], stream)
    hip.hipStreamWaitEvent(streams[0], events[0], 0)
    hip.hipStreamWaitEvent(streams[1], events[0], 0)
    hip.hipMemsetAsync(d1, 0, nbytes, streams[0])
    hip.hipMemcpyAsync(d1, h1, nbytes, hip.hipMemcpyHostToDevice, streams[0])
    hip.hipEventRecord(events[1], streams[0])
    hip.hipMemsetAsync(d2, 0, nbytes, streams[1])
    hip.hipEventRecord(events[2], streams[1])
    hip.hipStreamWaitEvent(stream, events[1], 0)
    hip.hipStreamWaitEvent(stream, events[2], 0)


def capture_compute(mod, d1, h2, d2, n, stream, dtype=np.float32):
    """vector_square<<<512, 256>>> (here over n work-items) and the copy back."""
    name = "vector_square" if np.dtype(dtype) == np.float32 else "graph_vector_square_i32"
    launch(mod, name, [d1, d2, n], stream, n=n, block=256)
    hip.hipMemcpyAsync(h2, d2, n * np.dtype(dtype).itemsize, hip.hipMemcpyDeviceToHost, stream)
