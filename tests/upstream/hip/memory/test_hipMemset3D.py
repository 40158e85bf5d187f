"""hipMemset3D and hipMemset3DAsync set a 256 x 256 x 10 hipMalloc3D allocation, read back by a
hipMemcpy3D to pageable memory; a hipMemset3DAsync captured into a graph, launched and read back, for
each extent. The capture case's heights and depths are 3, 4 and 16, not upstream's 3, 4 and 100 (the
widths keep 100): hdemu captures a fill of a pitched allocation as one memset node per row, and a
height and depth of 100 make a graph of 10 000 nodes (about 3 s for each such extent). CHECK_IMAGE_SUPPORT is not applied, as in the
hipMemcpy2D port: these cases use no image memory, and on hdemu (ImageSupport 0) it would make them
return at once."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.common import run_captured

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemset3D.cc"

MEMSETVAL = 0x22
NUM_W, NUM_H, DEPTH = 256, 256, 10
#: row and depth of the capture case (upstream GENERATE(3, 4, 100) for each of row, col, dep)
CAPTURE_ROWS = CAPTURE_DEPTHS = (3, 4, 16)
CAPTURE_COLS = (3, 4, 100)


def _copy_to_host(dev_pitched, host, width, num_w, num_h, extent):
    """hipMemcpy3D device to host of ``extent`` into ``host`` (make_hipPitchedPtr(A_h, width, numW, numH))."""
    parms = hip.hipMemcpy3DParms()
    parms.srcPos = hip.make_hipPos(0, 0, 0)
    parms.dstPos = hip.make_hipPos(0, 0, 0)
    parms.dstPtr = hip.make_hipPitchedPtr(host, width, num_w, num_h)
    parms.srcPtr = dev_pitched
    parms.extent = extent
    parms.kind = hip.hipMemcpyDeviceToHost
    hip.hipMemcpy3D(parms)


def _basic_functional(is_async: bool) -> None:
    width = NUM_W                       # numW * sizeof(char)
    extent = hip.make_hipExtent(width, NUM_H, DEPTH)
    dev_pitched = hip.hipMalloc3D(extent)
    a_h = np.ones(width * NUM_H * DEPTH, dtype=np.int8)
    stream = None
    try:
        if is_async:
            stream = hip.hipStreamCreate()
            hip.hipMemset3DAsync(dev_pitched, MEMSETVAL, extent, stream)
            hip.hipStreamSynchronize(stream)
        else:
            hip.hipMemset3D(dev_pitched, MEMSETVAL, extent)
        _copy_to_host(dev_pitched, a_h, width, NUM_W, NUM_H, extent)
        bad = np.flatnonzero(a_h != MEMSETVAL)
        assert bad.size == 0, f"mismatch at index {bad[0]}: computed {a_h[bad[0]]}, memsetval {MEMSETVAL}"
    finally:
        hip.hipFree(dev_pitched.ptr)
        if stream is not None:
            hip.hipStreamDestroy(stream)


def test_Unit_hipMemset3D_BasicFunctional(platform):
    _basic_functional(False)


def test_Unit_hipMemset3DAsync_BasicFunctional(platform):
    _basic_functional(True)


@pytest.mark.parametrize("dep", CAPTURE_DEPTHS)
@pytest.mark.parametrize("col", CAPTURE_COLS)
@pytest.mark.parametrize("row", CAPTURE_ROWS)
def test_Unit_hipMemset3DAsync_capturehipMemset3DAsync(platform, row, col, dep):
    a_h = np.zeros(row * col * dep, dtype=np.int8)
    extent = hip.make_hipExtent(col, row, dep)
    a_d = hip.hipMalloc3D(extent)
    stream = hip.hipStreamCreate()
    try:
        run_captured(stream, lambda: hip.hipMemset3DAsync(a_d, ord("a"), extent, stream))
        _copy_to_host(a_d, a_h, col, col, row, extent)
        assert np.all(a_h == ord("a"))
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(a_d.ptr)
