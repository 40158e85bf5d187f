"""hipFreeAsync: a null pointer is hipErrorInvalidValue, an invalid stream handle
hipErrorInvalidHandle, and a second free of the same block hipErrorInvalidValue."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipFreeAsync.cc"
E = hip.hipError_t


@pytest.mark.parametrize("section", ["dev_ptr is nullptr", "Invalid stream handle", "Double free"])
def test_Unit_hipFreeAsync_Negative_Parameters(platform, section):
    hip.hipSetDevice(0)
    stream = hip.hipStreamCreate()
    try:
        if section == "dev_ptr is nullptr":
            with pytest.raises(hip.HipError) as ei:
                hip.hipFreeAsync(0, stream)
            assert ei.value.error == E.hipErrorInvalidValue
            return
        p = hip.hipMallocAsync(1024, stream)
        hip.hipStreamSynchronize(stream)
        if section == "Invalid stream handle":
            with pytest.raises(hip.HipError) as ei:
                hip.hipFreeAsync(p, 2**64 - 1)          # reinterpret_cast<hipStream_t>(-1)
            assert ei.value.error == E.hipErrorInvalidHandle
            hip.hipFreeAsync(p, stream)
            hip.hipStreamSynchronize(stream)
        else:
            hip.hipFreeAsync(p, stream)
            hip.hipStreamSynchronize(stream)
            with pytest.raises(hip.HipError) as ei:
                hip.hipFreeAsync(p, stream)
            assert ei.value.error == E.hipErrorInvalidValue
    finally:
        hip.hipStreamDestroy(stream)
