"""hipEventRecord: events with each flag (or none) time a kernel on the null stream; no event, and an
event of one device recorded on another."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEventRecord.cc"

N = 1024
FLAG_CASES = ["hipEventDefault", "hipEventBlockingSync", "hipEventDisableTiming", "hipEventReleaseToDevice",
              "hipEventReleaseToSystem"]


@pytest.mark.parametrize("flags", FLAG_CASES + ["WithoutFlags"])
def test_Unit_hipEventRecord(mod, flags):
    a_h = np.arange(N, dtype=np.float32) + np.float32(3.146)
    b_h = np.arange(N, dtype=np.float32) + np.float32(1.618)
    c_h = np.zeros(N, np.float32)
    a_d, b_d, c_d = (hip.hipMalloc(4 * N) for _ in range(3))
    if flags == "WithoutFlags":
        start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    else:
        start = hip.hipEventCreateWithFlags(getattr(hip, flags))
        stop = hip.hipEventCreateWithFlags(getattr(hip, flags))
    hip.hipMemcpy(a_d, a_h, 4 * N, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(b_d, b_h, 4 * N, hip.hipMemcpyHostToDevice)
    launch(mod, "vectorADD", [a_d, b_d, c_d, N], None, n=N)
    hip.hipDeviceSynchronize()
    hip.hipEventRecord(start, None)
    launch(mod, "vectorADD", [a_d, b_d, c_d, N], None, n=N)
    assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
    hip.hipEventRecord(stop, None)
    hip.hipEventSynchronize(stop)
    if flags != "hipEventDisableTiming":
        assert hip.hipEventElapsedTime(start, stop) > 0.0
    hip.hipMemcpy(c_h, c_d, 4 * N, hip.hipMemcpyDeviceToHost)
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)
    assert np.array_equal(c_h, a_h + b_h)
    for p in (a_d, b_d, c_d):
        hip.hipFree(p)


@pytest.mark.parametrize("section", ["nullptr_event", "different_devices"])
def test_Unit_hipEventRecord_Negative(mod, section):
    if section == "nullptr_event":
        with pytest.raises(hip.HipError) as ei:
            hip.hipEventRecord(None, None)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle
        return
    assert hip.hipGetDeviceCount() > 1
    hip.hipSetDevice(0)
    start = hip.hipEventCreate()
    hip.hipSetDevice(1)
    with pytest.raises(hip.HipError) as ei:
        hip.hipEventRecord(start, None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidHandle
    hip.hipEventDestroy(start)
