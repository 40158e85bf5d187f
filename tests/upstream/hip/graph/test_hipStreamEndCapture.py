"""hipStreamEndCapture: errors for streams that are not capturing or were destroyed, ending a capture
after destroying an unrelated graph, and ending it from another thread (refused unless Relaxed)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import (LAUNCH_ITERS, STREAM_TYPES, N, capture_simple, expect_error,
                                              run_threads)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamEndCapture.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_stream", "not_started", "destroyed_stream"])
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamEndCapture_Negative_Parameters(mod, res, stream_type, section):
    stream = res.stream(stream_type)
    # "Pass graph as nullptr" is HT_NVIDIA only (and a null out-pointer)
    if section == "null_stream":
        expect_error(E.hipErrorIllegalState, hip.hipStreamEndCapture, None)
    elif section == "not_started":
        expect_error(E.hipErrorIllegalState, hip.hipStreamEndCapture, stream)
    else:
        gone = hip.hipStreamCreate()
        hip.hipStreamBeginCapture(gone, hip.hipStreamCaptureModeGlobal)
        hip.hipStreamDestroy(gone)
        expect_error(E.hipErrorContextIsDestroyed, hip.hipStreamEndCapture, gone)


def _buffers(res):
    return np.zeros(N, np.float32), np.zeros(N, np.float32), res.malloc(N * 4)


def test_Unit_hipStreamEndCapture_Positive_GraphDestroy(mod, res):
    a_h, b_h, a_d = _buffers(res)
    stream = res.stream()
    graph = hip.hipGraphCreate(0)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    capture_simple(a_h, a_d, b_h, N, stream)
    hip.hipGraphDestroy(graph)
    res.keep(hip.hipStreamEndCapture(stream))


def test_Unit_hipStreamEndCapture_Negative_Thread(mod, res):
    a_h, b_h, a_d = _buffers(res)
    stream = res.stream()
    graph = hip.hipGraphCreate(0)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    capture_simple(a_h, a_d, b_h, N, stream)
    run_threads(lambda: expect_error(E.hipErrorStreamCaptureWrongThread, hip.hipStreamEndCapture, stream))
    res.keep(hip.hipStreamEndCapture(stream))           # HT_AMD
    hip.hipGraphDestroy(graph)


def test_Unit_hipStreamEndCapture_Positive_Thread(mod, res):
    a_h, b_h, a_d = _buffers(res)
    stream = res.stream()
    out = {}
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeRelaxed)
    capture_simple(a_h, a_d, b_h, N, stream)
    run_threads(lambda: out.setdefault("graph", hip.hipStreamEndCapture(stream)))
    graph = res.keep(out["graph"])
    assert graph is not None
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == float(i)).all()
