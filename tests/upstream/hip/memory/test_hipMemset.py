"""hipMemset / hipMemsetD8 / D16 / D32 and their Async forms at element offsets 3..0 of buffers of several
sizes, hipMemset of 1 to 3 bytes, and two async memsets repeated on one stream."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memset_common as m

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemset.cc"

# (N, memsetval, memsetD32val, memsetD16val, memsetD8val); upstream's 4 Mi and 256 Mi element rows are
# 64 Ki and 256 Ki here (the device has 32 MiB)
TABLE = [(64 * 1024, 0x42, 0xDEADBEEF, 0xDEAD, 0xDE),
         (10, 0x42, 0x101, 0x10, 0x1),
         (10013, 0x5A, 0xDEADBEEF, 0xDEAD, 0xDE),
         (256 * 1024, 0xA6, 0xCAFEBABE, 0xCAFE, 0xCA)]
# SECTION -> (api, C element type of the test, index of the value in a TABLE row)
SECTIONS = {"Memset with hipMemsetTypeDefault": ("hipMemset", np.int8, 1),
            "Memset with hipMemsetTypeD32": ("D32", np.int32, 2),
            "Memset with hipMemsetTypeD16": ("D16", np.int16, 3),
            "Memset with hipMemsetTypeD8": ("D8", np.int8, 4)}
MAX_OFFSET = 3


def _typed(value, dtype):
    """The table value converted to the test's element type, as the C++ tuple does."""
    return np.array(value, dtype=np.int64).astype(dtype)


def _set_with_offset(row, section, is_async):
    """testhipMemset / testhipMemsetAsync: memset from element ``offset`` to the end, for offset 3..0."""
    api, dtype, col = SECTIONS[section]
    n = row[0]
    val = _typed(row[col], dtype)
    itemsize = np.dtype(dtype).itemsize
    stream = hip.hipStreamCreate() if is_async else None
    a_d = hip.hipMalloc(n * itemsize)
    a_h = np.zeros(n, dtype=dtype)
    try:
        for offset in range(MAX_OFFSET, -1, -1):
            m.memset_call(api, a_d + offset * itemsize, int(val), n - offset, is_async, stream)
            if is_async:
                hip.hipStreamSynchronize(stream)
            hip.hipMemcpy(a_h, a_d, n * itemsize, hip.hipMemcpyDeviceToHost)
            assert np.all(a_h[offset:] == val), (n, section, offset)
    finally:
        hip.hipFree(a_d)
        if stream is not None:
            hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("section", list(SECTIONS))
@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"N{r[0]}")
def test_Unit_hipMemset_SetMemoryWithOffset(platform, row, section):
    _set_with_offset(row, section, False)


@pytest.mark.parametrize("section", list(SECTIONS))
@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"N{r[0]}")
def test_Unit_hipMemsetAsync_SetMemoryWithOffset(platform, row, section):
    _set_with_offset(row, section, True)


@pytest.mark.parametrize("num_elements", [1, 2, 3])
def test_Unit_hipMemset_SmallBufferSizes(platform, num_elements):
    a_d = hip.hipMalloc(num_elements)
    a_h = np.zeros(num_elements, dtype=np.int8)
    hip.hipMemset(a_d, 0x24, num_elements)
    hip.hipMemcpy(a_h, a_d, num_elements, hip.hipMemcpyDeviceToHost)
    assert np.all(a_h == 0x24)
    hip.hipFree(a_d)


def test_Unit_hipMemset_2AsyncOperations(platform):
    v = np.zeros(2048, dtype=np.float32)
    p2 = hip.hipMalloc(4096 + 4096 * 2)
    p3 = p2 + 2048 * 4
    s = hip.hipStreamCreate()
    hip.hipMemsetAsync(p2, 0, 32 * 32 * 4, s)
    hip.hipMemsetD32Async(p3, 0x3FE00000, 32 * 32, s)
    hip.hipStreamSynchronize(s)
    for _ in range(32):                 # upstream: 256
        hip.hipMemsetAsync(p2, 0, 32 * 32 * 4, s)
        hip.hipMemsetD32Async(p3, 0x3FE00000, 32 * 32, s)
    hip.hipStreamSynchronize(s)
    hip.hipDeviceSynchronize()
    hip.hipMemcpy(v[:256], p2, 1024, hip.hipMemcpyDeviceToHost)
    hip.hipMemcpy(v[1024:], p3, 1024, hip.hipMemcpyDeviceToHost)
    assert v[0] == 0
    assert v[1024] == 1.75
    hip.hipStreamDestroy(s)
    hip.hipFree(p2)
