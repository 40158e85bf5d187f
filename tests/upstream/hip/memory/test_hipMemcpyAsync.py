"""hipMemcpyAsync: every direction and kind on the null, per-thread and a created stream; which
copies return before earlier device work is done; null pointers, a bad kind, a destroyed stream."""
import functools

import pytest

from hostside import hip
from tests.upstream.hip.memory import common as c

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyAsync.cc"

D2H, H2D, H2H, D2D = (hip.hipMemcpyDeviceToHost, hip.hipMemcpyHostToDevice, hip.hipMemcpyHostToHost,
                      hip.hipMemcpyDeviceToDevice)


@pytest.mark.parametrize("section", list(c.DIRECTION_SECTIONS))
@pytest.mark.parametrize("stream_type", ["nullstream", "perThread", "created"])
def test_Unit_hipMemcpyAsync_Positive_Basic(kmod, stream_type, section):
    stream = {"nullstream": None, "perThread": hip.hipStreamPerThread}.get(stream_type)
    if stream_type == "created":
        stream = hip.hipStreamCreate()
    try:
        def memcpy_of_kind(kind):
            return lambda d, s, n: hip.hipMemcpyAsync(d, s, n, kind, stream)
        c.direction_section(kmod, section, memcpy_of_kind, True, stream)
    finally:
        if stream_type == "created":
            hip.hipStreamDestroy(stream)


# "Host pageable memory to device memory" is skipped on AMD upstream (EXSWCPHIPT-127); "Device memory
# to device Memory No CU" needs hipMemcpyDeviceToDeviceNoCU (not in hdemu).
@pytest.mark.parametrize("section, dst, src, kind, should_sync", [
    ("Host pinned memory to device memory", "hipMalloc", "hipHostMalloc", H2D, False),
    ("Device memory to pageable host memory", "malloc", "hipMalloc", D2H, True),
    ("Device memory to pinned host memory", "hipHostMalloc", "hipMalloc", D2H, False),
    ("Device memory to device memory", "hipMalloc", "hipMalloc", D2D, False),
    ("Host memory to host memory: malloc to hipHostMalloc", "hipHostMalloc", "malloc", H2H, True),
    ("Host memory to host memory: hipHostMalloc to malloc", "malloc", "hipHostMalloc", H2H, True),
    ("Host memory to host memory: malloc to malloc", "malloc", "malloc", H2H, True),
    ("Host memory to host memory: pinned to pinned", "hipHostMalloc", "hipHostMalloc", H2H, True),
])
def test_Unit_hipMemcpyAsync_Positive_Synchronization_Behavior(kmod, section, dst, src, kind, should_sync):
    hip.hipDeviceSynchronize()
    with c.Alloc(dst, c.K_PAGE_SIZE) as d, c.Alloc(src, c.K_PAGE_SIZE) as s:
        c.sync_behavior_check(kmod, lambda: hip.hipMemcpyAsync(d.ptr, s.ptr, c.K_PAGE_SIZE, kind, None),
                              should_sync)


@pytest.mark.parametrize("section, dst, src, kind", c.NEGATIVE_DIRECTIONS)
def test_Unit_hipMemcpyAsync_Negative_Parameters(platform, section, dst, src, kind):
    with c.Alloc(dst, c.K_PAGE_SIZE) as d, c.Alloc(src, c.K_PAGE_SIZE) as s:
        n = c.K_PAGE_SIZE
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyAsync, None, s.ptr, n, kind, None)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyAsync, d.ptr, None, n, kind, None)
        c.expect_error("hipErrorInvalidMemcpyDirection", hip.hipMemcpyAsync, d.ptr, s.ptr, n, -1, None)
        c.expect_error("hipErrorContextIsDestroyed", hip.hipMemcpyAsync, d.ptr, s.ptr, n, kind, c.invalid_stream())
