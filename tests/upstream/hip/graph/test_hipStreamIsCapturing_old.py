"""hipStreamIsCapturing (older file): the status of the null and per-thread streams, of a created and the
per-thread stream before, during and after a capture, of a forked stream, from another thread, and the
null stream's implicit-capture error while a blocking stream captures. The Negative case passes only a
null out-pointer (NOT_PORTED.md)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, launch, run_threads

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamIsCapturing_old.cc"

E = hip.hipError_t
N = 4096              # upstream: 100000
NBYTES = N * 4
NONE, ACTIVE = hip.hipStreamCaptureStatusNone, hip.hipStreamCaptureStatusActive


@pytest.mark.parametrize("stream", [None, hip.hipStreamPerThread], ids=["null", "perThread"])
def test_Unit_hipStreamIsCapturing_Functional_Basic(mod, res, stream):
    assert hip.hipStreamIsCapturing(stream) == NONE


def _arrays(res):
    a_h = (1.618 + np.arange(N)).astype(np.float32)
    return a_h, np.zeros(N, np.float32), res.malloc(NBYTES), res.malloc(NBYTES)


def _square_sequence(mod, stream, a_h, c_h, a_d, c_d):
    hip.hipMemcpyAsync(a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemsetAsync(c_d, 0, NBYTES, stream)
    launch(mod, "vector_square", [a_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, NBYTES, hip.hipMemcpyDeviceToHost, stream)


def _before_during_after(mod, res, stream):
    arrays = _arrays(res)
    assert hip.hipStreamIsCapturing(stream) == NONE
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    assert hip.hipStreamIsCapturing(stream) == ACTIVE
    _square_sequence(mod, stream, *arrays)
    res.keep(hip.hipStreamEndCapture(stream))
    assert hip.hipStreamIsCapturing(stream) == NONE
    hip.hipStreamSynchronize(stream)


def test_Unit_hipStreamIsCapturing_Functional(mod, res):
    _before_during_after(mod, res, res.stream())


def test_Unit_hipStreamIsCapturing_hipStreamPerThread(mod, res):
    _before_during_after(mod, res, hip.hipStreamPerThread)


def test_Unit_hipStreamIsCapturing_ParentAndForkedStream(mod, res):
    s1, s2 = res.streams(2)
    event2, fork = res.events(2)
    a_h = (3.146 + np.arange(N)).astype(np.float32)
    b_h = a_h.copy()
    c_h, d_h = np.zeros(N, np.float32), np.zeros(N, np.float32)
    a_d, b_d, c_d, d_d = (res.malloc(NBYTES) for _ in range(4))
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemcpyAsync(a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice, s1)
    hip.hipMemcpyAsync(b_d, b_h, NBYTES, hip.hipMemcpyHostToDevice, s2)
    launch(mod, "vector_square", [a_d, c_d, N], s1, n=N, block=256)
    launch(mod, "vector_square", [b_d, d_d, N], s2, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, NBYTES, hip.hipMemcpyDeviceToHost, s1)
    hip.hipMemcpyAsync(d_h, d_d, NBYTES, hip.hipMemcpyDeviceToHost, s2)
    assert hip.hipStreamIsCapturing(s1) == ACTIVE
    assert hip.hipStreamIsCapturing(s2) == ACTIVE
    hip.hipEventRecord(event2, s2)
    hip.hipStreamWaitEvent(s1, event2, 0)
    res.keep(hip.hipStreamEndCapture(s1))
    assert hip.hipStreamIsCapturing(s1) == NONE
    assert hip.hipStreamIsCapturing(s2) == NONE


def test_Unit_hipStreamIsCapturing_CheckCaptureStatus_FromThread(mod, res):
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    assert hip.hipStreamIsCapturing(stream) == ACTIVE

    def thread_func():
        assert hip.hipStreamIsCapturing(stream) == ACTIVE

    run_threads(thread_func)
    res.keep(hip.hipStreamEndCapture(stream))


def test_Unit_hipStreamIsCapturing_ChkNullStrmStatus(mod, res):
    stream, stream_for_graph = res.streams(2)
    a_h = (1.0 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(NBYTES), res.malloc(NBYTES)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    expect_error(E.hipErrorStreamCaptureImplicit, hip.hipStreamIsCapturing, 0)
    assert hip.hipStreamIsCapturing(stream) == ACTIVE
    hip.hipMemcpyAsync(a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice, stream)
    launch(mod, "vector_square", [a_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, NBYTES, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    hip.hipStreamIsCapturing(0)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream_for_graph)
    hip.hipStreamSynchronize(stream_for_graph)
    np.testing.assert_array_equal(c_h, a_h * a_h)
