"""hipMemcpy3DAsync: pitched copies device to host, device to device (between every pair of devices,
with peer access off and on), host to device and host to host, with each kind and host pitch, on the
null, per-thread and a created stream; which copies return while earlier device work still runs (host to
device from pageable and pinned memory, device to pinned host, device to device: all of them; device to
pageable host and host to host are disabled on AMD upstream, EXSWHTEC-233); a zero width, height or depth
copies nothing; null pointers and a pitch of maxPitch are hipErrorInvalidValue (the other negative
sections, a bad kind and a destroyed stream among them, are disabled on AMD upstream, as there).
Unit_hipMemcpy3DAsync_Positive_Array needs hipMalloc3DArray (NOT_PORTED.md). CHECK_IMAGE_SUPPORT is not
applied, as in the hipMemcpy3D port."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import memcpy2d_common as m2
from tests.upstream.hip.memory import memcpy3d_common as m3

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy3DAsync.cc"


def _async(dst, dst_pos, src, src_pos, extent, kind, stream=None):
    """Memcpy3DWrapper<true>."""
    m3.memcpy3d_wrapper(dst, dst_pos, src, src_pos, extent, kind, stream, is_async=True)


@pytest.mark.parametrize("section", ["Device to Host", "Device to Device-Peer access disabled",
                                     "Device to Device-Peer access enabled", "Host to Device", "Host to Host"])
@pytest.mark.parametrize("stream", ["nullstream", "perThread", "created"], indirect=True)
def test_Unit_hipMemcpy3DAsync_Positive_Basic(platform, stream, section):
    if section == "Device to Host":
        m3.device_to_host_shell(_async, True, stream)
    elif section.startswith("Device to Device"):
        m3.device_to_device_shell(_async, True, section.endswith("enabled"), stream)
    elif section == "Host to Device":
        m3.host_to_device_shell(_async, True, stream)
    else:
        m3.host_to_host_shell(_async, True, stream)


@pytest.mark.parametrize("section", ["Host to Device-malloc", "Host to Device-hipHostMalloc", "Device to Pinned Host",
                                     "Device to Device"])
def test_Unit_hipMemcpy3DAsync_Positive_Synchronization_Behavior(kmod, section):
    hip.hipDeviceSynchronize()
    check = m2.sync_behavior_check          # bounded: a copy that waits for the gate is reported, not hung on
    if section.startswith("Host to Device"):
        m3.htod_sync_behavior(kmod, _async, False, (section.split("-")[1],), check=check)
    elif section == "Device to Pinned Host":
        m3.dtoh_pinned_sync_behavior(kmod, _async, False, check=check)
    else:
        m3.dtod_sync_behavior(kmod, _async, False, check=check)


@pytest.mark.parametrize("mult", [(0, 1, 1), (1, 0, 1), (1, 1, 0)])
@pytest.mark.parametrize("section", ["Device to Host", "Device to Device", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy3DAsync_Positive_Parameters(platform, section, mult):
    m3.zero_width_height_depth(_async, True, section, mult)


@pytest.mark.parametrize("case", m3.NEGATIVE_CASES)
@pytest.mark.parametrize("section", ["Host to Device", "Device to Host", "Host to Host", "Device to Device"])
def test_Unit_hipMemcpy3DAsync_Negative_Parameters(platform, section, case):
    m3.negative_parameters(_async, section, case)
