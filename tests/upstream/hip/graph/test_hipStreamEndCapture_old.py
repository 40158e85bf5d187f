"""hipStreamEndCapture (older file): ending a capture that was never begun, on a destroyed stream, after
an unrelated graph is destroyed, from another thread (wrong thread; the end of a relaxed capture there),
on a forked stream instead of the origin, and a fork joined from another thread."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, launch, run_threads

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamEndCapture_old.cc"

E = hip.hipError_t
N = 4096              # upstream: 100000


def _arrays(res, n=N):
    a_h = (1.618 + np.arange(n)).astype(np.float32)
    c_h = np.zeros(n, np.float32)
    return a_h, c_h, res.malloc(n * 4), res.malloc(n * 4)


def _capture_square(mod, stream, a_h, c_h, a_d, c_d, n=N):
    nbytes = n * 4
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemsetAsync(c_d, 0, nbytes, stream)
    launch(mod, "vector_square", [a_d, c_d, n], stream, n=n, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, stream)


@pytest.mark.parametrize("section", ["stream_null", "not_started", "stream_destroyed", "graph_destroyed"])
def test_Unit_hipStreamEndCapture_Negative(mod, res, section):
    # the null-graph sections are HT_NVIDIA only (and have no Python form)
    if section == "stream_null":
        expect_error(E.hipErrorIllegalState, hip.hipStreamEndCapture, None)
    elif section == "not_started":
        expect_error(E.hipErrorIllegalState, hip.hipStreamEndCapture, res.stream())
    elif section == "stream_destroyed":
        stream = hip.hipStreamCreate()
        hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
        hip.hipStreamDestroy(stream)
        expect_error(E.hipErrorContextIsDestroyed, hip.hipStreamEndCapture, stream)
    else:
        a_h, c_h, a_d, c_d = _arrays(res)
        stream = res.stream()
        graph = hip.hipGraphCreate(0)
        hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
        _capture_square(mod, stream, a_h, c_h, a_d, c_d)
        hip.hipGraphDestroy(graph)
        res.keep(hip.hipStreamEndCapture(stream))


@pytest.mark.parametrize("mode", [hip.hipStreamCaptureModeGlobal, hip.hipStreamCaptureModeThreadLocal],
                         ids=["Global", "ThreadLocal"])
def test_Unit_hipStreamEndCapture_Thread_Negative(mod, res, mode):
    a_h, c_h, a_d, c_d = _arrays(res)
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, mode)
    _capture_square(mod, stream, a_h, c_h, a_d, c_d)

    def thread_func():
        expect_error(E.hipErrorStreamCaptureWrongThread, hip.hipStreamEndCapture, stream)

    run_threads(thread_func)
    res.keep(hip.hipStreamEndCapture(stream))       # HT_AMD


def test_Unit_hipStreamEndCapture_mode_hipStreamCaptureModeRelaxed(mod, res):
    n = 10
    nbytes = n * 4
    a_h = (1.0 + np.arange(n)).astype(np.float32)
    c_h = a_h.copy()
    b_h = np.zeros(n, np.float32)
    a_d = res.malloc(nbytes)
    stream, stream_for_graph = res.streams(2)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeRelaxed)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
    launch(mod, "vector_square", [a_d, a_d, n], stream, n=n, block=256)
    out = {}

    def thread_func1():
        hip.hipMemcpyAsync(b_h, a_d, nbytes, hip.hipMemcpyDeviceToHost, stream)
        out["graph"] = res.keep(hip.hipStreamEndCapture(stream))

    run_threads(thread_func1)
    exe = res.instantiate(out["graph"])
    hip.hipGraphLaunch(exe, stream_for_graph)
    hip.hipStreamSynchronize(stream_for_graph)
    np.testing.assert_array_equal(b_h, c_h * c_h)


def test_Unit_hipStreamEndCapture_chkError_on_wrongStream(mod, res):
    a_h = np.zeros(1, np.int32)
    a_d = res.malloc(4)
    s1, s2 = res.streams(2)
    fork = res.event()
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemcpyAsync(a_d, a_h, 4, hip.hipMemcpyHostToDevice, s1)
    launch(mod, "graph_increment_atomic", [a_d], s1, n=512 * 256, block=256)
    launch(mod, "graph_increment_atomic", [a_d], s2, n=512 * 256, block=256)
    expect_error(E.hipErrorStreamCaptureUnmatched, hip.hipStreamEndCapture, s2)


def test_Unit_hipStreamEndCapture_streamMerge_in_thread(mod, res):
    n = 5
    nbytes = n * 4
    a_h = (1 + np.arange(n)).astype(np.int32)
    b_h = (2 + np.arange(n)).astype(np.int32)
    c_h = np.zeros(n, np.int32)
    a_d, b_d, c_d = res.malloc(nbytes), res.malloc(nbytes), res.malloc(nbytes)
    s1, s2, s_graph = res.streams(3)
    fork, event = res.events(2)
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, s1)

    def thread_func4():
        hip.hipMemcpyAsync(b_d, b_h, nbytes, hip.hipMemcpyHostToDevice, s2)
        hip.hipEventRecord(event, s2)
        hip.hipStreamWaitEvent(s1, event, 0)

    run_threads(thread_func4)
    launch(mod, "vectorADD_i32", [a_d, b_d, c_d, n], s1, n=n, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, s1)
    graph = res.keep(hip.hipStreamEndCapture(s1))
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, s_graph)
    hip.hipStreamSynchronize(s_graph)
    np.testing.assert_array_equal(c_h, a_h + b_h)
