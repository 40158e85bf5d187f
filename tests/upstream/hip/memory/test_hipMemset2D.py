"""hipMemset2D and hipMemset2DAsync set a 256 x 256 hipMallocPitch allocation, read back by hipMemcpy2D to
pageable memory; a part of an allocation set for each (width, height, memset width, memset height) of the
table, zero widths and heights included; a hipMemset2DAsync captured into a graph, launched and read back,
for each row and column count. CHECK_IMAGE_SUPPORT is not applied, as in the hipMemcpy2D port: these cases
use no image memory, and on hdemu (ImageSupport 0) it would make them return at once."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.common import run_captured

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemset2D.cc"

NUM_H = NUM_W = 256
#: (width2D, height2D, memsetWidth, memsetHeight)
TABLE_ITEMS = [(20, 20, 20, 20), (10, 10, 4, 4), (100, 100, 20, 40), (256, 256, 39, 19), (100, 100, 20, 0),
               (100, 100, 0, 20), (100, 100, 0, 0)]


def _basic_functional(memsetval: int, is_async: bool) -> None:
    width = NUM_W                           # numW * sizeof(char)
    a_d, pitch_a = hip.hipMallocPitch(width, NUM_H)
    a_h = np.ones(width * NUM_H, dtype=np.int8)
    stream = None
    try:
        if is_async:
            stream = hip.hipStreamCreate()
            hip.hipMemset2DAsync(a_d, pitch_a, memsetval, NUM_W, NUM_H, stream)
            hip.hipStreamSynchronize(stream)
        else:
            hip.hipMemset2D(a_d, pitch_a, memsetval, NUM_W, NUM_H)
        hip.hipMemcpy2D(a_h, width, a_d, pitch_a, NUM_W, NUM_H, hip.hipMemcpyDeviceToHost)
        bad = np.flatnonzero(a_h != memsetval)
        assert bad.size == 0, f"mismatch at index {bad[0]}: computed {a_h[bad[0]]}, memsetval {memsetval}"
    finally:
        hip.hipFree(a_d)
        if stream is not None:
            hip.hipStreamDestroy(stream)


def test_Unit_hipMemset2D_BasicFunctional(platform):
    _basic_functional(0x24, False)


def test_Unit_hipMemset2DAsync_BasicFunctional(platform):
    _basic_functional(0x26, True)


@pytest.mark.parametrize("width2d, height2d, memset_width, memset_height", TABLE_ITEMS)
def test_Unit_hipMemset2D_UniqueWidthHeight(platform, width2d, height2d, memset_width, memset_height):
    memsetval = 0x26
    width = width2d
    a_d, pitch_a = hip.hipMallocPitch(width, height2d)
    a_h = np.full(width * height2d, ord("c"), dtype=np.int8)
    try:
        hip.hipMemset2D(a_d, pitch_a, memsetval, memset_width, memset_height)
        hip.hipMemcpy2D(a_h, width, a_d, pitch_a, width2d, height2d, hip.hipMemcpyDeviceToHost)
        part = a_h.reshape(height2d, width)[:memset_height, :memset_width]
        bad = np.argwhere(part != memsetval)
        assert bad.size == 0, f"A_h[{bad[0][0]}][{bad[0][1]}] did not match {memsetval}"
    finally:
        hip.hipFree(a_d)


@pytest.mark.parametrize("cols", [3, 4, 100])
@pytest.mark.parametrize("rows", [3, 4, 100])
def test_Unit_hipMemset2DAsync_capturehipMemset2DAsync(platform, rows, cols):
    a_h = np.full(rows * cols, ord("a"), dtype=np.int8)
    b_h = np.zeros(rows * cols, dtype=np.int8)
    stream = hip.hipStreamCreate()
    a_d, dev_pitch = hip.hipMallocPitch(cols, rows)
    try:
        hip.hipMemcpy2D(a_d, dev_pitch, a_h, cols, cols, rows, hip.hipMemcpyHostToDevice)
        hip.hipDeviceSynchronize()
        run_captured(stream, lambda: hip.hipMemset2DAsync(a_d, dev_pitch, ord("b"), cols, rows, stream),
                     sync_device=True)
        hip.hipMemcpy2D(b_h, cols, a_d, dev_pitch, cols, rows, hip.hipMemcpyDeviceToHost)
        assert np.all(b_h == ord("b"))
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(a_d)
