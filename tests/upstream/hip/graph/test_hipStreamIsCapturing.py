"""hipStreamIsCapturing: None before and after a capture, Active during it (also seen from another
thread), and the null stream refused while a capture is active."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import (LAUNCH_ITERS, MODES, STREAM_TYPES, N, capture_simple, expect_error,
                                              run_threads)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamIsCapturing.cc"

E = hip.hipError_t


@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamIsCapturing_Negative_Parameters(mod, res, stream_type):
    stream = res.stream(stream_type)
    # "null pCaptureStatus" is a null out-pointer; "uninitialized stream" is HT_NVIDIA only
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    expect_error(E.hipErrorStreamCaptureImplicit, hip.hipStreamIsCapturing, None)
    hip.hipGraphDestroy(hip.hipStreamEndCapture(stream))


@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamIsCapturing_Positive_Basic(mod, res, stream_type):
    stream = res.stream(stream_type)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamIsCapturing_Positive_Functional(mod, res, stream_type, mode):
    stream = res.stream(stream_type)
    a_h, b_h, a_d = np.zeros(N, np.float32), np.zeros(N, np.float32), res.malloc(N * 4)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    hip.hipStreamBeginCapture(stream, mode)
    capture_simple(a_h, a_d, b_h, N, stream)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusActive
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == float(i)).all()


def test_Unit_hipStreamIsCapturing_Positive_Thread(mod, res):
    stream = res.stream()
    a_h, b_h, a_d = np.zeros(N, np.float32), np.zeros(N, np.float32), res.malloc(N * 4)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    capture_simple(a_h, a_d, b_h, N, stream)

    def thread_func():
        assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusActive

    run_threads(thread_func)
    hip.hipGraphDestroy(hip.hipStreamEndCapture(stream))
