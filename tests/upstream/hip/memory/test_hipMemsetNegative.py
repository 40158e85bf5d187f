"""hipMemset, hipMemsetAsync and hipMemsetD32/D16/D8[Async] refuse a null, a pageable host and an
out-of-bounds destination (hipErrorInvalidValue); hipMemset2D[Async] a null, pageable host or
out-of-bounds destination, a pitch under the width and a width over the pitch; hipMemset3D[Async] a zero
pitched pointer, a null or pageable host ``ptr``, a pitch under the width, a maximal width, height or
depth, a width over the pitch and a region past its allocation (an empty extent there succeeds). The
"Uninitialized ..." SECTIONs (an indeterminate pointer) have no Python form;
Unit_hipMemset_Negative_OutOfBoundsSize has no body on AMD upstream, and the "Invalid height" /
"Invalid depth" SECTIONs are left out on AMD upstream (EXSWCPHIPT-52), so here. CHECK_IMAGE_SUPPORT is
not applied, as in the hipMemcpy2D port: these cases use no image memory, and on hdemu (ImageSupport 0)
it would make each of them return at once."""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetNegative.cc"

MEMSET_VAL = 0x42
VALID_EXTENT = (184, 57, 16)                 # validExtent
WIDTH, HEIGHT = VALID_EXTENT[:2]
SIZE_MAX = 2**64 - 1


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


def _test_hip_memset_2d_apis(dst, pitch, value, width, height, expected="hipErrorInvalidValue"):
    for fn, args in [(hip.hipMemset2D, (dst, pitch, value, width, height)),
                     (hip.hipMemset2DAsync, (dst, pitch, value, width, height, None))]:
        with pytest.raises(hip.HipError) as ei:
            fn(*args)
        assert ei.value.error == hip.hipError_t[expected], fn.__name__


def _test_hip_memset_3d_apis(pitched, value, extent, expected="hipErrorInvalidValue"):
    for fn, args in [(hip.hipMemset3D, (pitched, value, extent)),
                     (hip.hipMemset3DAsync, (pitched, value, extent, None))]:
        if expected == "hipSuccess":
            fn(*args)
            continue
        with pytest.raises(hip.HipError) as ei:
            fn(*args)
        assert ei.value.error == hip.hipError_t[expected], (fn.__name__, pitched, extent)


def _valid_extent():
    return hip.hipExtent(*VALID_EXTENT)


@pytest.mark.parametrize("section", ["Nullptr as Dst", "Host Pointer as Dst"])
def test_Unit_hipMemset2D_Negative_InvalidPtr(platform, section):
    dst = None if section == "Nullptr as Dst" else np.zeros(HEIGHT * WIDTH, dtype=np.int8)
    a_d, pitch_a = hip.hipMallocPitch(WIDTH, HEIGHT)
    try:
        _test_hip_memset_2d_apis(dst, pitch_a, MEMSET_VAL, WIDTH, HEIGHT)
    finally:
        hip.hipFree(a_d)


# "Invalid height" is left out on AMD upstream (EXSWCPHIPT-52).
@pytest.mark.parametrize("section", ["Invalid Pitch", "Invalid Width"])
def test_Unit_hipMemset2D_Negative_InvalidSizes(platform, section):
    dst, real_pitch = hip.hipMallocPitch(WIDTH, HEIGHT)
    try:
        if section == "Invalid Pitch":
            _test_hip_memset_2d_apis(dst, 1, MEMSET_VAL, WIDTH, HEIGHT)
        else:
            _test_hip_memset_2d_apis(dst, real_pitch, MEMSET_VAL, real_pitch + 1, HEIGHT)
    finally:
        hip.hipFree(dst)


def test_Unit_hipMemset2D_Negative_OutOfBoundsPtr(platform):
    dst, real_pitch = hip.hipMallocPitch(WIDTH, HEIGHT)
    try:
        _test_hip_memset_2d_apis(dst + real_pitch * HEIGHT + 1, real_pitch, MEMSET_VAL, WIDTH, HEIGHT)
    finally:
        hip.hipFree(dst)


# "Uninitialized PitchedDevPtr" has no Python form (a hipPitchedPtr() is the zero-initialized one).
def test_Unit_hipMemset3D_Negative_InvalidPtr(platform):
    _test_hip_memset_3d_apis(hip.hipPitchedPtr(), MEMSET_VAL, _valid_extent())


@pytest.mark.parametrize("section", ["Nullptr Dst", "Host Pointer as Dst", "Invalid Pitch"])
def test_Unit_hipMemset3D_Negative_ModifiedPtr(platform, section):
    pitched = hip.hipMalloc3D(_valid_extent())
    allocated_memory = pitched.ptr
    try:
        if section == "Nullptr Dst":
            pitched.ptr = None
        elif section == "Host Pointer as Dst":
            pitched.ptr = np.zeros(int(np.prod(VALID_EXTENT)), dtype=np.int8)
        else:
            pitched.pitch = 1
        _test_hip_memset_3d_apis(pitched, MEMSET_VAL, _valid_extent())
    finally:
        hip.hipFree(allocated_memory)


# "Invalid height" and "Invalid depth" are left out on AMD upstream (EXSWCPHIPT-52); "Max Depth" is
# left out on NVIDIA only.
@pytest.mark.parametrize("section", ["Max Width", "Max Height", "Max Depth", "Invalid Width"])
def test_Unit_hipMemset3D_Negative_InvalidSizes(platform, section):
    pitched = hip.hipMalloc3D(_valid_extent())
    try:
        invalid = _valid_extent()
        if section == "Max Width":
            invalid.width = SIZE_MAX
        elif section == "Max Height":
            invalid.height = SIZE_MAX
        elif section == "Max Depth":
            invalid.depth = SIZE_MAX
        else:
            invalid.width = pitched.pitch + 1
        _test_hip_memset_3d_apis(pitched, MEMSET_VAL, invalid)
    finally:
        hip.hipFree(pitched.ptr)


@pytest.mark.parametrize("section", ["Extent Equal to 0", "Valid Extent"])
def test_Unit_hipMemset3D_Negative_OutOfBounds(platform, section):
    pitched = hip.hipMalloc3D(_valid_extent())
    try:
        _width, height, depth = VALID_EXTENT
        out_of_bounds = hip.hipPitchedPtr(pitched.ptr + pitched.pitch * height * depth + 1, pitched.pitch,
                                          pitched.xsize, pitched.ysize)
        if section == "Extent Equal to 0":
            _test_hip_memset_3d_apis(out_of_bounds, MEMSET_VAL, hip.hipExtent(0, 0, 0), "hipSuccess")
        else:
            _test_hip_memset_3d_apis(out_of_bounds, MEMSET_VAL, _valid_extent())
    finally:
        hip.hipFree(pitched.ptr)
