"""hipMalloc: sizes and their 256-byte alignment, a zero size, and a size no device can hold."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMalloc.cc"

PAGE_SIZE = 4096


@pytest.mark.parametrize("alloc_size", [10, PAGE_SIZE // 2, PAGE_SIZE, PAGE_SIZE * 3 // 2, PAGE_SIZE * 2])
def test_Unit_hipMalloc_Positive_Basic(platform, alloc_size):
    ptr = hip.hipMalloc(alloc_size)
    assert ptr
    assert ptr % 256 == 0
    hip.hipFree(ptr)


def test_Unit_hipMalloc_Positive_Zero_Size(platform):
    assert not hip.hipMalloc(0)


def test_Unit_hipMalloc_Positive_Alignment(platform):
    ptr1 = hip.hipMalloc(1)
    ptr2 = hip.hipMalloc(10)
    assert ptr1 % 256 == 0
    assert ptr2 % 256 == 0
    hip.hipFree(ptr1)
    hip.hipFree(ptr2)


# SECTION "ptr == nullptr" (a null out-pointer) has no Python form.
def test_Unit_hipMalloc_Negative_Parameters(platform):
    with pytest.raises(hip.HipError) as ei:         # size == max size_t
        hip.hipMalloc(2**64 - 1)
    assert ei.value.error == hip.hipError_t.hipErrorOutOfMemory
