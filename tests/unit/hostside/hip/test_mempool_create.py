"""Created memory pools (hostside/hip/_mempool.py): hipMemPoolCreate / Destroy, hipMallocFromPoolAsync,
hipDeviceSetMemPool and the pool's access flags, with CLR's error codes."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
MiB = 1 << 20


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 8, "host_pool_mib": 8, "engines": 1})


def props(device=0, **kw):
    return hip.hipMemPoolProps(allocType=hip.hipMemAllocationTypePinned,
                               location=hip.hipMemLocation(hip.hipMemLocationTypeDevice, device), **kw)


@pytest.fixture
def pools(mod):
    """pools(device=0, **props) -> a created pool, destroyed at the end (unless the test did)."""
    made = []

    def make(device=0, **kw):
        made.append(hip.hipMemPoolCreate(props(device, **kw)))
        return made[-1]
    yield make
    for p in made:
        if not p.destroyed:
            hip.hipMemPoolDestroy(p)
    hip.hipSetDevice(0)


def attr(pool, a):
    return hip.hipMemPoolGetAttribute(pool, a)


def err(fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    return ei.value.error


def free_bytes(device):
    hip.hipSetDevice(device)
    try:
        return hip.hipMemGetInfo()[0]
    finally:
        hip.hipSetDevice(0)


def test_memory_pools_are_reported_supported(mod):
    A = hip.hipDeviceAttribute_t
    for d in range(2):
        assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeMemoryPoolsSupported, d) == 1
        assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeMemoryPoolSupportedHandleTypes, d) == 0
        p = hip.hipGetDeviceProperties(d)
        assert (p.memoryPoolsSupported, p.memoryPoolSupportedHandleTypes) == (1, 0)


def test_many_cycles_on_a_stream_that_never_syncs(pools, stream):
    """120 x 1 MiB from a pool on an 8 MiB device, never synchronised: the pending frees are reaped
    (waited for when the device is full), the data of each block is the stream's."""
    pool = pools()
    pattern = np.arange(MiB // 4, dtype=np.int32)
    out = np.zeros(4, np.int32)
    for i in range(120):
        p = hip.hipMallocFromPoolAsync(MiB, pool, stream)
        hip.hipMemsetD32Async(p, i, MiB // 4, stream)
        if i % 40 == 0:
            hip.hipMemcpyAsync(p, pattern, MiB, hip.hipMemcpyHostToDevice, stream)
            hip.hipMemcpyAsync(out, p + MiB - 16, 16, hip.hipMemcpyDeviceToHost, stream)
        hip.hipFreeAsync(p, stream)
        assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0
    hip.hipStreamSynchronize(stream)
    assert list(out) == list(pattern[-4:])
    assert attr(pool, hip.hipMemPoolAttrReservedMemCurrent) == 0
    assert attr(pool, hip.hipMemPoolAttrUsedMemHigh) == MiB


def test_pool_on_device_1_is_device_1_memory(mod, pools, stream):
    """Allocated on a stream of device 0, a device-1 pool's block is device 1's: kernels of device 1 and
    copies use it, and it goes back to device 1."""
    pool = pools(1)
    before = free_bytes(1)
    n = 1024
    p = hip.hipMallocFromPoolAsync(4 * n, pool, stream)
    assert hip.hipPointerGetAttributes(p).device == 1
    assert free_bytes(1) < before
    hip.hipMemcpyAsync(p, np.zeros(n, np.int32), 4 * n, hip.hipMemcpyHostToDevice, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipSetDevice(1)
    s1 = hip.hipStreamCreate()
    try:
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), n // 64, 1, 1, 64, 1, 1, 0, s1,
                                  [p, n])
        out = np.zeros(n, np.int32)
        hip.hipMemcpyAsync(out, p, 4 * n, hip.hipMemcpyDeviceToHost, s1)
        hip.hipFreeAsync(p, s1)
        hip.hipStreamSynchronize(s1)
    finally:
        hip.hipStreamDestroy(s1)
        hip.hipSetDevice(0)
    assert (out == 1).all()
    assert attr(pool, hip.hipMemPoolAttrReservedMemCurrent) == 0
    assert free_bytes(1) == before


def test_destroy_with_outstanding_allocations(pools, stream):
    """As CLR: the destroy succeeds, the blocks stay usable and are freed by hipFreeAsync / hipFree;
    the handle is invalid afterwards and the device's current pool is its default one again."""
    pool = pools()
    before = free_bytes(0)
    a = hip.hipMallocFromPoolAsync(MiB, pool, stream)
    b = hip.hipMallocFromPoolAsync(MiB, pool, stream)
    hip.hipDeviceSetMemPool(0, pool)
    hip.hipMemPoolDestroy(pool)
    assert hip.hipDeviceGetMemPool(0) is hip.hipDeviceGetDefaultMemPool(0)
    for call, args in [(hip.hipMemPoolDestroy, ()), (hip.hipMemPoolGetAttribute, (hip.hipMemPoolAttrUsedMemCurrent,)),
                       (hip.hipMemPoolTrimTo, (0,)), (hip.hipDeviceSetMemPool, ())]:
        full = (0, pool) if call is hip.hipDeviceSetMemPool else (pool, *args)
        assert err(call, *full) == E.hipErrorInvalidValue
    assert err(hip.hipMallocFromPoolAsync, 16, pool, stream) == E.hipErrorInvalidValue
    data = np.arange(MiB // 4, dtype=np.int32)
    hip.hipMemcpyAsync(a, data, MiB, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemcpyAsync(b, a, MiB, hip.hipMemcpyDeviceToDevice, stream)
    out = np.zeros_like(data)
    hip.hipMemcpyAsync(out, b, MiB, hip.hipMemcpyDeviceToHost, stream)
    hip.hipFreeAsync(a, stream)
    hip.hipStreamSynchronize(stream)
    assert np.array_equal(out, data)
    hip.hipFree(b)
    assert err(hip.hipFreeAsync, a, stream) == E.hipErrorInvalidValue
    hip.hipMemPoolTrimTo(hip.hipDeviceGetDefaultMemPool(0), 0)       # reaps the pending free
    assert free_bytes(0) == before


def test_current_pool_serves_hipMallocAsync(pools, stream):
    pool = pools()
    default = hip.hipDeviceGetDefaultMemPool(0)
    assert hip.hipDeviceGetMemPool(0) is default
    hip.hipDeviceSetMemPool(0, pool)
    assert hip.hipDeviceGetMemPool(0) is pool
    used0 = attr(default, hip.hipMemPoolAttrUsedMemCurrent)
    p = hip.hipMallocAsync(4096, stream)
    assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 4096
    assert attr(default, hip.hipMemPoolAttrUsedMemCurrent) == used0
    hip.hipFreeAsync(p, stream)
    hip.hipStreamSynchronize(stream)
    assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0
    hip.hipDeviceSetMemPool(0, default)
    assert hip.hipDeviceGetMemPool(0) is default
    assert err(hip.hipDeviceSetMemPool, 1, pool) == E.hipErrorInvalidDevice    # a pool of device 0


def test_max_size_bounds_the_pool(pools, stream):
    pool = pools(maxSize=MiB)
    a = hip.hipMallocFromPoolAsync(768 * 1024, pool, stream)
    assert err(hip.hipMallocFromPoolAsync, 512 * 1024, pool, stream) == E.hipErrorOutOfMemory
    hip.hipFreeAsync(a, stream)
    b = hip.hipMallocFromPoolAsync(MiB, pool, stream)          # waits for the pending free
    hip.hipFreeAsync(b, stream)
    hip.hipStreamSynchronize(stream)
    assert attr(pool, hip.hipMemPoolAttrReservedMemHigh) <= MiB


def test_hipFree_of_a_pool_block_is_forgotten_by_the_pool(pools, stream):
    pool = pools()
    p = hip.hipMallocFromPoolAsync(8192, pool, stream)
    hip.hipFree(p)
    assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0
    q = hip.hipMallocFromPoolAsync(8192, pool, stream)
    hip.hipFreeAsync(q, stream)
    hip.hipStreamSynchronize(stream)
    assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0


def test_access_flags(pools):
    pool = pools(1)
    loc = hip.hipMemLocation
    D = hip.hipMemLocationTypeDevice
    assert hip.hipMemPoolGetAccess(pool, loc(D, 1)) == hip.hipMemAccessFlagsProtReadWrite
    assert hip.hipMemPoolGetAccess(pool, loc(D, 0)) == hip.hipMemAccessFlagsProtNone
    hip.hipMemPoolSetAccess(pool, [hip.hipMemAccessDesc(loc(D, 0), hip.hipMemAccessFlagsProtRead),
                                   hip.hipMemAccessDesc(loc(D, 1), hip.hipMemAccessFlagsProtRead)], 2)
    assert hip.hipMemPoolGetAccess(pool, loc(D, 0)) == hip.hipMemAccessFlagsProtRead
    assert hip.hipMemPoolGetAccess(pool, loc(D, 1)) == hip.hipMemAccessFlagsProtReadWrite  # the owner's stays
    hip.hipMemPoolSetAccess(pool, hip.hipMemAccessDesc(loc(D, 0), hip.hipMemAccessFlagsProtReadWrite))
    assert hip.hipMemPoolGetAccess(pool, loc(D, 0)) == hip.hipMemAccessFlagsProtReadWrite


_LOC = hip.hipMemLocation
_D = hip.hipMemLocationTypeDevice
_RW = hip.hipMemAccessFlagsProtReadWrite


def _desc(dev=0, flags=_RW, type_=_D):
    return hip.hipMemAccessDesc(_LOC(type_, dev), flags)


#: (name, call(pool, stream), error): every parameter of every new function
BAD = [
    ("create None", lambda p, s: hip.hipMemPoolCreate(None), E.hipErrorInvalidValue),
    ("create allocType invalid", lambda p, s: hip.hipMemPoolCreate(hip.hipMemPoolProps(
        location=_LOC(_D, 0))), E.hipErrorInvalidValue),
    ("create location type invalid", lambda p, s: hip.hipMemPoolCreate(hip.hipMemPoolProps(
        hip.hipMemAllocationTypePinned)), E.hipErrorInvalidValue),
    ("create location host", lambda p, s: hip.hipMemPoolCreate(hip.hipMemPoolProps(
        hip.hipMemAllocationTypePinned, location=_LOC(hip.hipMemLocationTypeHost, 0))), E.hipErrorInvalidValue),
    ("create location id = count", lambda p, s: hip.hipMemPoolCreate(props(2)), E.hipErrorInvalidValue),
    ("create location id < 0", lambda p, s: hip.hipMemPoolCreate(props(-1)), E.hipErrorInvalidValue),
    ("create maxSize < 0", lambda p, s: hip.hipMemPoolCreate(props(0, maxSize=-1)), E.hipErrorInvalidValue),
    ("destroy None", lambda p, s: hip.hipMemPoolDestroy(None), E.hipErrorInvalidValue),
    ("destroy default", lambda p, s: hip.hipMemPoolDestroy(hip.hipDeviceGetDefaultMemPool(1)), E.hipErrorInvalidValue),
    ("malloc pool None", lambda p, s: hip.hipMallocFromPoolAsync(16, None, s), E.hipErrorInvalidValue),
    ("malloc size < 0", lambda p, s: hip.hipMallocFromPoolAsync(-1, p, s), E.hipErrorInvalidValue),
    ("malloc size huge", lambda p, s: hip.hipMallocFromPoolAsync(1 << 40, p, s), E.hipErrorOutOfMemory),
    ("malloc stream bad", lambda p, s: hip.hipMallocFromPoolAsync(16, p, 0xdead), E.hipErrorInvalidHandle),
    ("malloc pool None before stream", lambda p, s: hip.hipMallocFromPoolAsync(16, None, 0xdead),
     E.hipErrorInvalidValue),
    ("set pool None", lambda p, s: hip.hipDeviceSetMemPool(0, None), E.hipErrorInvalidValue),
    ("set device = count", lambda p, s: hip.hipDeviceSetMemPool(2, p), E.hipErrorInvalidValue),
    ("set device < 0", lambda p, s: hip.hipDeviceSetMemPool(-1, p), E.hipErrorInvalidValue),
    ("set other device's pool", lambda p, s: hip.hipDeviceSetMemPool(1, p), E.hipErrorInvalidDevice),
    ("get device = count", lambda p, s: hip.hipDeviceGetMemPool(2), E.hipErrorInvalidValue),
    ("setaccess pool None", lambda p, s: hip.hipMemPoolSetAccess(None, [_desc()], 1), E.hipErrorInvalidValue),
    ("setaccess list None", lambda p, s: hip.hipMemPoolSetAccess(p, None, 1), E.hipErrorInvalidValue),
    ("setaccess count > devices", lambda p, s: hip.hipMemPoolSetAccess(p, [_desc()] * 3, 3), E.hipErrorInvalidDevice),
    ("setaccess location host", lambda p, s: hip.hipMemPoolSetAccess(
        p, [_desc(type_=hip.hipMemLocationTypeHost)], 1), E.hipErrorInvalidValue),
    ("setaccess device = count", lambda p, s: hip.hipMemPoolSetAccess(p, [_desc(2)], 1), E.hipErrorInvalidDevice),
    ("setaccess ProtNone", lambda p, s: hip.hipMemPoolSetAccess(
        p, [_desc(1, hip.hipMemAccessFlagsProtNone)], 1), E.hipErrorInvalidDevice),
    ("setaccess flags > ReadWrite", lambda p, s: hip.hipMemPoolSetAccess(p, [_desc(1, 4)], 1), E.hipErrorInvalidValue),
    ("getaccess pool None", lambda p, s: hip.hipMemPoolGetAccess(None, _LOC(_D, 0)), E.hipErrorInvalidValue),
    ("getaccess location None", lambda p, s: hip.hipMemPoolGetAccess(p, None), E.hipErrorInvalidValue),
    ("getaccess location host", lambda p, s: hip.hipMemPoolGetAccess(
        p, _LOC(hip.hipMemLocationTypeHost, 0)), E.hipErrorInvalidValue),
    ("getaccess device = count", lambda p, s: hip.hipMemPoolGetAccess(p, _LOC(_D, 2)), E.hipErrorInvalidValue),
]


@pytest.mark.parametrize("call,error", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_arguments(pools, stream, call, error):
    pool = pools()
    assert err(call, pool, stream) == error
    assert hip.hipGetLastError() == error
    assert hip.hipMallocFromPoolAsync(0, pool, stream) == 0       # the pool still works
    hip.hipFreeAsync(hip.hipMallocFromPoolAsync(64, pool, stream), stream)
    hip.hipStreamSynchronize(stream)
    assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0


def test_pending_block_is_reused_by_its_stream_only(pools, stream):
    """A block whose free is pending goes to the next allocation of the same size on the same stream
    (work after it is ordered after the work before the free), never to another stream."""
    pool = pools()
    n = MiB // 4
    p = hip.hipMallocFromPoolAsync(MiB, pool, stream)
    hip.hipMemsetD32Async(p, 7, n, stream)
    flag = hip.hipHostMalloc(8)
    view = hip.host_array(flag, np.uint32, 2)
    view[:] = 0
    hip.hipStreamWaitValue32(stream, flag, 1, hip.hipStreamWaitValueGte)     # held: the free stays pending
    hip.hipFreeAsync(p, stream)
    other = hip.hipStreamCreate()
    try:
        q = hip.hipMallocFromPoolAsync(MiB, pool, other)
        assert q != p
        r = hip.hipMallocFromPoolAsync(MiB, pool, stream)
        assert r == p
        assert attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 2 * MiB
        hip.hipMemsetD32Async(r, 9, n, stream)
        view[0] = 1
        out = np.zeros(n, np.int32)
        hip.hipMemcpyAsync(out, r, MiB, hip.hipMemcpyDeviceToHost, stream)
        assert (out == 9).all()
        for ptr, s in ((q, other), (r, stream)):
            hip.hipFreeAsync(ptr, s)
        hip.hipStreamSynchronize(stream)
        hip.hipStreamSynchronize(other)
    finally:
        view[0] = 1
        hip.hipStreamSynchronize(stream)
        hip.hipStreamDestroy(other)
        hip.hipHostFree(flag)
    assert attr(pool, hip.hipMemPoolAttrReservedMemCurrent) == 0
