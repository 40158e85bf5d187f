"""hipStreamQuery: idle, finished, pending and destroyed streams, and the null stream seeing the work
of a blocking stream (upstream's 500 ms delay kernels are gates)."""
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamQuery.cc"

OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady


@pytest.mark.parametrize("section", ["null", "created"])
def test_Unit_hipStreamQuery_WithNoWork(mod, section):
    if section == "null":
        assert hip.hipStreamQuery(None) == OK
    else:
        s = hip.hipStreamCreate()
        assert hip.hipStreamQuery(s) == OK
        hip.hipStreamDestroy(s)


@pytest.mark.parametrize("section", ["null", "created"])
def test_Unit_hipStreamQuery_WithFinishedWork(mod, section):
    s = None if section == "null" else hip.hipStreamCreate()
    launch(mod, "empty", [], s)
    hip.hipStreamSynchronize(s)
    assert hip.hipStreamQuery(s) == OK
    if s is not None:
        hip.hipStreamDestroy(s)


def test_Unit_hipStreamQuery_WithDestroyedStream(mod):
    s = hip.hipStreamCreate()
    hip.hipStreamDestroy(s)
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamQuery(s)
    assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed


def test_Unit_hipStreamQuery_WithUninitializedStream(mod):
    # reinterpret_cast<hipStream_t>(0xFFFF): a handle that was never a stream
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamQuery(0xFFFF)
    assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed


def test_Unit_hipStreamQuery_SubmitWorkOnStreamAndQueryNullStream(mod):
    s = hip.hipStreamCreate()
    with Gate(mod) as g:
        assert hip.hipStreamQuery(None) == OK
        g.launch(s)
        assert hip.hipStreamQuery(None) == NOT_READY
        g.open()
        hip.hipDeviceSynchronize()
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamQuery_NullStreamQuery(mod):
    with Gate(mod) as g:
        assert hip.hipStreamQuery(None) == OK
        g.launch(None)
        assert hip.hipStreamQuery(None) == NOT_READY
        g.open()
        hip.hipStreamSynchronize(None)


def test_Unit_hipStreamQuery_WithPendingWork(mod):
    s = hip.hipStreamCreate()
    with Gate(mod) as g:
        g.launch(s)
        assert hip.hipStreamQuery(s) == NOT_READY
        g.open()
        hip.hipStreamSynchronize(s)
        assert hip.hipStreamQuery(s) == OK
    hip.hipStreamDestroy(s)
