"""hipMemcpyPeerAsync between every pair of devices with peer access enabled (pairs of one device have
none: upstream's INFO branch), on the null, per-thread and a created stream, for each size; a copy on a
created stream returns while the null stream is busy; a size of 0 copies nothing; null pointers, a size
past the allocation, a device id out of range and a destroyed stream."""
import pytest

from hostside import hip
from tests.upstream.hip.memory import peer_common as p
from tests.upstream.hip.memory.common import Alloc, invalid_stream

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyPeerAsync.cc"


def _need_two_devices() -> int:
    device_count = hip.hipGetDeviceCount()
    if device_count < 2:
        pytest.skip("Skipping because devices < 2")
    return device_count


@pytest.fixture
def created_stream(platform):
    """StreamGuard(Streams::created), on device 0."""
    s = hip.hipStreamCreate()
    yield s
    hip.hipSetDevice(0)
    hip.hipStreamDestroy(s)


@pytest.mark.parametrize("stream_type", ["nullstream", "perThread", "created"])
def test_Unit_hipMemcpyPeerAsync_Positive_Default(kmod, stream_type):
    device_count = _need_two_devices()
    stream = {"nullstream": None, "perThread": hip.hipStreamPerThread}.get(stream_type)
    if stream_type == "created":
        stream = hip.hipStreamCreate()
    try:
        for allocation_size in p.SIZES:
            for src_device in range(device_count):
                for dst_device in range(device_count):
                    with p.peer_access(src_device, dst_device) as can_access_peer:
                        if not can_access_peer:
                            continue    # INFO("Peer access cannot be enabled between devices ...")
                        with Alloc("hipMalloc", allocation_size) as src_alloc, \
                                Alloc("hipHostMalloc", allocation_size, hip.hipHostMallocPortable) as result:
                            hip.hipSetDevice(dst_device)
                            with Alloc("hipMalloc", allocation_size) as dst_alloc:
                                element_count = allocation_size // 4
                                expected_value = 22
                                hip.hipSetDevice(src_device)
                                p.vector_set(kmod, src_alloc.ptr, expected_value, element_count, stream)
                                hip.hipGetLastError()
                                hip.hipMemcpyPeerAsync(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device,
                                                       allocation_size, stream)
                                hip.hipStreamSynchronize(stream)
                                hip.hipMemcpy(result.ptr, dst_alloc.ptr, allocation_size, hip.hipMemcpyDeviceToHost)
                                assert (result.host == expected_value).all(), (allocation_size, src_device, dst_device)
    finally:
        hip.hipSetDevice(0)
        if stream_type == "created":
            hip.hipStreamDestroy(stream)


def test_Unit_hipMemcpyPeerAsync_Positive_Synchronization_Behavior(kmod, created_stream):
    hip.hipDeviceSynchronize()
    _need_two_devices()
    src_device, dst_device = 0, 1
    with p.peer_access(src_device, dst_device) as can_access_peer:
        if not can_access_peer:
            return
        with Alloc("hipMalloc", p.K_PAGE_SIZE) as src_alloc:
            hip.hipSetDevice(dst_device)
            with Alloc("hipMalloc", p.K_PAGE_SIZE) as dst_alloc:
                # LaunchDelayKernel on src_device's null stream: a gate here
                returned, status = p.returns_before_gates_open(
                    kmod, [src_device],
                    lambda: hip.hipMemcpyPeerAsync(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device,
                                                   p.K_PAGE_SIZE, created_stream))
                assert returned, "hipMemcpyPeerAsync waited for the device work"
                assert status == hip.hipError_t.hipErrorNotReady


def test_Unit_hipMemcpyPeerAsync_Positive_ZeroSize(kmod, created_stream):
    _need_two_devices()
    stream = created_stream
    src_device, dst_device = 0, 1
    allocation_size = p.K_PAGE_SIZE
    with p.peer_access(src_device, dst_device) as can_access_peer:
        if not can_access_peer:
            return
        with Alloc("hipMalloc", allocation_size) as src_alloc, \
                Alloc("hipHostMalloc", allocation_size, hip.hipHostMallocPortable) as result:
            hip.hipSetDevice(dst_device)
            with Alloc("hipMalloc", allocation_size) as dst_alloc:
                element_count = allocation_size // 4
                hip.hipSetDevice(src_device)
                p.vector_set(kmod, src_alloc.ptr, 22, element_count, stream)
                hip.hipGetLastError()
                expected_value = 20
                hip.hipSetDevice(dst_device)
                p.vector_set(kmod, dst_alloc.ptr, expected_value, element_count, stream)
                hip.hipGetLastError()
                hip.hipSetDevice(src_device)
                result.host[:] = 21
                hip.hipMemcpyPeerAsync(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, 0, stream)
                hip.hipStreamSynchronize(stream)
                hip.hipMemcpy(result.ptr, dst_alloc.ptr, allocation_size, hip.hipMemcpyDeviceToHost)
                assert (result.host == expected_value).all()


@pytest.mark.parametrize("section", ["Nullptr to Destination Pointer", "Nullptr to Source Pointer",
                                     "Passing more than allocated size", "Passing invalid Destination device ID",
                                     "Passing invalid Source device ID", "Passing invalid Stream"])
def test_Unit_hipMemcpyPeerAsync_Negative_Parameters(platform, created_stream, section):
    device_count = _need_two_devices()
    stream = created_stream
    src_device, dst_device = 0, 1
    with p.peer_access(src_device, dst_device) as can_access_peer:
        if not can_access_peer:
            return
        with Alloc("hipMalloc", p.K_PAGE_SIZE) as src_alloc:
            hip.hipSetDevice(dst_device)
            with Alloc("hipMalloc", p.K_PAGE_SIZE) as dst_alloc:
                hip.hipSetDevice(src_device)
                n = p.K_PAGE_SIZE
                args, expected = {
                    "Nullptr to Destination Pointer": ((None, dst_device, src_alloc.ptr, src_device, n, stream),
                                                       "hipErrorInvalidValue"),
                    "Nullptr to Source Pointer": ((dst_alloc.ptr, dst_device, None, src_device, n, stream),
                                                  "hipErrorInvalidValue"),
                    "Passing more than allocated size": ((dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, n + 1,
                                                          stream), "hipErrorInvalidValue"),
                    "Passing invalid Destination device ID": ((dst_alloc.ptr, device_count, src_alloc.ptr, src_device,
                                                               n, stream), "hipErrorInvalidDevice"),
                    "Passing invalid Source device ID": ((dst_alloc.ptr, dst_device, src_alloc.ptr, device_count, n,
                                                          stream), "hipErrorInvalidDevice"),
                    "Passing invalid Stream": ((dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, n,
                                                invalid_stream()), "hipErrorContextIsDestroyed"),
                }[section]
                with pytest.raises(hip.HipError) as ei:
                    hip.hipMemcpyPeerAsync(*args)
                assert ei.value.error == hip.hipError_t[expected]
