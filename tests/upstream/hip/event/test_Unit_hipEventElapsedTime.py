"""hipEventElapsedTime: no events, timing disabled, events of two devices, an unfinished stop event, and
two finished records."""
import pytest

from hostside import hip
from tests.upstream.hip.stream.stream_common import gates

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEventElapsedTime.cc"

INVALID_HANDLE = hip.hipError_t.hipErrorInvalidHandle


def _error(*events):
    with pytest.raises(hip.HipError) as ei:
        hip.hipEventElapsedTime(*events)
    return ei.value.error


def test_Unit_hipEventElapsedTime_NullCheck(mod):
    start, end = hip.hipEventCreate(), hip.hipEventCreate()
    # hipEventElapsedTime(nullptr, start, end): a nullptr out-param has no Python form
    assert _error(None, end) == INVALID_HANDLE
    assert _error(start, None) == INVALID_HANDLE
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(end)


def test_Unit_hipEventElapsedTime_DisableTiming(mod):
    start = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    stop = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    assert _error(start, stop) == INVALID_HANDLE
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)


def test_Unit_hipEventElapsedTime_DifferentDevices(mod):
    assert hip.hipGetDeviceCount() > 1
    hip.hipSetDevice(0)
    start = hip.hipEventCreate()
    hip.hipEventRecord(start, None)
    hip.hipEventSynchronize(start)
    hip.hipSetDevice(1)
    stop = hip.hipEventCreate()
    hip.hipEventRecord(stop, None)
    hip.hipEventSynchronize(stop)
    assert _error(start, stop) == INVALID_HANDLE
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)


def test_Unit_hipEventElapsedTime_NotReady_Negative(mod):
    start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    with gates(mod, 1) as (g,):
        hip.hipEventRecord(start, None)
        g.launch(None)
        hip.hipEventRecord(stop, None)
        assert hip.hipEventQuery(stop) == hip.hipError_t.hipErrorNotReady
        assert _error(start, stop) == hip.hipError_t.hipErrorNotReady
        g.open()
        hip.hipStreamSynchronize(None)
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)


def test_Unit_hipEventElapsedTime(mod):
    start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    hip.hipEventRecord(start, None)
    hip.hipEventSynchronize(start)
    hip.hipEventRecord(stop, None)
    hip.hipEventSynchronize(stop)
    hip.hipEventElapsedTime(start, stop)
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)
