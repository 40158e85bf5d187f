"""hipStreamDestroy: plain, twice, the null stream, and with finished or pending work."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamDestroy.cc"

N = 10


def test_Unit_hipStreamDestroy_Default(mod):
    s = hip.hipStreamCreate()
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamDestroy_Negative_DoubleDestroy(mod):
    s = hip.hipStreamCreate()
    hip.hipStreamDestroy(s)
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamDestroy(s)
    assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed


def test_Unit_hipStreamDestroy_Negative_NullStream(mod):
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamDestroy(None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle


def _check_data_set(d):
    hip.hipStreamSynchronize(None)
    host = np.zeros(N, np.int32)
    hip.hipMemcpy(host, d, host.nbytes, hip.hipMemcpyDeviceToHost)
    assert (host == 1).all(), host


def test_Unit_hipStreamDestroy_WithFinishedWork(mod):
    s = hip.hipStreamCreate()
    d = hip.hipMalloc(4 * N)
    hip.hipMemset(d, 0, 4 * N)
    launch(mod, "set_value", [d, 1, N], s, n=N)      # setToOne
    _check_data_set(d)
    hip.hipStreamDestroy(s)
    hip.hipFree(d)


@pytest.mark.parametrize("section", ["without_query", "with_query"])
def test_Unit_hipStreamDestroy_WithPendingWork(mod, section):
    s = hip.hipStreamCreate()
    d = hip.hipMalloc(4 * N)
    hip.hipMemset(d, 0, 4 * N)
    with Gate(mod) as g:
        g.launch(s)
        launch(mod, "set_value", [d, 1, N], s, n=N)
        if section == "with_query":
            assert hip.hipStreamQuery(s) == hip.hipError_t.hipErrorNotReady
            assert hip.hipStreamQuery(None) == hip.hipError_t.hipErrorNotReady
        g.open()        # upstream's delay ends by itself: the destroyed stream's work still completes
        hip.hipStreamDestroy(s)
        _check_data_set(d)
    hip.hipFree(d)
