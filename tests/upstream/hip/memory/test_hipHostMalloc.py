"""hipHostMalloc: mapped, write-combined and default pinned memory added by vectorADD through the device
pointers hipHostGetDevicePointer gives; coherent, non-coherent and default pinned memory written by a
kernel and read by the host after an event, stream or device synchronisation; the conflicting
Coherent | NonCoherent flags; more pinned memory than the device has, also touched by a kernel.
Unit_hipHostGetDevicePointer_NullCheck (a null out-pointer) has no Python form (NOT_PORTED.md)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import default_data, launch, vector_add

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostMalloc.cc"

SYNC_EVENT, SYNC_STREAM, SYNC_DEVICE = 0, 1, 2
MEMORY_PERCENT = 10
BLOCK_SIZE = 512
VALUE = 32
NUM_ELEMENTS = 1024 * 16
SIZE_BYTES = NUM_ELEMENTS * 4
#: the host pool of the platform the "more than the GPU has" cases run on (tests.upstream.hipkit.CONFIG)
HOST_POOL_BYTES = 32 << 20


def check_host_pointer(mod, num_elements, ptr, event_flags, sync_method):
    """CheckHostPointer: Set to -42 on the null stream, then to 13 on a stream with an event after it;
    after the chosen synchronisation the host sees 13 everywhere."""
    s = hip.hipStreamCreate()
    e = hip.hipEventCreateWithFlags(event_flags)
    grid, block = num_elements // 64, 64
    expected = 13
    launch(mod, "set_value", grid, block, [ptr, -42, num_elements], None)
    hip.hipDeviceSynchronize()
    launch(mod, "set_value", grid, block, [ptr, expected, num_elements], s)
    hip.hipEventRecord(e, s)
    if sync_method == SYNC_EVENT:
        hip.hipEventSynchronize(e)
    elif sync_method == SYNC_STREAM:
        hip.hipStreamSynchronize(s)
    else:
        hip.hipDeviceSynchronize()
    host = hip.host_array(ptr, np.int32, num_elements)
    mismatch = np.flatnonzero(host != expected)
    assert mismatch.size == 0, f"mismatch at {mismatch[0]}: {host[mismatch[0]]} != {expected}"
    hip.hipStreamDestroy(s)
    hip.hipEventDestroy(e)


@pytest.mark.xfail(strict=True, reason="hdemu: hipMemcpy(C_h, C_d, size, hipMemcpyDeviceToHost) with C_d the "
                   "hipHostGetDevicePointer of pinned C_h is hipErrorInvalidMemcpyDirection; CLR does not check "
                   "the kind against the memory (pinned memory is a buffer on either side) and copies")
def test_Unit_hipHostMalloc_Basic(kmod):
    length = 1024 * 1024
    size = length * 4                       # LEN * sizeof(float)
    if hip.hipGetDeviceProperties(hip.hipGetDevice()).canMapHostMemory != 1:
        return                              # SUCCEED("Does support HostPinned Memory")
    a_h = hip.hipHostMalloc(size, hip.hipHostMallocWriteCombined | hip.hipHostMallocMapped)
    b_h = hip.hipHostMalloc(size, hip.hipHostMallocDefault)
    c_h = hip.hipHostMalloc(size, hip.hipHostMallocMapped)
    b_d = None
    try:
        a_d = hip.hipHostGetDevicePointer(a_h, 0)
        c_d = hip.hipHostGetDevicePointer(c_h, 0)
        a, b, c = (hip.host_array(p, np.float32, length) for p in (a_h, b_h, c_h))
        a[:], b[:], c[:] = default_data(np.float32, length)
        b_d = hip.hipMalloc(size)
        hip.hipMemcpy(b_d, b_h, size, hip.hipMemcpyHostToDevice)
        vector_add(kmod, np.float32, a_d, b_d, c_d, length, grid=length // 512, block=512)
        hip.hipMemcpy(c_h, c_d, length * 4, hip.hipMemcpyDeviceToHost)
        hip.hipDeviceSynchronize()
        n = NUM_ELEMENTS                    # checkVectorADD(A_h, B_h, C_h, numElements): the first 16 Ki
        mismatch = np.flatnonzero(c[:n] != a[:n] + b[:n])
        assert mismatch.size == 0, f"{mismatch.size} mismatches, the first at {mismatch[0]}"
    finally:
        hip.hipFree(b_d)
        for p in (a_h, b_h, c_h):
            hip.hipHostFree(p)


def test_Unit_hipHostMalloc_Negative(platform):
    # the out-pointer staying null has no Python form: the call raises instead of returning one
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostMalloc(SIZE_BYTES, hip.hipHostMallocCoherent | hip.hipHostMallocNonCoherent)
    assert ei.value.error != hip.hipError_t.hipSuccess


def test_Unit_hipHostMalloc_NonCoherent(kmod):
    a = hip.hipHostMalloc(SIZE_BYTES, hip.hipHostMallocNonCoherent)
    try:
        for method in (SYNC_DEVICE, SYNC_STREAM, SYNC_EVENT):
            check_host_pointer(kmod, NUM_ELEMENTS, a, hip.hipEventReleaseToSystem, method)
    finally:
        hip.hipHostFree(a)


def test_Unit_hipHostMalloc_Coherent(kmod):
    try:
        a = hip.hipHostMalloc(SIZE_BYTES, hip.hipHostMallocCoherent)
    except hip.HipError:
        return                      # SUCCEED("Coherence memory allocation failed. Is SVM atomic supported?")
    try:
        for flags in (hip.hipEventReleaseToDevice, hip.hipEventReleaseToSystem):
            for method in (SYNC_DEVICE, SYNC_STREAM, SYNC_EVENT):
                check_host_pointer(kmod, NUM_ELEMENTS, a, flags, method)
    finally:
        hip.hipHostFree(a)


def test_Unit_hipHostMalloc_Default(kmod):
    a = hip.hipHostMalloc(SIZE_BYTES)
    try:
        for method in (SYNC_DEVICE, SYNC_STREAM, SYNC_EVENT):
            check_host_pointer(kmod, NUM_ELEMENTS, a, 0, method)
    finally:
        hip.hipHostFree(a)


def _more_than_gpu_memory() -> int:
    """allocsize: the device's total memory plus MEMORY_PERCENT of it (the Linux branch)."""
    _available, max_gpu_mem = hip.hipMemGetInfo()
    return max_gpu_mem + (max_gpu_mem * MEMORY_PERCENT) // 100


# Both run on a platform whose devices have 2 MiB (tests/upstream/hip/memory/conftest.py small_gpu),
# so that "more than the GPU has" stays a small allocation; the free host memory upstream compares with
# is the platform's pinned host pool.
def test_Unit_hipHostMalloc_AllocateMoreThanAvailGPUMemory(small_gpu):
    allocsize = _more_than_gpu_memory()
    assert allocsize < HOST_POOL_BYTES
    a = hip.hipHostMalloc(allocsize)
    hip.hipHostFree(a)


def test_Unit_hipHostMalloc_AllocateUseMoreThanAvailGPUMemory(small_gpu):
    allocsize = _more_than_gpu_memory()
    assert allocsize < HOST_POOL_BYTES
    a = hip.hipHostMalloc(allocsize)
    try:
        sample_size = 1024
        hip.hipMemset(a, 0, sample_size)
        grid_size = allocsize // BLOCK_SIZE
        launch(small_gpu.mod, "memory_fill_u8", grid_size, BLOCK_SIZE, [a, VALUE])
        hip.hipDeviceSynchronize()
        assert np.all(hip.host_array(a, np.uint8, grid_size * BLOCK_SIZE) == VALUE)
    finally:
        hip.hipHostFree(a)
