"""hipThreadExchangeStreamCaptureMode: a capture in every mode after exchanging the thread's mode, in the
main thread and then in a second thread, and invalid modes."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import MODES, capture_compute, capture_linear, expect_error, run_threads

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipThreadExchangeStreamCaptureMode.cc"

E = hip.hipError_t
N = 1024
FILL_VALUE = 5.0


def graph_launch_with_mode(mod, res, stream, mode):
    """hipGraphLaunchWithMode: exchange the thread's mode, capture copy-in + square + copy-out, run it."""
    nbytes = N * 4
    a_h, b_h = np.zeros(N, np.float32), np.zeros(N, np.float32)
    a_d, b_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    try:
        hip.hipThreadExchangeStreamCaptureMode(mode)
        hip.hipStreamBeginCapture(stream, mode)
        capture_linear(a_h, a_d, b_h, b_d, N, stream)
        capture_compute(mod, a_d, b_h, b_d, N, stream)
        c_d = hip.hipMalloc(nbytes) if mode == hip.hipStreamCaptureModeRelaxed else None
        graph = hip.hipStreamEndCapture(stream)
        assert graph is not None
        exe = hip.hipGraphInstantiate(graph)
        a_h[:] = FILL_VALUE
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == FILL_VALUE * FILL_VALUE).all()
        if c_d is not None:
            hip.hipFree(c_d)
        hip.hipGraphExecDestroy(exe)
        hip.hipGraphDestroy(graph)
    finally:
        hip.hipFree(a_d)
        hip.hipFree(b_d)


@pytest.mark.parametrize("mode_thread", MODES)
@pytest.mark.parametrize("mode_main", MODES)
def test_Unit_hipThreadExchangeStreamCaptureMode_Positive_Functional(mod, res, mode_main, mode_thread):
    stream = res.stream()
    graph_launch_with_mode(mod, res, stream, mode_main)
    run_threads(lambda: graph_launch_with_mode(mod, res, stream, mode_thread))


@pytest.mark.parametrize("mode", [-1, 2 ** 31 - 1, int(hip.hipStreamCaptureModeRelaxed) + 1],
                         ids=["minus_1", "INT_MAX", "Relaxed_plus_1"])
def test_Unit_hipThreadExchangeStreamCaptureMode_Negative_Parameters(mod, res, mode):
    # "Pass Mode as nullptr" has no Python form (the mode is passed and returned by value)
    expect_error(E.hipErrorInvalidValue, hip.hipThreadExchangeStreamCaptureMode, mode)
