"""hipMemcpyPeerAsync between every pair of devices with peer access enabled (pairs of one device have
none: upstream's INFO branch), on the null, per-thread and a created stream, for each size; a copy on a
created stream returns while the null stream is busy; a size of 0 copies nothing; null pointers, a size
past the allocation, a device id out of range and a destroyed stream."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import peer_common as p

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyPeerAsync.cc"


def _synchronised(stream):
    """hipMemcpyPeerAsync on ``stream``, then hipStreamSynchronize(stream)."""
    def copy(dst, dst_device, src, src_device, nbytes):
        hip.hipMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes, stream)
        hip.hipStreamSynchronize(stream)
    return copy


@pytest.fixture
def created_stream(platform):
    """StreamGuard(Streams::created), on device 0."""
    s = hip.hipStreamCreate()
    yield s
    hip.hipSetDevice(0)
    hip.hipStreamDestroy(s)


@pytest.mark.parametrize("stream_type", ["nullstream", "perThread", "created"])
def test_Unit_hipMemcpyPeerAsync_Positive_Default(kmod, stream_type):
    stream = {"nullstream": None, "perThread": hip.hipStreamPerThread}.get(stream_type)
    if stream_type == "created":
        stream = hip.hipStreamCreate()
    try:
        p.positive_default(kmod, _synchronised(stream), stream, hip.hipHostMallocPortable)
    finally:
        hip.hipSetDevice(0)
        if stream_type == "created":
            hip.hipStreamDestroy(stream)


def test_Unit_hipMemcpyPeerAsync_Positive_Synchronization_Behavior(kmod, created_stream):
    hip.hipDeviceSynchronize()
    p.need_two_devices()
    src_device, dst_device = 0, 1
    with p.page_pair(src_device, dst_device) as pair:
        if pair is None:
            return
        src_alloc, dst_alloc = pair
        # LaunchDelayKernel on src_device's null stream: a gate here
        returned, status = p.returns_before_gates_open(
            kmod, [src_device],
            lambda: hip.hipMemcpyPeerAsync(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device,
                                           p.K_PAGE_SIZE, created_stream))
        assert returned, "hipMemcpyPeerAsync waited for the device work"
        assert status == hip.hipError_t.hipErrorNotReady


def test_Unit_hipMemcpyPeerAsync_Positive_ZeroSize(kmod, created_stream):
    p.positive_zero_size(kmod, _synchronised(created_stream), created_stream)


@pytest.mark.parametrize("section", ["Nullptr to Destination Pointer", "Nullptr to Source Pointer",
                                     "Passing more than allocated size", "Passing invalid Destination device ID",
                                     "Passing invalid Source device ID", "Passing invalid Stream"])
def test_Unit_hipMemcpyPeerAsync_Negative_Parameters(platform, created_stream, section):
    p.negative_parameters(hip.hipMemcpyPeerAsync, section, created_stream)
