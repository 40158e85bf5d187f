"""hipMemGetAddressRange: the base and size of a pinned host, device or pitched allocation from a
pointer inside it, and hipErrorNotFound for a null pointer or one past the allocation."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.common import K_PAGE_SIZE

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemGetAddressRange.cc"


# "Device address range" GENERATEs the allocation kind: hipMalloc and hipMallocManaged.
@pytest.mark.parametrize("offset", [0, 20, 40, 60, 80])
@pytest.mark.parametrize("allocation_size", [K_PAGE_SIZE // 2, K_PAGE_SIZE, K_PAGE_SIZE * 2])
@pytest.mark.parametrize("section", ["Host address range", "Device address range-hipMalloc",
                                     "Device address range-hipMallocManaged", "Pitch address range"])
def test_Unit_hipMemGetAddressRange_Positive(platform, section, allocation_size, offset):
    if section == "Host address range":
        ptr, size = hip.hipHostMalloc(allocation_size), allocation_size
    elif section == "Device address range-hipMalloc":
        ptr, size = hip.hipMalloc(allocation_size), allocation_size
    elif section == "Device address range-hipMallocManaged":
        ptr, size = hip.hipMallocManaged(allocation_size), allocation_size     # LinearAllocGuard's flags 1u
    else:
        ptr, pitch = hip.hipMallocPitch(32, 32)      # LinearAllocGuard2D<int>(32, 32): 128-byte rows
        size = pitch * 32
    try:
        base, mem_size = hip.hipMemGetAddressRange(ptr + 4 * offset)     # int* + offset
        assert base == ptr
        assert mem_size == size
    finally:
        (hip.hipHostFree if section == "Host address range" else hip.hipFree)(ptr)


@pytest.mark.parametrize("section", ["Device pointer is invalid", "Offset is greater than allocated size"])
def test_Unit_hipMemGetAddressRange_Negative(platform, section):
    dst = hip.hipMalloc(K_PAGE_SIZE // 2)
    try:
        ptr = 0 if section == "Device pointer is invalid" else dst + 4 * K_PAGE_SIZE
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemGetAddressRange(ptr)
        assert ei.value.error == hip.hipError_t.hipErrorNotFound
    finally:
        hip.hipFree(dst)
