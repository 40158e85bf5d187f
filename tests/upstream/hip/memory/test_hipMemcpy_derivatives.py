"""hipMemcpyDtoH / hipMemcpyHtoD / hipMemcpyDtoD: copies of each host allocation kind and size, their
synchronisation with the null stream, and null pointers."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import common as c

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy_derivatives.cc"


def test_Unit_hipMemcpyDtoH_Positive_Basic(kmod):
    c.device_to_host_shell(kmod, hip.hipMemcpyDtoH, False)


def test_Unit_hipMemcpyDtoH_Positive_Synchronization_Behavior(kmod):
    for host in ("malloc", "hipHostMalloc"):
        with c.Alloc(host, c.K_PAGE_SIZE) as h, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
            c.sync_behavior_check(kmod, lambda: hip.hipMemcpyDtoH(h.ptr, d.ptr, c.K_PAGE_SIZE), True)


def test_Unit_hipMemcpyDtoH_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d, c.Alloc("hipHostMalloc", c.K_PAGE_SIZE) as h:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoH, None, d.ptr, c.K_PAGE_SIZE)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoH, h.ptr, None, c.K_PAGE_SIZE)


def test_Unit_hipMemcpyHtoD_Positive_Basic(kmod):
    c.host_to_device_shell(kmod, hip.hipMemcpyHtoD, False)


def test_Unit_hipMemcpyHtoD_Positive_Synchronization_Behavior(kmod):
    with c.Alloc("malloc", c.K_PAGE_SIZE) as h, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
        c.sync_behavior_check(kmod, lambda: hip.hipMemcpyHtoD(d.ptr, h.ptr, c.K_PAGE_SIZE), True)


def test_Unit_hipMemcpyHtoD_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d, c.Alloc("hipHostMalloc", c.K_PAGE_SIZE) as h:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyHtoD, None, h.ptr, c.K_PAGE_SIZE)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyHtoD, d.ptr, None, c.K_PAGE_SIZE)


@pytest.mark.parametrize("section", ["Peer access enabled", "Peer access disabled"])
def test_Unit_hipMemcpyDtoD_Positive_Basic(kmod, section):
    c.device_to_device_shell(kmod, hip.hipMemcpyDtoD, False, None, section.endswith("enabled"))


# Unit_hipMemcpyDtoD_Positive_Synchronization_Behavior is skipped on AMD upstream (EXSWCPHIPT-127).


def test_Unit_hipMemcpyDtoD_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as s, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoD, None, s.ptr, c.K_PAGE_SIZE)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoD, d.ptr, None, c.K_PAGE_SIZE)
