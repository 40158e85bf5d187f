"""hipMemcpyPeer between every pair of devices with peer access enabled (pairs of one device have none:
upstream's INFO branch), for each size; it returns while both devices' null streams are still busy; a
size of 0 copies nothing; null pointers, a size past the allocation and a device id out of range."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import peer_common as p

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyPeer.cc"


def test_Unit_hipMemcpyPeer_Positive_Default(kmod):
    p.positive_default(kmod, hip.hipMemcpyPeer)


def test_Unit_hipMemcpyPeer_Positive_Synchronization_Behavior(kmod):
    hip.hipDeviceSynchronize()
    p.need_two_devices()
    src_device, dst_device = 0, 1
    with p.page_pair(src_device, dst_device) as pair:
        if pair is None:
            return
        src_alloc, dst_alloc = pair
        # LaunchDelayKernel on dst_device's, then src_device's null stream: gates here
        returned, status = p.returns_before_gates_open(
            kmod, [dst_device, src_device],
            lambda: hip.hipMemcpyPeer(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, p.K_PAGE_SIZE),
            deadline_s=10.0)
        assert returned, "hipMemcpyPeer waited for the device work"
        assert status == hip.hipError_t.hipErrorNotReady


def test_Unit_hipMemcpyPeer_Positive_ZeroSize(kmod):
    p.positive_zero_size(kmod, hip.hipMemcpyPeer)


@pytest.mark.parametrize("section", ["Nullptr to Destination Pointer", "Nullptr to Source Pointer",
                                     "Passing more than allocated size", "Passing invalid Destination device ID",
                                     "Passing invalid Source device ID"])
def test_Unit_hipMemcpyPeer_Negative_Parameters(platform, section):
    p.negative_parameters(hip.hipMemcpyPeer, section)
