"""hipHostGetDevicePointer: a null host pointer, memory that is not pinned and non-zero flags are
hipErrorInvalidValue (hipErrorNotSupported on a device that cannot map host memory); the device pointer
of hipHostMalloc memory is not null, and a kernel's write through it is seen by the host. The "Nullptr
as device" SECTION (a null out-pointer) has no Python form (the device pointer is the return value); the
"Set the value on device - by hipHostRegister" SECTION needs hipHostRegister (not in hdemu) and is left
out."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import host_address, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostGetDevicePointer.cc"


def _can_map_host_memory() -> bool:
    """DeviceAttributesSupport(0, hipDeviceAttributeCanMapHostMemory)."""
    return hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeCanMapHostMemory, 0) != 0


def _expect_invalid_value(host_ptr, flags) -> None:
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostGetDevicePointer(host_ptr, flags)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("section", ["Nullptr as host", "Non pinned memory as host", "Flags non-zero"])
def test_Unit_hipHostGetDevicePointer_Negative(platform, section):
    h_ptr = hip.hipHostMalloc(4)
    try:
        if not _can_map_host_memory():
            with pytest.raises(hip.HipError) as ei:
                hip.hipHostGetDevicePointer(h_ptr, 0)
            assert ei.value.error == hip.hipError_t.hipErrorNotSupported
            return
        if section == "Nullptr as host":
            _expect_invalid_value(None, 0)
        elif section == "Non pinned memory as host":
            malloced = np.zeros(1, dtype=np.int32)          # malloc(sizeof(*hPtr))
            _expect_invalid_value(host_address(malloced), 0)
        else:
            _expect_invalid_value(h_ptr, 1)
    finally:
        hip.hipHostFree(h_ptr)


# "Set the value on device - by hipHostRegister" needs hipHostRegister / hipHostUnregister (not in hdemu).
def test_Unit_hipHostGetDevicePointer_UseCase(kmod):
    if not _can_map_host_memory():
        pytest.skip("Device does not support mapping host memory")
    h_ptr = hip.hipHostMalloc(4)
    value = 10
    try:
        d_ptr = hip.hipHostGetDevicePointer(h_ptr, 0)
        assert d_ptr
        launch(kmod, "set_value", 1, 1, [d_ptr, value, 1])      # set<int><<<1, 1>>>(dPtr, value)
        hip.hipDeviceSynchronize()
        assert hip.host_array(h_ptr, np.int32, 1)[0] == value
    finally:
        hip.hipHostFree(h_ptr)
