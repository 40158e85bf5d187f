"""hipMemcpy2D: pitched copies device to host, device to device (between every pair of devices, with
peer access off and on), host to device and host to host, with each kind and pitch; each direction after
device work still running (checked as upstream: the stream is idle once synchronised; host to host is
disabled on AMD upstream, EXSWHTEC-232); a zero width or height copies nothing (every direction), and
the negative parameters of each direction: null pointers and a pitch over maxPitch are
hipErrorInvalidValue, a pitch under the width hipErrorInvalidPitchValue."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memcpy2d_common as m2

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy2D.cc"
E = hip.hipError_t
COLS, ROWS = 63, 64                     # Memcpy2DZeroWidthHeight's uint8 region


@pytest.mark.parametrize("section", ["Device to Host", "Device to Device-Peer access disabled",
                                     "Device to Device-Peer access enabled", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy2D_Positive_Basic(platform, section):
    if section == "Device to Host":
        m2.device_to_host_shell(hip.hipMemcpy2D, False)
    elif section.startswith("Device to Device"):
        m2.device_to_device_shell(hip.hipMemcpy2D, False, section.endswith("enabled"))
    elif section == "Host to Device":
        m2.host_to_device_shell(hip.hipMemcpy2D, False)
    else:
        m2.host_to_host_shell(hip.hipMemcpy2D, False)


@pytest.mark.parametrize("section", ["Host to Device-malloc", "Host to Device-hipHostMalloc", "Device to Host",
                                     "Device to Device"])
def test_Unit_hipMemcpy2D_Positive_Synchronization_Behavior(kmod, section):
    hip.hipDeviceSynchronize()
    if section.startswith("Host to Device"):
        m2.htod_sync_behavior(kmod, hip.hipMemcpy2D, True, section.split("-")[1])
    elif section == "Device to Host":
        m2.dtoh_pageable_sync_behavior(kmod, hip.hipMemcpy2D, True)
        m2.dtoh_pinned_sync_behavior(kmod, hip.hipMemcpy2D, True)
    else:
        m2.dtod_sync_behavior(kmod, hip.hipMemcpy2D, True)


class Pitched:
    """LinearAllocGuard2D<T>(cols, rows): hipMallocPitch of cols * sizeof(T) bytes by rows."""

    def __init__(self, cols, rows, item=1):
        self.width, self.height = cols * item, rows
        self.ptr, self.pitch = hip.hipMallocPitch(self.width, rows)

    def read(self) -> np.ndarray:
        out = np.zeros(self.width * self.height, np.uint8)
        hip.hipMemcpy2D(out, self.width, self.ptr, self.pitch, self.width, self.height, hip.hipMemcpyDeviceToHost)
        return out


@pytest.mark.parametrize("mult", [(0, 1), (1, 0), (0, 0)])
@pytest.mark.parametrize("section", ["Device to Host", "Device to Device", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy2D_Positive_Parameters(platform, section, mult):
    wm, hm = mult
    dev, dev2 = Pitched(COLS, ROWS), Pitched(COLS, ROWS)
    n = dev.width * ROWS
    src_h, dst_h = hip.hipHostMalloc(n), hip.hipHostMalloc(n)
    sh, dh = hip.host_array(src_h, np.uint8, n), hip.host_array(dst_h, np.uint8, n)
    try:
        if section == "Device to Host":
            dh[:] = 42
            hip.hipMemset2D(dev.ptr, dev.pitch, 1, dev.width, ROWS)
            hip.hipMemcpy2D(dst_h, dev.width, dev.ptr, dev.pitch, dev.width * wm, ROWS * hm,
                            hip.hipMemcpyDeviceToHost)
            assert (dh == 42).all()
        elif section == "Device to Device":
            hip.hipMemset2D(dev.ptr, dev.pitch, 1, dev.width, ROWS)
            hip.hipMemset2D(dev2.ptr, dev2.pitch, 42, dev2.width, ROWS)
            hip.hipMemcpy2D(dev2.ptr, dev2.pitch, dev.ptr, dev.pitch, dev.width * wm, ROWS * hm,
                            hip.hipMemcpyDeviceToDevice)
            assert (dev2.read() == 42).all()
        elif section == "Host to Device":
            sh[:] = 1
            hip.hipMemset2D(dev.ptr, dev.pitch, 42, dev.width, ROWS)
            hip.hipMemcpy2D(dev.ptr, dev.pitch, src_h, dev.width, dev.width * wm, ROWS * hm,
                            hip.hipMemcpyHostToDevice)
            assert (dev.read() == 42).all()
        else:
            sh[:], dh[:] = 1, 42
            hip.hipMemcpy2D(dst_h, COLS, src_h, COLS, COLS * wm, ROWS * hm, hip.hipMemcpyHostToHost)
            assert (dh == 42).all()
    finally:
        hip.hipHostFree(src_h)
        hip.hipHostFree(dst_h)
        hip.hipFree(dev.ptr)
        hip.hipFree(dev2.ptr)


# "Invalid MemcpyKind" is disabled on AMD upstream (EXSWHTEC-234), as there.
@pytest.mark.parametrize("case", ["dst == nullptr", "src == nullptr", "dpitch < width", "spitch < width",
                                  "dpitch > max pitch", "spitch > max pitch"])
@pytest.mark.parametrize("section", ["Host to Device", "Device to Host", "Host to Host", "Device to Device"])
def test_Unit_hipMemcpy2D_Negative_Parameters(platform, section, case):
    cols, rows = 128, 128
    allocs = []
    try:
        if section == "Host to Host":
            a, b = hip.hipHostMalloc(cols * rows * 4), hip.hipHostMalloc(cols * rows * 4)
            allocs += [(hip.hipHostFree, a), (hip.hipHostFree, b)]
            dst, dpitch, src, spitch, width, height, kind = b, cols * 4, a, cols * 4, cols * 4, rows, \
                hip.hipMemcpyHostToHost
        else:
            d = Pitched(cols, rows, 4)
            allocs.append((hip.hipFree, d.ptr))
            if section == "Device to Device":
                s = Pitched(cols, rows, 4)
                allocs.append((hip.hipFree, s.ptr))
                dst, dpitch, src, spitch, kind = d.ptr, d.pitch, s.ptr, s.pitch, hip.hipMemcpyDeviceToDevice
            else:
                h = hip.hipHostMalloc(d.pitch * rows)
                allocs.append((hip.hipHostFree, h))
                if section == "Host to Device":
                    dst, src, kind = d.ptr, h, hip.hipMemcpyHostToDevice
                else:
                    dst, src, kind = h, d.ptr, hip.hipMemcpyDeviceToHost
                dpitch = spitch = d.pitch
            width, height = d.width, d.height
        max_pitch = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMaxPitch, 0)
        args = {"dst == nullptr": (0, dpitch, src, spitch, E.hipErrorInvalidValue),
                "src == nullptr": (dst, dpitch, 0, spitch, E.hipErrorInvalidValue),
                "dpitch < width": (dst, width - 1, src, spitch, E.hipErrorInvalidPitchValue),
                "spitch < width": (dst, dpitch, src, width - 1, E.hipErrorInvalidPitchValue),
                "dpitch > max pitch": (dst, max_pitch + 1, src, spitch, E.hipErrorInvalidValue),
                "spitch > max pitch": (dst, dpitch, src, max_pitch + 1, E.hipErrorInvalidValue)}[case]
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemcpy2D(args[0], args[1], args[2], args[3], width, height, kind)
        assert ei.value.error == args[4]
    finally:
        for free, p in allocs:
            free(p)
