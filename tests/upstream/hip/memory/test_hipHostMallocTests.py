"""hipHostMalloc argument validation: an impossible size, all flag bits, a zero size and coherent together
with non-coherent. (The "Pass ptr as nullptr" SECTION is a null out-pointer: no Python form.)"""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostMallocTests.cc"

ALLOC_SIZE = 1000
HIP_HOST_MALLOC_COHERENT, HIP_HOST_MALLOC_NON_COHERENT = 0x40000000, 0x80000000


def _expect(error, *args):
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostMalloc(*args)
    assert ei.value.error == hip.hipError_t[error], ei.value


@pytest.mark.parametrize("section", ["Size as max(size_t)", "Flags as max(uint)",
                                     "Pass size as zero and check ptr reset",
                                     "Pass hipHostMallocCoherent and hipHostMallocNonCoherent simultaneously"])
def test_Unit_hipHostMalloc_ArgValidation(platform, section):
    if section == "Size as max(size_t)":
        _expect("hipErrorMemoryAllocation", 2**64 - 1)
    elif section == "Flags as max(uint)":
        _expect("hipErrorInvalidValue", ALLOC_SIZE, 2**32 - 1)
    elif section == "Pass size as zero and check ptr reset":
        ptr = hip.hipHostMalloc(0)
        assert not ptr
    else:
        _expect("hipErrorInvalidValue", ALLOC_SIZE, HIP_HOST_MALLOC_COHERENT | HIP_HOST_MALLOC_NON_COHERENT)
