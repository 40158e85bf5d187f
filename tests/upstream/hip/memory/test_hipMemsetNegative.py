"""hipMemset, hipMemsetAsync and hipMemsetD32/D16/D8[Async] refuse a null, a pageable host and an
out-of-bounds destination (hipErrorInvalidValue). 1-D parts only: the hipMemset2D / hipMemset3D cases
need hipMallocPitch / hipMalloc3D / hipMemset2D / hipMemset3D (not in hdemu). The "Uninitialized Dst"
SECTION (an indeterminate pointer) has no Python form; Unit_hipMemset_Negative_OutOfBoundsSize has no
body on AMD upstream."""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetNegative.cc"

MEMSET_VAL = 0x42
WIDTH = 184                                  # validExtent.width


def _test_hip_memset_apis(dst, value, size_bytes, expected="hipErrorInvalidValue"):
    calls = [(hip.hipMemset, (dst, value, size_bytes)), (hip.hipMemsetAsync, (dst, value, size_bytes, None)),
             (hip.hipMemsetD32, (dst, value, size_bytes)), (hip.hipMemsetD32Async, (dst, value, size_bytes, None)),
             (hip.hipMemsetD16, (dst, value, size_bytes)), (hip.hipMemsetD16Async, (dst, value, size_bytes, None)),
             (hip.hipMemsetD8, (dst, value, size_bytes)), (hip.hipMemsetD8Async, (dst, value, size_bytes, None))]
    for fn, args in calls:
        with pytest.raises(hip.HipError) as ei:
            fn(*args)
        assert ei.value.error == hip.hipError_t[expected], fn.__name__


@pytest.mark.parametrize("section", ["Nullptr as dst", "Host Pointer as Dst"])
def test_Unit_hipMemset_Negative_InvalidPtr(platform, section):
    dst = None if section == "Nullptr as dst" else np.zeros(WIDTH, dtype=np.int8)
    _test_hip_memset_apis(dst, MEMSET_VAL, WIDTH)


def test_Unit_hipMemset_Negative_OutOfBoundsPtr(platform):
    dst = hip.hipMalloc(WIDTH)
    _test_hip_memset_apis(dst + WIDTH + 1, MEMSET_VAL, WIDTH)
    hip.hipFree(dst)
