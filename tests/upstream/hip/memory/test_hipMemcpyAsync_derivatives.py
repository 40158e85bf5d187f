"""hipMemcpyDtoHAsync / hipMemcpyHtoDAsync / hipMemcpyDtoDAsync: copies on the null, per-thread and a
created stream, their synchronisation behaviour, null pointers, a destroyed stream, and capture."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import common as c

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyAsync_derivatives.cc"

STREAMS = ["nullstream", "perThread", "created"]


@pytest.mark.parametrize("stream", STREAMS, indirect=True)
def test_Unit_hipMemcpyDtoHAsync_Positive_Basic(kmod, stream):
    c.device_to_host_shell(kmod, lambda d, s, n: hip.hipMemcpyDtoHAsync(d, s, n, stream), True, stream)


@pytest.mark.parametrize("section, host, should_sync", [
    ("Device memory to pageable host memory", "malloc", True),
    ("Device memory to pinned host memory", "hipHostMalloc", False)])
def test_Unit_hipMemcpyDtoHAsync_Positive_Synchronization_Behavior(kmod, section, host, should_sync):
    hip.hipDeviceSynchronize()
    with c.Alloc(host, c.K_PAGE_SIZE) as h, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
        c.sync_behavior_check(kmod, lambda: hip.hipMemcpyDtoHAsync(h.ptr, d.ptr, c.K_PAGE_SIZE, None), should_sync)


def test_Unit_hipMemcpyDtoHAsync_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d, c.Alloc("hipHostMalloc", c.K_PAGE_SIZE) as h:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoHAsync, None, d.ptr, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoHAsync, h.ptr, None, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorContextIsDestroyed", hip.hipMemcpyDtoHAsync, h.ptr, d.ptr, c.K_PAGE_SIZE,
                       c.invalid_stream())


@pytest.mark.parametrize("stream", STREAMS, indirect=True)
def test_Unit_hipMemcpyHtoDAsync_Positive_Basic(kmod, stream):
    c.host_to_device_shell(kmod, lambda d, s, n: hip.hipMemcpyHtoDAsync(d, s, n, stream), True, stream)


# Unit_hipMemcpyHtoDAsync_Positive_Synchronization_Behavior is skipped on AMD upstream (EXSWCPHIPT-127).


def test_Unit_hipMemcpyHtoDAsync_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d, c.Alloc("hipHostMalloc", c.K_PAGE_SIZE) as h:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyHtoDAsync, None, h.ptr, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyHtoDAsync, d.ptr, None, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorContextIsDestroyed", hip.hipMemcpyHtoDAsync, d.ptr, h.ptr, c.K_PAGE_SIZE,
                       c.invalid_stream())


@pytest.mark.parametrize("section", ["Device to device-Peer access enabled", "Device to device-Peer access disabled"])
@pytest.mark.parametrize("stream", STREAMS, indirect=True)
def test_Unit_hipMemcpyDtoDAsync_Positive_Basic(kmod, stream, section):
    c.device_to_device_shell(kmod, lambda d, s, n: hip.hipMemcpyDtoDAsync(d, s, n, stream), True, stream,
                             section.endswith("enabled"))


def test_Unit_hipMemcpyDtoDAsync_Positive_Synchronization_Behavior(kmod):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as s, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
        c.sync_behavior_check(kmod, lambda: hip.hipMemcpyDtoDAsync(d.ptr, s.ptr, c.K_PAGE_SIZE, None), False)


def test_Unit_hipMemcpyDtoDAsync_Negative_Parameters(platform):
    with c.Alloc("hipMalloc", c.K_PAGE_SIZE) as s, c.Alloc("hipMalloc", c.K_PAGE_SIZE) as d:
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoDAsync, None, s.ptr, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorInvalidValue", hip.hipMemcpyDtoDAsync, d.ptr, None, c.K_PAGE_SIZE, None)
        c.expect_error("hipErrorContextIsDestroyed", hip.hipMemcpyDtoDAsync, d.ptr, s.ptr, c.K_PAGE_SIZE,
                       c.invalid_stream())


def _capture(stream, record):
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    record()
    graph = hip.hipStreamEndCapture(stream)
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)


def test_Unit_hipMemcpyDtoHAsync_capturehipMemcpyDtoHAsync(platform):
    n = c.K_PAGE_SIZE
    stream = hip.hipStreamCreate()
    A_h = np.zeros(n, dtype=np.int32)
    B_h = np.arange(n, dtype=np.int32)
    A_d = hip.hipMalloc(4 * n)
    try:
        hip.hipMemcpyHtoD(A_d, B_h, 4 * n)
        _capture(stream, lambda: hip.hipMemcpyDtoHAsync(A_h, A_d, 4 * n, stream))
        np.testing.assert_array_equal(A_h, B_h)
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(A_d)


def test_Unit_hipMemcpyHtoDAsync_capturehipMemcpyHtoDAsync(platform):
    n = c.K_PAGE_SIZE
    stream = hip.hipStreamCreate()
    A_h = np.zeros(n, dtype=np.int32)
    B_h = np.arange(n, dtype=np.int32)
    A_d = hip.hipMalloc(4 * n)
    try:
        _capture(stream, lambda: hip.hipMemcpyHtoDAsync(A_d, B_h, 4 * n, stream))
        hip.hipMemcpyDtoH(A_h, A_d, 4 * n)
        np.testing.assert_array_equal(A_h, B_h)
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(A_d)
