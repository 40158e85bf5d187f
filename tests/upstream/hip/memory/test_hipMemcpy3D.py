"""hipMemcpy3D: pitched copies device to host, device to device (between every pair of devices, with
peer access off and on), host to device and host to host, with each kind and host pitch; which copies
return before earlier device work is done (host to device, device to pageable and to pinned host wait);
a device-to-device copy returns while the null stream is held by a host callback; a zero width, height or
depth copies nothing; null pointers and a pitch of maxPitch are hipErrorInvalidValue. The sections upstream
disables on AMD (host to host sync behaviour, pitch under the width, positions out of bounds, a bad kind)
are left out, as there. Unit_hipMemcpy3D_Positive_Array needs hipMalloc3DArray (NOT_PORTED.md).
CHECK_IMAGE_SUPPORT is not applied, as in the hipMalloc3D port: these cases use no image memory, and on
hdemu (ImageSupport 0) it would make each of them return at once."""
import threading

import pytest

from hostside import hip
from tests.upstream.hip.memory import memcpy3d_common as m3
from tests.upstream.hip.memory.hiptest_common import BlockingContext
from tests.upstream.hipkit import wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy3D.cc"

ORIGIN = (0, 0, 0)
#: how long the device-to-device copy may take to return while the null stream is blocked (a copy that
#: does not wait returns within milliseconds; one that waits would return only once it is released)
RETURN_DEADLINE_S = 20.0


def _memcpy(dst, dst_pos, src, src_pos, extent, kind, stream=None):
    """Memcpy3DWrapper<> (synchronous)."""
    m3.memcpy3d_wrapper(dst, dst_pos, src, src_pos, extent, kind)


@pytest.mark.parametrize("section", ["Device to Host", "Device to Device-Peer access disabled",
                                     "Device to Device-Peer access enabled", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy3D_Positive_Basic(platform, section):
    if section == "Device to Host":
        m3.device_to_host_shell(_memcpy, False)
    elif section.startswith("Device to Device"):
        m3.device_to_device_shell(_memcpy, False, section.endswith("enabled"))
    elif section == "Host to Device":
        m3.host_to_device_shell(_memcpy, False)
    else:
        m3.host_to_host_shell(_memcpy, False)


# "Host to Host" is disabled on AMD upstream (EXSWHTEC-232), as there.
@pytest.mark.parametrize("section", ["Host to Device", "Device to Pageable Host", "Device to Pinned Host"])
def test_Unit_hipMemcpy3D_Positive_Synchronization_Behavior(kmod, section):
    hip.hipDeviceSynchronize()
    if section == "Host to Device":
        m3.htod_sync_behavior(kmod, _memcpy, True)
    elif section == "Device to Pageable Host":
        m3.dtoh_pageable_sync_behavior(kmod, _memcpy, True)
    else:
        m3.dtoh_pinned_sync_behavior(kmod, _memcpy, True)


def test_Unit_hipMemcpy3D_Positive_DeviceToDevice_Synchronization_Behavior(platform):
    w, h, d = 32 * m3.INT, 32, 8
    with m3.Alloc3D(w, h, d) as src_alloc, m3.Alloc3D(w, h, d) as dst_alloc:
        b_context = BlockingContext(None)
        out = {}

        def copy():
            try:
                m3.memcpy3d_wrapper(dst_alloc.pp, ORIGIN, src_alloc.pp, ORIGIN, dst_alloc.extent,
                                    hip.hipMemcpyDeviceToDevice)
                out["status"] = hip.hipStreamQuery(None)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc
            out["done"] = True

        with b_context:
            b_context.block_stream()
            assert b_context.is_blocked()
            t = threading.Thread(target=copy)
            t.start()
            try:            # a copy that waits for the blocked stream would only return once it is released
                wait_until(lambda: out.get("done"), RETURN_DEADLINE_S,
                           "hipMemcpy3D to return while the null stream is blocked")
                returned_while_blocked = True
            except AssertionError:
                returned_while_blocked = False
            b_context.unblock_stream()
            t.join(60)
        assert not t.is_alive(), "hipMemcpy3D never returned"
        if "exc" in out:
            raise out["exc"]
        assert returned_while_blocked, "hipMemcpy3D device to device waited for the blocked null stream"
        assert out["status"] == hip.hipError_t.hipErrorNotReady
        hip.hipDeviceSynchronize()
        assert hip.hipStreamQuery(None) == hip.hipError_t.hipSuccess


@pytest.mark.parametrize("mult", [(0, 1, 1), (1, 0, 1), (1, 1, 0)])
@pytest.mark.parametrize("section", ["Device to Host", "Device to Device", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy3D_Positive_Parameters(platform, section, mult):
    m3.zero_width_height_depth(_memcpy, False, section, mult)


@pytest.mark.parametrize("case", m3.NEGATIVE_CASES)
@pytest.mark.parametrize("section", ["Host to Device", "Device to Host", "Host to Host", "Device to Device"])
def test_Unit_hipMemcpy3D_Negative_Parameters(platform, section, case):
    m3.negative_parameters(_memcpy, section, case)
