"""graph_memset_node_test_common.hh for the ported memset-node cases: GraphMemsetNodeCommonPositive
(pitched allocations filled through a setter, read back with hipMemcpy2D) and the sections of
MemsetCommonNegative that run on AMD."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

PAGE = 4096
DTYPES = [pytest.param(np.uint8, id="uint8_t"), pytest.param(np.uint16, id="uint16_t"),
          pytest.param(np.uint32, id="uint32_t")]
#: upstream's heights are 1, 2 and 1024; 16 keeps the largest case small
HEIGHTS = (1, 2, 16)
NEGATIVE = ["params_null", "dst_null", "element_size_0", "element_size_3", "element_size_5",
            "width_over_allocation", "height_0"]


def widths(dtype):
    return (1, 64, PAGE // np.dtype(dtype).itemsize + 1)


class Pitched:
    """LinearAllocGuard2D<T>(width, height): hipMallocPitch memory, freed by ``res``."""

    def __init__(self, res, dtype, width, height):
        self.ptr, self.pitch = hip.hipMallocPitch(width * np.dtype(dtype).itemsize, height)
        res._dev.append(self.ptr)


def check_filled(dtype, alloc, width, height, value=42):
    itemsize = np.dtype(dtype).itemsize
    buf = np.zeros(width * height, dtype)
    hip.hipMemcpy2D(buf, width * itemsize, alloc.ptr, alloc.pitch, width * itemsize, height,
                    hip.hipMemcpyDeviceToHost)
    assert (buf == value).all(), f"width {width} height {height}"


def memset_common_positive(res, dtype, f):
    """GraphMemsetNodeCommonPositive: for every width and height, ``f(params)`` fills a pitched
    allocation with 42, which is then read back."""
    for width in widths(dtype):
        for height in HEIGHTS:
            alloc = Pitched(res, dtype, width, height)
            params = hip.hipMemsetParams(alloc.ptr, 42, 0, np.dtype(dtype).itemsize, width=width, height=height,
                                         pitch=alloc.pitch)
            f(params)
            check_filled(dtype, alloc, width, height)


def memset_common_negative(f, params, section):
    """MemsetCommonNegative (its HT_NVIDIA-only sections left out)."""
    if section == "params_null":
        expect_error(hip.hipError_t.hipErrorInvalidValue, f, None)
        return
    if section == "dst_null":
        params.dst = None
    elif section.startswith("element_size_"):
        params.elementSize = int(section.rsplit("_", 1)[1])
    elif section == "width_over_allocation":
        params.width += 1000
    else:
        params.height = 0
    expect_error(hip.hipError_t.hipErrorInvalidValue, f, params)
