"""hipLaunchHostFunc (graph folder): argument errors while a stream captures, and a host function
captured after a simple copy sequence (from the capturing thread or another thread) that checks the
copy's result at every graph launch."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import LAUNCH_ITERS, capture_simple, expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipLaunchHostFunc.cc"

E = hip.hipError_t


def host_node_callback_dummy(data):
    assert data is None


@pytest.mark.parametrize("section", ["function_null", "stream_uninitialized"])
def test_Unit_hipLaunchHostFunc_Negative_Parameters(mod, res, section):
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    # "Pass stream as nullptr" is HT_NVIDIA only
    if section == "function_null":
        expect_error(E.hipErrorInvalidValue, hip.hipLaunchHostFunc, stream, None, None)
    else:
        invalid = hip.hipStreamCreate()          # a StreamGuard's stream, destroyed when the guard goes
        hip.hipStreamDestroy(invalid)
        expect_error(E.hipErrorContextIsDestroyed, hip.hipLaunchHostFunc, invalid, host_node_callback_dummy, None)


def _captured_host_func(res, launch_host_func):
    a_h = np.zeros(1, np.float32)
    b_h = np.zeros(1, np.float32)
    a_d = res.malloc(4)
    stream = res.stream()
    failures = []

    def host_node_callback(data):
        """Upstream REQUIREs in the callback; the verdict is kept for the test's thread."""
        if data[0][0] != data[1][0]:
            failures.append(f"input {data[0][0]} != output {data[1][0]}")

    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    capture_simple(a_h, a_d, b_h, 1, stream)
    launch_host_func(stream, host_node_callback, [a_h, b_h])
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[0] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert b_h[0] == float(i)
    assert failures == []


def test_Unit_hipLaunchHostFunc_Positive_Functional(mod, res):
    _captured_host_func(res, hip.hipLaunchHostFunc)


def test_Unit_hipLaunchHostFunc_Positive_Thread(mod, res):
    def from_thread(stream, fn, data):
        errors = []

        def body():
            try:
                hip.hipLaunchHostFunc(stream, fn, data)
            except hip.HipError as exc:
                errors.append(exc)

        t = threading.Thread(target=body)
        t.start()
        t.join(30)
        assert not t.is_alive()
        assert errors == []

    _captured_host_func(res, from_thread)
