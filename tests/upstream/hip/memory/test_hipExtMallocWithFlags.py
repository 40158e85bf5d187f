"""hipExtMallocWithFlags: default and fine-grained device memory of any size is 256-byte aligned and
freed by hipFree, signal memory is 8 bytes; size 0 gives the null pointer; a combined flag, a size of
SIZE_MAX and signal memory of another size than 8 are errors."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipExtMallocWithFlags.cc"
E = hip.hipError_t
PAGE = 4096         # kPageSize
SIZES = [10, PAGE // 2, PAGE, PAGE * 3 // 2, PAGE * 2]
# SECTIONs "ptr == nullptr" (a null out-pointer) have no Python form.


@pytest.mark.parametrize("section,size", [("hipDeviceMallocDefault", s) for s in SIZES]
                         + [("hipDeviceMallocFinegrained", s) for s in SIZES] + [("hipMallocSignalMemory", 8)])
def test_Unit_hipExtMallocWithFlags_Positive_Basic(platform, section, size):
    if section == "hipDeviceMallocFinegrained":
        assert hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeFineGrainSupport, 0)
    ptr = hip.hipExtMallocWithFlags(size, getattr(hip, section))
    assert ptr != 0
    if section != "hipMallocSignalMemory":
        assert ptr % 256 == 0
    hip.hipFree(ptr)


@pytest.mark.parametrize("flag", ["hipDeviceMallocDefault", "hipDeviceMallocFinegrained"])
def test_Unit_hipExtMallocWithFlags_Positive_Zero_Size(platform, flag):
    assert hip.hipExtMallocWithFlags(0, getattr(hip, flag)) == 0


@pytest.mark.parametrize("flag", ["hipDeviceMallocDefault", "hipDeviceMallocFinegrained"])
def test_Unit_hipExtMallocWithFlags_Positive_Alignment(platform, flag):
    ptr1 = hip.hipExtMallocWithFlags(1, getattr(hip, flag))
    ptr2 = hip.hipExtMallocWithFlags(10, getattr(hip, flag))
    assert ptr1 % 256 == 0 and ptr2 % 256 == 0
    hip.hipFree(ptr1)
    hip.hipFree(ptr2)


_NEGATIVE = [
    ("Invalid flags", 4096, hip.hipDeviceMallocDefault | hip.hipMallocSignalMemory, E.hipErrorInvalidValue),
    ("hipDeviceMallocDefault/size == max size_t", 2**64 - 1, hip.hipDeviceMallocDefault, E.hipErrorOutOfMemory),
    ("hipDeviceMallocFinegrained/size == max size_t", 2**64 - 1, hip.hipDeviceMallocFinegrained,
     E.hipErrorOutOfMemory),
    ("hipMallocSignalMemory/size == 0", 0, hip.hipMallocSignalMemory, E.hipErrorInvalidValue),
    ("hipMallocSignalMemory/size != 8", 16, hip.hipMallocSignalMemory, E.hipErrorInvalidValue),
]


@pytest.mark.parametrize("section,size,flags,error", _NEGATIVE,
                         ids=[(p.values if hasattr(p, "values") else p)[0] for p in _NEGATIVE])
def test_Unit_hipExtMallocWithFlags_Negative_Parameters(platform, section, size, flags, error):
    with pytest.raises(hip.HipError) as ei:
        hip.hipExtMallocWithFlags(size, flags)
    assert ei.value.error == error
