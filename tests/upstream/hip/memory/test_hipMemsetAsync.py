"""Two asynchronous memsets (hipMemsetD8Async; hipMemsetD8/D16/D32Async by element type) on one buffer at
adjacent offsets, on the null and a created stream, then both ranges checked. The hipHostRegister
allocation kinds are left out (hipHostRegister is not in hdemu); Unit_hipMemset2DASyncMulti and
Unit_hipMemset3DASyncMulti are skipped on AMD upstream (EXSWCPHIPT-127)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memset_common as m

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetAsync.cc"

TEST_VALUE1, TEST_VALUE2 = 97, 98


def _run_async_tests(api, dtype, kind, width, stream_type):
    """runAsyncTests: data1 = [0, width), data2 = [width, 2 * width) in elements."""
    stream = hip.hipStreamCreate() if stream_type == "created" else None
    itemsize = np.dtype(dtype).itemsize
    ptr = m.alloc(kind, 2 * width * itemsize)
    try:
        m.memset_call(api, ptr, TEST_VALUE1, width, True, stream)
        m.memset_call(api, ptr + width * itemsize, TEST_VALUE2, width, True, stream)
        hip.hipStreamSynchronize(stream)
        assert np.all(m.read_back(kind, ptr, width, dtype) == TEST_VALUE1)
        assert np.all(m.read_back(kind, ptr + width * itemsize, width, dtype) == TEST_VALUE2)
    finally:
        m.free(kind, ptr)
        if stream is not None:
            hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("stream_type", ["null", "created"])
@pytest.mark.parametrize("width", [1, 256])
@pytest.mark.parametrize("kind", m.ALLOC_KINDS)
def test_Unit_hipMemsetASyncMulti(platform, kind, width, stream_type):
    _run_async_tests("D8", np.int8, kind, width, stream_type)


@pytest.mark.parametrize("stream_type", ["null", "created"])
@pytest.mark.parametrize("width", [1, 256])
@pytest.mark.parametrize("kind", m.ALLOC_KINDS)
@pytest.mark.parametrize("api,dtype", [("D8", np.int8), ("D16", np.int16), ("D32", np.uint32)],
                         ids=["int8_t", "int16_t", "uint32_t"])
def test_Unit_hipMemsetDASyncMulti(platform, api, dtype, kind, width, stream_type):
    _run_async_tests(api, dtype, kind, width, stream_type)
