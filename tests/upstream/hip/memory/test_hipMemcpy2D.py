"""hipMemcpy2D: pitched copies device to host, device to device (between every pair of devices, with
peer access off and on), host to device and host to host, with each kind and pitch; each direction after
device work still running (checked as upstream: the stream is idle once synchronised; host to host is
disabled on AMD upstream, EXSWHTEC-232); a zero width or height copies nothing (every direction), and
the negative parameters of each direction: null pointers and a pitch over maxPitch are
hipErrorInvalidValue, a pitch under the width hipErrorInvalidPitchValue."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import memcpy2d_common as m2

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpy2D.cc"


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


@pytest.mark.parametrize("mult", [(0, 1), (1, 0), (0, 0)])
@pytest.mark.parametrize("section", ["Device to Host", "Device to Device", "Host to Device", "Host to Host"])
def test_Unit_hipMemcpy2D_Positive_Parameters(platform, section, mult):
    m2.zero_width_height(hip.hipMemcpy2D, section, mult)


# "Invalid MemcpyKind" is disabled on AMD upstream (EXSWHTEC-234), as there.
@pytest.mark.parametrize("case", m2.NEGATIVE_CASES)
@pytest.mark.parametrize("section", ["Host to Device", "Device to Host", "Host to Host", "Device to Device"])
def test_Unit_hipMemcpy2D_Negative_Parameters(platform, section, case):
    m2.negative_parameters(hip.hipMemcpy2D, section, case)
