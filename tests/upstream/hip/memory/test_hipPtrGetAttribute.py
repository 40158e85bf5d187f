"""hipPointerGetAttribute of hipMalloc, hipHostMalloc and hipMallocManaged memory: device and host
pointers of the base, an inner byte and the last byte, memory types, IS_MANAGED, the device ordinal seen
from another device, MAPPED, the range's start and size, and distinct buffer ids."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipPtrGetAttribute.cc"

PA = hip.hipPointer_attribute


@pytest.mark.xfail(strict=True, reason="hdemu: HIP_POINTER_ATTRIBUTE_RANGE_SIZE of hipMalloc(1000000) is 1000192 "
                   "(the size rounded up to 256 bytes; CLR gives the size asked for, 1000000)")
def test_Unit_hipPtrGetAttribute_Simple(platform):
    hip.hipSetDevice(0)
    n = 1000000
    nbytes = n                              # N * sizeof(char)
    num_devices = hip.hipGetDeviceCount()
    a_d = hip.hipMalloc(nbytes)
    a_pinned_h = hip.hipHostMalloc(nbytes, hip.hipHostMallocDefault)
    a_hmm = hip.hipMallocManaged(nbytes)
    try:
        free, total = hip.hipMemGetInfo()
        assert free + nbytes <= total

        # device memory (hipMalloc), with pointer arithmetic and the last byte
        ptr1 = hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, a_d)
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, a_d + 100) == ptr1 + 100
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, a_d + nbytes - 1) == \
            ptr1 + nbytes - 1

        # device-visible host memory (hipHostMalloc)
        ptr1 = hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER, a_pinned_h)
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER, a_pinned_h + 100) == ptr1 + 100
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER, a_pinned_h + nbytes - 1) == \
            ptr1 + nbytes - 1

        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, a_d) == hip.hipMemoryTypeDevice
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, a_pinned_h) == hip.hipMemoryTypeHost

        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED, a_hmm) == 1
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED, a_pinned_h) == 0

        if num_devices > 1 and hip.hipDeviceCanAccessPeer(1, 0) == 1:
            hip.hipSetDevice(1)
            assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a_d) == 0

        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_MAPPED, a_d) == 1
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, a_d + 2) == a_d
        assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_RANGE_SIZE, a_d) == nbytes

        buf_id1 = hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_BUFFER_ID, a_d)
        buf_id2 = hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_BUFFER_ID, a_pinned_h)
        assert buf_id1 != buf_id2
    finally:
        hip.hipSetDevice(0)
        hip.hipFree(a_d)
        hip.hipHostFree(a_pinned_h)
        hip.hipFree(a_hmm)
