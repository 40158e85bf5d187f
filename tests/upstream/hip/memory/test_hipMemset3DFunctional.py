"""hipMemset3D and hipMemset3DAsync: an extent with a zero width, height or depth (or all three) succeeds
and leaves the buffer as it was; the maximal unsigned char value, on a created stream and on
hipStreamPerThread; a random slice of a 32-cube and a 10-cube in the middle of a 30-cube set through a
pitched pointer moved to them, the rest keeping the first value. Read back by hipMemcpy3D to pageable
memory. CHECK_IMAGE_SUPPORT is not applied, as in the hipMemcpy2D port: these cases use no image memory,
and on hdemu (ImageSupport 0) it would make each of them return at once."""
import random

import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemset3DFunctional.cc"

MEMSETVAL, TESTVAL = 1, 2
NUMH_EXT, NUMW_EXT, DEPTH_EXT = 256, 100, 10
NUMH_MAX, NUMW_MAX, DEPTH_MAX = 256, 256, 10
SIZE_S = 32                                 # ZSIZE_S, YSIZE_S, XSIZE_S
SIZE_P = 30                                 # ZSIZE_P, YSIZE_P, XSIZE_P
POS_START, SET_LEN, POS_END = 10, 10, 19    # [XYZ]POS_START, [XYZ]SET_LEN, [XYZ]POS_END


def _copy_to_host(dev_pitched, host, pitch, xsize, ysize, extent):
    parms = hip.hipMemcpy3DParms()
    parms.srcPos = hip.make_hipPos(0, 0, 0)
    parms.dstPos = hip.make_hipPos(0, 0, 0)
    parms.dstPtr = hip.make_hipPitchedPtr(host, pitch, xsize, ysize)
    parms.srcPtr = dev_pitched
    parms.extent = extent
    parms.kind = hip.hipMemcpyDeviceToHost
    hip.hipMemcpy3D(parms)


def _memset(is_async: bool, pitched, value, extent) -> None:
    """hipMemset3D, or hipMemset3DAsync on a created stream then synchronised."""
    if not is_async:
        hip.hipMemset3D(pitched, value, extent)
        return
    stream = hip.hipStreamCreate()
    try:
        hip.hipMemset3DAsync(pitched, value, extent, stream)
        hip.hipStreamSynchronize(stream)
    finally:
        hip.hipStreamDestroy(stream)


def _test_memset_with_extent(is_async: bool, tst_extent) -> None:
    """testMemsetWithExtent: MEMSETVAL over the whole extent, then TESTVAL over ``tst_extent`` (empty)."""
    width = NUMW_EXT
    extent = hip.make_hipExtent(width, NUMH_EXT, DEPTH_EXT)
    a_h = np.zeros(width * NUMH_EXT * DEPTH_EXT, dtype=np.int8)
    dev_pitched = hip.hipMalloc3D(extent)
    try:
        if is_async:
            stream = hip.hipStreamCreate()
            try:
                hip.hipMemset3DAsync(dev_pitched, MEMSETVAL, extent, stream)
                hip.hipMemset3DAsync(dev_pitched, TESTVAL, tst_extent, stream)
                hip.hipStreamSynchronize(stream)
            finally:
                hip.hipStreamDestroy(stream)
        else:
            hip.hipMemset3D(dev_pitched, MEMSETVAL, extent)
            hip.hipMemset3D(dev_pitched, TESTVAL, tst_extent)
        _copy_to_host(dev_pitched, a_h, width, NUMW_EXT, NUMH_EXT, extent)
        bad = np.flatnonzero(a_h != MEMSETVAL)
        assert bad.size == 0, f"index {bad[0]}: computed {a_h[bad[0]]:#x}, memsetval {MEMSETVAL:#x}"
    finally:
        hip.hipFree(dev_pitched.ptr)


EXTENT_SECTIONS = {"Memset with extent width(0)": (0, NUMH_EXT, DEPTH_EXT),
                   "Memset with extent height(0)": (NUMW_EXT, 0, DEPTH_EXT),
                   "Memset with extent depth(0)": (NUMW_EXT, NUMH_EXT, 0),
                   "Memset with extent width,height,depth as 0": (0, 0, 0)}


@pytest.mark.parametrize("section", list(EXTENT_SECTIONS))
def test_Unit_hipMemset3D_MemsetWithExtent(platform, section):
    _test_memset_with_extent(False, hip.make_hipExtent(*EXTENT_SECTIONS[section]))


@pytest.mark.parametrize("section", list(EXTENT_SECTIONS))
def test_Unit_hipMemset3DAsync_MemsetWithExtent(platform, section):
    _test_memset_with_extent(True, hip.make_hipExtent(*EXTENT_SECTIONS[section]))


def _test_memset_max_value(section: str | None) -> None:
    """testMemsetMaxValue: ``section`` None is hipMemset3D, else the stream of hipMemset3DAsync."""
    memsetval = np.iinfo(np.uint8).max
    width = NUMW_MAX
    extent = hip.make_hipExtent(width, NUMH_MAX, DEPTH_MAX)
    a_h = np.zeros(width * NUMH_MAX * DEPTH_MAX, dtype=np.uint8)
    dev_pitched = hip.hipMalloc3D(extent)
    try:
        if section == "Using user created stream":
            _memset(True, dev_pitched, memsetval, extent)
        elif section == "Using hipStreamPerThread":
            hip.hipMemset3DAsync(dev_pitched, memsetval, extent, hip.hipStreamPerThread)
            hip.hipStreamSynchronize(hip.hipStreamPerThread)
        else:
            hip.hipMemset3D(dev_pitched, memsetval, extent)
        _copy_to_host(dev_pitched, a_h, width, NUMW_MAX, NUMH_MAX, extent)
        bad = np.flatnonzero(a_h != memsetval)
        assert bad.size == 0, f"index {bad[0]}: computed {a_h[bad[0]]:#x}, memsetval {memsetval:#x}"
    finally:
        hip.hipFree(dev_pitched.ptr)


def test_Unit_hipMemset3D_MemsetMaxValue(platform):
    _test_memset_max_value(None)


@pytest.mark.parametrize("section", ["Using user created stream", "Using hipStreamPerThread"])
def test_Unit_hipMemset3DAsync_MemsetMaxValue(platform, section):
    _test_memset_max_value(section)


def _seek_and_set_3d_array_slice(is_async: bool) -> None:
    """seekAndSet3DArraySlice: TESTVAL over one random slice (upstream: seeded by the time) of a
    MEMSETVAL 32-cube, through a pitched pointer to that slice."""
    array3d = np.zeros((SIZE_S, SIZE_S, SIZE_S), dtype=np.int8)           # [z][y][x]
    extent = hip.make_hipExtent(SIZE_S, SIZE_S, SIZE_S)
    dev_pitched = hip.hipMalloc3D(extent)
    try:
        hip.hipMemset3D(dev_pitched, MEMSETVAL, extent)
        slice_index = random.randrange(SIZE_S)
        pitch = dev_pitched.pitch
        slice_pitch = pitch * extent.height
        dev_ptr_slice = dev_pitched.ptr + slice_index * slice_pitch
        extent_slice = hip.make_hipExtent(SIZE_S, SIZE_S, 1)
        mod_pitched = hip.make_hipPitchedPtr(dev_ptr_slice, pitch, SIZE_S, SIZE_S)
        _memset(is_async, mod_pitched, TESTVAL, extent_slice)
        _copy_to_host(dev_pitched, array3d, SIZE_S, SIZE_S, SIZE_S, extent)
        expected = np.full_like(array3d, MEMSETVAL)
        expected[slice_index] = TESTVAL
        bad = np.argwhere(array3d != expected)
        assert bad.size == 0, f"memset3d for sliceindex {slice_index}: mismatch at (z, y, x) {tuple(bad[0])}"
    finally:
        hip.hipFree(dev_pitched.ptr)


def _seek_and_set_3d_array_portion(is_async: bool) -> None:
    """seekAndSet3DArrayPortion: TESTVAL over the 10-cube at (10, 10, 10) of a MEMSETVAL 30-cube,
    through a pitched pointer moved to it."""
    array3d = np.zeros((SIZE_P, SIZE_P, SIZE_P), dtype=np.int8)           # [z][y][x]
    extent = hip.make_hipExtent(SIZE_P, SIZE_P, SIZE_P)
    dev_pitched = hip.hipMalloc3D(extent)
    try:
        hip.hipMemset3D(dev_pitched, MEMSETVAL, extent)
        pitch = dev_pitched.pitch
        slice_pitch = pitch * extent.height
        dev_ptr_indexed = dev_pitched.ptr + POS_START * slice_pitch + POS_START * pitch + POS_START
        mod_pitched = hip.make_hipPitchedPtr(dev_ptr_indexed, pitch, SIZE_P, SIZE_P)
        set_extent = hip.make_hipExtent(SET_LEN, SET_LEN, SET_LEN)
        _memset(is_async, mod_pitched, TESTVAL, set_extent)
        _copy_to_host(dev_pitched, array3d, SIZE_P, SIZE_P, SIZE_P, extent)
        expected = np.full_like(array3d, MEMSETVAL)
        portion = slice(POS_START, POS_END + 1)
        expected[portion, portion, portion] = TESTVAL
        bad = np.argwhere(array3d != expected)
        assert bad.size == 0, f"mismatch at (z, y, x) {tuple(bad[0])}: {array3d[tuple(bad[0])]}"
    finally:
        hip.hipFree(dev_pitched.ptr)


def test_Unit_hipMemset3D_SeekSetSlice(platform):
    _seek_and_set_3d_array_slice(False)


def test_Unit_hipMemset3DAsync_SeekSetSlice(platform):
    _seek_and_set_3d_array_slice(True)


def test_Unit_hipMemset3D_SeekSetArrayPortion(platform):
    _seek_and_set_3d_array_portion(False)


def test_Unit_hipMemset3DAsync_SeekSetArrayPortion(platform):
    _seek_and_set_3d_array_portion(True)
