"""memcpy1d_tests_common.hh for the ported 1-D memcpy node setters: the device-to-host, host-to-device
and device-to-device shells (without peer access) around a copy function ``f(dst, src, count, kind)``,
for the sizes the other 1-D ports use."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import launch

PAGE = 4096
SIZES = [PAGE // 2, PAGE, PAGE * 2]
SECTIONS = [pytest.param("d2h", hip.hipMemcpyDeviceToHost, id="d2h"),
            pytest.param("h2d", hip.hipMemcpyHostToDevice, id="h2d"),
            pytest.param("d2d", hip.hipMemcpyDeviceToDevice, id="d2d"),
            pytest.param("d2d", hip.hipMemcpyDefault, id="d2d-default")]
#: as in the hipGraphAddMemcpyNode1D port
ROUNDED = pytest.mark.xfail(strict=True, reason="hdemu: copies are bounds-checked against the allocation rounded "
                                                 "up to 256 bytes, so an 8-byte copy from/to hipMalloc(4) is accepted")


def _host(res, host_kind, count):
    """(what is passed as the pointer, its numpy view): a malloc'd (pageable) or a hipHostMalloc array."""
    if host_kind == "malloc":
        a = np.zeros(count, np.int32)
        return a, a
    return res.pinned(np.int32, count)


def d2h(mod, res, f, kind, size):
    count = size // 4
    for host_kind in ("malloc", "hipHostMalloc"):
        host, view = _host(res, host_kind, count)
        dev = res.malloc(size)
        launch(mod, "set_value", [dev, 42, count], None, n=count, block=1024)
        f(host, dev, size, kind)
        assert (view == 42).all(), host_kind


def h2d(mod, res, f, kind, size):
    count = size // 4
    for host_kind in ("malloc", "hipHostMalloc"):
        src, src_view = _host(res, host_kind, count)
        dst_ptr, dst_view = res.pinned(np.int32, count)
        dev = res.malloc(size)
        src_view[:] = 42
        dst_view[:] = 0
        f(dev, src, size, kind)
        hip.hipMemcpy(dst_ptr, dev, size, hip.hipMemcpyDeviceToHost)
        assert (dst_view == 42).all(), host_kind


def d2d(mod, res, f, kind, size):
    """MemcpyDeviceToDeviceShell<false, false> over every pair of devices."""
    count = size // 4
    n = hip.hipGetDeviceCount()
    for src_device in range(n):
        for dst_device in range(n):
            hip.hipSetDevice(src_device)
            src = res.malloc(size)
            result_ptr, result = res.pinned(np.int32, count)
            hip.hipSetDevice(dst_device)
            dst = res.malloc(size)
            hip.hipSetDevice(src_device)
            try:
                launch(mod, "set_value", [src, 42, count], None, n=count, block=1024)
                f(dst, src, size, kind)
            finally:
                hip.hipSetDevice(0)
            hip.hipMemcpy(result_ptr, dst, size, hip.hipMemcpyDeviceToHost)
            assert (result == 42).all(), (src_device, dst_device)


SHELLS = {"d2h": d2h, "h2d": h2d, "d2d": d2d}


def offset(p, by=1):
    """``reinterpret_cast<uint8_t*>(p) + by``: an address plus bytes, or a byte view of an array."""
    if isinstance(p, np.ndarray):
        return p.view(np.uint8)[by:]
    return p + by
