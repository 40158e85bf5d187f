"""hipStreamAttachMemAsync: managed memory attached to a created stream; attached globally (the null
stream), then written by a kernel on a stream of each device; attached to the host or to one stream while
kernels write other managed memory and the host writes the attached memory; a destroyed stream
(hipErrorContextIsDestroyed), a null pointer, a length neither 0 nor the allocation's, unknown flags,
hipMemAttachSingle on the null stream and pageable memory (hipErrorInvalidValue). Pageable memory is not
accessible to hdemu's devices (hipDeviceAttributePageableMemoryAccess 0): Positive_Pageable skips itself
and Negative_Parameters takes the "dev_ptr is pageable memory" branch, as upstream. Upstream's
hipDeviceAttributeManagedMemory gate is not applied: hdemu reports that attribute 0 though it has
hipMallocManaged and hipStreamAttachMemAsync, and the gate would make every case return at once."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import host_address, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipStreamAttachMemAsync.cc"

K_PAGE_SIZE = 4096
INT = 4
A = hip.hipDeviceAttribute_t


def _supported(attr) -> bool:
    """DeviceAttributesSupport(0, attr)."""
    return hip.hipDeviceGetAttribute(attr, 0) != 0


def _set(mod, ptr, value, stream) -> None:
    """HipTest::launchKernel(Set, 1, 1, 0, stream, ptr, value)."""
    launch(mod, "set_value", 1, 1, [ptr, value, 1], stream)


def _int_at(ptr: int) -> np.ndarray:
    return hip.host_array(ptr, np.int32, 1)


def test_Unit_hipStreamAttachMemAsync_Positive_Basic(platform):
    stream = hip.hipStreamCreate()
    managed = hip.hipMallocManaged(K_PAGE_SIZE, hip.hipMemAttachHost)
    try:
        hip.hipStreamAttachMemAsync(stream, managed, 0)
        hip.hipStreamSynchronize(stream)
    finally:
        hip.hipFree(managed)
        hip.hipStreamDestroy(stream)


def test_Unit_hipStreamAttachMemAsync_Positive_Pageable(platform):
    if not _supported(A.hipDeviceAttributePageableMemoryAccess):
        pytest.skip("Pageable memory access is not supported")
    stream = hip.hipStreamCreate()
    pageable = np.zeros(K_PAGE_SIZE, np.uint8)
    try:
        hip.hipStreamAttachMemAsync(stream, host_address(pageable), K_PAGE_SIZE)
        hip.hipStreamSynchronize(stream)
    finally:
        hip.hipStreamDestroy(stream)


def test_Unit_hipStreamAttachMemAsync_Positive_AttachGlobal(kmod):
    device_count = hip.hipGetDeviceCount()
    stream_count = 8 if device_count < 2 else device_count
    streams = []
    managed_global = None
    try:
        for i in range(stream_count):
            if device_count > 1:
                hip.hipSetDevice(i)
            streams.append(hip.hipStreamCreate())
        managed_global = hip.hipMallocManaged(INT * stream_count, hip.hipMemAttachHost)
        hip.hipStreamAttachMemAsync(None, managed_global, 0, hip.hipMemAttachGlobal)
        hip.hipStreamSynchronize(None)
        for i in range(stream_count):
            _set(kmod, managed_global + i * INT, i, streams[i])
        for s in streams:
            hip.hipStreamSynchronize(s)
        assert list(hip.host_array(managed_global, np.int32, stream_count)) == list(range(stream_count))
    finally:
        for s in streams:
            hip.hipStreamDestroy(s)
        hip.hipSetDevice(0)
        hip.hipFree(managed_global)


def test_Unit_hipStreamAttachMemAsync_Positive_AttachHost(kmod):
    if _supported(A.hipDeviceAttributeConcurrentManagedAccess):
        pytest.skip("Device supports concurrent managed access")
    stream = hip.hipStreamCreate()
    managed_global = hip.hipMallocManaged(INT)
    managed_host = hip.hipMallocManaged(INT)
    try:
        hip.hipStreamAttachMemAsync(stream, managed_host, 0, hip.hipMemAttachHost)
        hip.hipStreamSynchronize(stream)
        _set(kmod, managed_global, 32, stream)
        _int_at(managed_host)[0] = 64
        hip.hipStreamSynchronize(stream)
        assert _int_at(managed_global)[0] == 32
        assert _int_at(managed_host)[0] == 64
    finally:
        hip.hipFree(managed_global)
        hip.hipFree(managed_host)
        hip.hipStreamDestroy(stream)


def test_Unit_hipStreamAttachMemAsync_Positive_AttachSingle(kmod):
    if _supported(A.hipDeviceAttributeConcurrentManagedAccess):
        pytest.skip("Device supports concurrent managed access")
    stream1, stream2 = hip.hipStreamCreate(), hip.hipStreamCreate()
    managed_global = hip.hipMallocManaged(INT)
    managed_single = hip.hipMallocManaged(INT, hip.hipMemAttachHost)
    try:
        hip.hipStreamAttachMemAsync(stream1, managed_single, 0, hip.hipMemAttachSingle)
        hip.hipStreamSynchronize(stream1)
        _set(kmod, managed_single, 64, stream1)
        hip.hipStreamSynchronize(stream1)
        _set(kmod, managed_global, 32, stream2)
        assert _int_at(managed_single)[0] == 64
        _int_at(managed_single)[0] = 128
        hip.hipStreamSynchronize(stream2)
        assert _int_at(managed_global)[0] == 32
        assert _int_at(managed_single)[0] == 128
    finally:
        hip.hipFree(managed_global)
        hip.hipFree(managed_single)
        hip.hipStreamDestroy(stream1)
        hip.hipStreamDestroy(stream2)


@pytest.mark.parametrize("section", ["invalid stream", "dev_ptr == nullptr",
                                     "length is not zero nor entire allocation size", "invalid flags",
                                     "attach single to nullstream", "pageable memory"])
def test_Unit_hipStreamAttachMemAsync_Negative_Parameters(platform, section):
    # "pageable memory": upstream's "dev_ptr is pageable memory" on a device without pageable memory
    # access, else its "length is zero for pageable memory"
    stream = hip.hipStreamCreate()
    destroyed = False
    managed = hip.hipMallocManaged(K_PAGE_SIZE, hip.hipMemAttachHost)
    pageable = np.zeros(K_PAGE_SIZE, np.uint8)
    expected = hip.hipError_t.hipErrorInvalidValue
    try:
        if section == "invalid stream":
            hip.hipStreamDestroy(stream)
            destroyed = True
            call, expected = (stream, managed), hip.hipError_t.hipErrorContextIsDestroyed
        elif section == "dev_ptr == nullptr":
            call = (stream, None)
        elif section == "length is not zero nor entire allocation size":
            call = (stream, managed, K_PAGE_SIZE // 2)
        elif section == "invalid flags":
            call = (stream, managed, 0, hip.hipMemAttachGlobal | hip.hipMemAttachHost | hip.hipMemAttachSingle)
        elif section == "attach single to nullstream":
            call = (None, managed, 0, hip.hipMemAttachSingle)
        elif not _supported(A.hipDeviceAttributePageableMemoryAccess):
            call = (stream, host_address(pageable), K_PAGE_SIZE)       # dev_ptr is pageable memory
        else:
            call = (stream, host_address(pageable), 0)                 # length is zero for pageable memory
        with pytest.raises(hip.HipError) as ei:
            hip.hipStreamAttachMemAsync(*call)
        assert ei.value.error == expected
    finally:
        hip.hipFree(managed)
        if not destroyed:
            hip.hipStreamDestroy(stream)
