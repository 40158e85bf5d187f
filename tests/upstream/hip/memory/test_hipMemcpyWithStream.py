"""hipMemcpy (this upstream file's TEST_CASEs are hipMemcpy's, named Unit_hipMemcpy_*): every direction
and kind of MemcpyWithDirectionCommonTests, device to device with peer access on and off; which copies
wait for earlier device work (host to device from pageable memory, device to pageable and pinned host,
host to host; device to device is skipped on AMD upstream, EXSWCPHIPT-127); null pointers of each
direction. "Invalid MemcpyKind" is disabled on AMD upstream (EXSWHTEC-128), as there."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import common as c

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyWithStream.cc"

D2H, H2D, H2H = hip.hipMemcpyDeviceToHost, hip.hipMemcpyHostToDevice, hip.hipMemcpyHostToHost


@pytest.mark.parametrize("section", list(c.DIRECTION_SECTIONS))
def test_Unit_hipMemcpy_Positive_Basic(kmod, section):
    def memcpy_of_kind(kind):
        return lambda d, s, n: hip.hipMemcpy(d, s, n, kind)
    c.direction_section(kmod, section, memcpy_of_kind, False)


# "Device memory to device memory" is skipped on AMD upstream (EXSWCPHIPT-127), as there.
@pytest.mark.parametrize("section, dst, src, kind, copy", [
    ("Host memory to device memory", "hipMalloc", "malloc", H2D, "hipMemcpy"),
    ("Device memory to host memory: pageable", "malloc", "hipMalloc", D2H, "hipMemcpy"),
    ("Device memory to host memory: pinned", "hipHostMalloc", "hipMalloc", D2H, "hipMemcpy"),
    ("Host memory to host memory: malloc to hipHostMalloc", "hipHostMalloc", "malloc", H2H, "hipMemcpy"),
    ("Host memory to host memory: hipHostMalloc to malloc", "malloc", "hipHostMalloc", H2H, "hipMemcpy"),
    ("Host memory to host memory: malloc to malloc", "malloc", "malloc", H2H, "hipMemcpy"),
    ("Host memory to host memory: pinned to pinned", "hipHostMalloc", "hipHostMalloc", H2H, "hipMemcpyAsync"),
])
def test_Unit_hipMemcpy_Positive_Synchronization_Behavior(kmod, section, dst, src, kind, copy):
    hip.hipDeviceSynchronize()
    with c.Alloc(dst, c.K_PAGE_SIZE) as d, c.Alloc(src, c.K_PAGE_SIZE) as s:
        if copy == "hipMemcpy":
            c.sync_behavior_check(kmod, lambda: hip.hipMemcpy(d.ptr, s.ptr, c.K_PAGE_SIZE, kind), True)
        else:               # MemcpyHPinnedtoHPinnedSyncBehavior(hipMemcpyAsync(..., hipMemcpyHostToHost, nullptr))
            c.sync_behavior_check(kmod, lambda: hip.hipMemcpyAsync(d.ptr, s.ptr, c.K_PAGE_SIZE, kind, None), True)


@pytest.mark.parametrize("case", ["dst == nullptr", "src == nullptr"])
@pytest.mark.parametrize("section, dst, src, kind", c.NEGATIVE_DIRECTIONS)
def test_Unit_hipMemcpy_Negative_Parameters(platform, section, dst, src, kind, case):
    with c.Alloc(dst, c.K_PAGE_SIZE) as d, c.Alloc(src, c.K_PAGE_SIZE) as s:
        if case == "dst == nullptr":
            c.expect_error("hipErrorInvalidValue", hip.hipMemcpy, None, s.ptr, c.K_PAGE_SIZE, kind)
        else:
            c.expect_error("hipErrorInvalidValue", hip.hipMemcpy, d.ptr, None, c.K_PAGE_SIZE, kind)
