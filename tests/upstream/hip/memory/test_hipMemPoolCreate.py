"""hipMemPoolCreate: bad props (None, alloc type, location type, location id) are hipErrorInvalidValue; a
pool's maxSize bounds what it hands out (hipErrorOutOfMemory beyond); pools on every device, and
memory of device 0's pool allocated in device 1's context used by a kernel of device 0.

The maxSize cases allocate 512 MiB and 513 MiB upstream (maxSize 1 GiB); the platform's devices have
32 MiB, so they are scaled by 1/64 (8 MiB and 8 MiB + 128 KiB, maxSize 16 MiB)."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import launch
from tests.upstream.hip.memory.mempool_common import mempools_supported, pool_props

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemPoolCreate.cc"
E = hip.hipError_t
MiB = 1 << 20
SCALE = 64
# SECTION "Passing nullptr to mem_pool" (a null out-pointer) has no Python form.


@pytest.mark.parametrize("section", ["Passing nullptr to props", "Passing invalid props alloc type",
                                     "Passing invalid props location type", "Passing invalid props location id"])
def test_Unit_hipMemPoolCreate_Negative_Parameter(platform, section):
    mempools_supported(0)
    props = pool_props(0, handleTypes=hip.hipMemHandleTypeNone)
    if section == "Passing nullptr to props":
        props = None
    elif section == "Passing invalid props alloc type":
        props.allocType = hip.hipMemAllocationTypeInvalid
    elif section == "Passing invalid props location type":
        props.location.type = hip.hipMemLocationTypeInvalid
    else:
        props.location.id = hip.hipGetDeviceCount()
    with pytest.raises(hip.HipError) as ei:
        hip.hipMemPoolCreate(props)
    assert ei.value.error == E.hipErrorInvalidValue


def _two_allocs(max_size: int):
    mempools_supported(0)
    stream = hip.hipStreamCreate()
    pool = hip.hipMemPoolCreate(pool_props(0, maxSize=max_size))
    a = hip.hipMallocFromPoolAsync(512 * MiB // SCALE, pool, stream)
    return stream, pool, a


def test_Unit_hipMemPoolCreate_With_maxSize(platform):
    stream, pool, a = _two_allocs(1024 * MiB // SCALE)
    with pytest.raises(hip.HipError) as ei:
        hip.hipMallocFromPoolAsync(513 * MiB // SCALE, pool, stream)
    assert ei.value.error == E.hipErrorOutOfMemory
    hip.hipMemPoolDestroy(pool)                 # with A outstanding, as upstream (which never frees it)
    hip.hipFreeAsync(a, stream)                 # (freed here: the platform is shared)
    hip.hipStreamDestroy(stream)


def test_Unit_hipMemPoolCreate_Without_maxSize(platform):
    stream, pool, a = _two_allocs(0)
    b = hip.hipMallocFromPoolAsync(513 * MiB // SCALE, pool, stream)
    hip.hipMemPoolDestroy(pool)
    for p in (a, b):
        hip.hipFreeAsync(p, stream)
    hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("section", ["Simple Device Test", "Accessibility Test"])
def test_Unit_hipMemPoolCreate_DeviceTest(platform, kmod, section):
    mempools_supported(0)
    num_devices = hip.hipGetDeviceCount()
    assert num_devices >= 2                     # checkIfMultiDev
    if section == "Simple Device Test":
        for dev in range(num_devices):
            hip.hipMemPoolDestroy(hip.hipMemPoolCreate(pool_props(dev)))
        return
    n, threads = 1 << 12, 64
    pool = hip.hipMemPoolCreate(pool_props(0))
    try:
        for dev in range(1, num_devices):
            hip.hipSetDevice(dev)
            a_d = hip.hipMallocFromPoolAsync(4 * n, pool, None)
            hip.hipStreamSynchronize(None)
            hip.hipSetDevice(0)
            launch(kmod, "global_ids", n // threads, threads, [a_d], None)     # setKer: devptr[tid] = tid
            hip.hipFreeAsync(a_d, None)
            hip.hipStreamSynchronize(None)
    finally:
        hip.hipSetDevice(0)
        hip.hipMemPoolDestroy(pool)
