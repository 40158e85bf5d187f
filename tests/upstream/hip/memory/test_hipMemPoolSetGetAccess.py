"""hipMemPoolSetAccess / hipMemPoolGetAccess: flags set for a device are read back (default and created
pools, every device pair), memory of one device's pool used by a kernel of another after access is
given, and CLR's error codes for bad pools, lists, counts, locations and flags."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.common import vector_set
from tests.upstream.hip.memory.hiptest_common import launch
from tests.upstream.hip.memory.mempool_common import (THREADS_PER_BLOCK, MemPoolGuard, access_desc, device_pairs,
                                                      load_kernels, mempools_supported, pool_props)

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemPoolSetGetAccess.cc"
E = hip.hipError_t
PAGE = 4096
NDEV = 2            # the platform's device count (tests.upstream.hipkit.CONFIG)
RW = hip.hipMemAccessFlagsProtReadWrite
DEV = hip.hipMemLocationTypeDevice


def mem_pool_set_get_access(kind, src_device, dst_device, flags):
    with MemPoolGuard(kind, src_device) as g:
        desc = access_desc(dst_device, flags)
        hip.hipMemPoolSetAccess(g.mempool, desc, 1)
        assert hip.hipMemPoolGetAccess(g.mempool, desc.location) == flags


@pytest.mark.parametrize("kind", ["dev_default", "created"])
@pytest.mark.parametrize("device", range(NDEV))
def test_Unit_hipMemPoolSetGetAccess_Positive_Basic(platform, device, kind):
    mempools_supported(device)
    mem_pool_set_get_access(kind, device, device, RW)


@pytest.mark.parametrize("kind", ["dev_default", "created"])
@pytest.mark.parametrize("src_device,dst_device", [(s, d) for s in range(NDEV) for d in range(NDEV)])
def test_Unit_hipMemPoolSetGetAccess_Positive_MultipleGPU(platform, src_device, dst_device, kind):
    mempools_supported(src_device)
    mempools_supported(dst_device)
    try:
        hip.hipSetDevice(src_device)
        if hip.hipDeviceCanAccessPeer(src_device, dst_device):
            mem_pool_set_get_access(kind, src_device, dst_device, RW)
    finally:
        hip.hipSetDevice(0)


def _p2p(mod, kind, src_device, dst_device, size):
    hip.hipSetDevice(src_device)
    if not hip.hipDeviceCanAccessPeer(src_device, dst_device):
        return
    kernels = load_kernels()
    host = np.zeros(size // 4, np.int32)
    wait_on_stream1 = hip.hipEventCreate()
    stream1 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    with MemPoolGuard(kind, src_device) as g:
        mem1 = (hip.hipMallocAsync(size, stream1) if kind == "dev_default"
                else hip.hipMallocFromPoolAsync(size, g.mempool, stream1))
        n = size // 4
        vector_set(mod, mem1, 15, n, stream1)
        hip.hipEventRecord(wait_on_stream1, stream1)
        hip.hipSetDevice(dst_device)
        stream2 = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
        mem2 = hip.hipMallocAsync(size, stream2)
        desc = access_desc(dst_device, RW)
        hip.hipMemPoolSetAccess(g.mempool, desc, 1)
        assert hip.hipMemPoolGetAccess(g.mempool, desc.location) == RW
        hip.hipStreamWaitEvent(stream2, wait_on_stream1, 0)
        launch(kernels, "copy_p2p_and_scale", n // 1024 + 1, 1024, [mem2, mem1, n], stream2)
        hip.hipMemcpyAsync(host, mem2, size, hip.hipMemcpyDeviceToHost, stream2)
        hip.hipFreeAsync(mem1, stream2)
        hip.hipFreeAsync(mem2, stream2)
        hip.hipStreamSynchronize(stream2)
        assert (host == 30).all()
        hip.hipStreamDestroy(stream2)
    hip.hipSetDevice(src_device)
    hip.hipStreamDestroy(stream1)
    hip.hipEventDestroy(wait_on_stream1)
    hip.hipModuleUnload(kernels)


@pytest.mark.parametrize("section", ["Default MemPool", "Created MemPool"])
def test_Unit_hipMemPoolSetGetAccess_Positive_P2P(platform, kmod, section):
    kind = "dev_default" if section == "Default MemPool" else "created"
    try:
        for src in range(NDEV):
            for dst in range(NDEV):
                for size in (PAGE // 2, PAGE, PAGE * 2):
                    _p2p(kmod, kind, src, dst, size)
    finally:
        hip.hipSetDevice(0)


# SECTION "Desc is nullptr and count is > 0" is the list None.
@pytest.mark.parametrize("section,error", [
    ("Mempool is nullptr", E.hipErrorInvalidValue), ("Desc is nullptr and count is > 0", E.hipErrorInvalidValue),
    ("Count > num_device", E.hipErrorInvalidDevice), ("Passing invalid desc location type", E.hipErrorInvalidValue),
    ("Passing invalid desc location id", E.hipErrorInvalidDevice),
    ("Revoking access to own memory pool", E.hipErrorInvalidDevice)])
def test_Unit_hipMemPoolSetAccess_Negative_Parameters(platform, section, error):
    hip.hipSetDevice(0)
    mempools_supported(0)
    with MemPoolGuard("dev_default", 0) as g:
        pool, desc, count = g.mempool, access_desc(0, RW), 1
        if section == "Mempool is nullptr":
            pool = None
        elif section == "Desc is nullptr and count is > 0":
            desc = None
        elif section == "Count > num_device":
            count = hip.hipGetDeviceCount() + 1
        elif section == "Passing invalid desc location type":
            desc.location.type = hip.hipMemLocationTypeInvalid
        elif section == "Passing invalid desc location id":
            desc.location.id = hip.hipGetDeviceCount()
        else:
            desc.flags = hip.hipMemAccessFlagsProtNone
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemPoolSetAccess(pool, desc, count)
        assert ei.value.error == error


def _check_mempool_set_access(mod, n, dev0, dev1):
    hip.hipSetDevice(dev0)
    pool = hip.hipMemPoolCreate(pool_props(dev0))
    i = np.arange(n, dtype=np.int32)
    a_h, b_h, c_h = 2 * i + 1, 2 * i, np.zeros(n, np.int32)
    nbytes = 4 * n
    stream0 = hip.hipStreamCreate()
    a_d0, b_d0 = (hip.hipMallocFromPoolAsync(nbytes, pool, stream0) for _ in range(2))
    hip.hipMemcpyAsync(a_d0, a_h, nbytes, hip.hipMemcpyHostToDevice, stream0)
    hip.hipMemcpyAsync(b_d0, b_h, nbytes, hip.hipMemcpyHostToDevice, stream0)
    hip.hipStreamSynchronize(stream0)
    hip.hipStreamDestroy(stream0)
    hip.hipSetDevice(dev1)
    hip.hipMemPoolSetAccess(pool, access_desc(dev1, RW), 1)
    stream1 = hip.hipStreamCreate()
    a_d1, b_d1, c_d1 = (hip.hipMallocFromPoolAsync(nbytes, pool, stream1) for _ in range(3))
    hip.hipMemcpyAsync(a_d1, a_d0, nbytes, hip.hipMemcpyDeviceToDevice, stream1)
    hip.hipMemcpyAsync(b_d1, b_d0, nbytes, hip.hipMemcpyDeviceToDevice, stream1)
    launch(mod, "vectorADD_i32", n // THREADS_PER_BLOCK, THREADS_PER_BLOCK, [a_d1, b_d1, c_d1, n], stream1)
    hip.hipMemcpyAsync(c_h, c_d1, nbytes, hip.hipMemcpyDeviceToHost, stream1)
    for p in (a_d1, b_d1, c_d1):
        hip.hipFreeAsync(p, stream1)
    hip.hipStreamSynchronize(stream1)
    hip.hipStreamDestroy(stream1)
    hip.hipSetDevice(dev0)
    hip.hipMemPoolDestroy(pool)     # A_d0 and B_d0 outstanding (upstream never frees them) ...
    hip.hipFree(a_d0)               # ... freed here: the platform is shared
    hip.hipFree(b_d0)
    assert np.array_equal(c_h, a_h + b_h)
    return True


def test_Unit_hipMemPoolSetAccess_SetAccess(platform, kmod):
    n = 1 << 14
    assert hip.hipGetDeviceCount() >= 2            # checkIfMultiDev
    try:
        for dev0, dev1 in device_pairs(hip.hipGetDeviceCount()):
            mempools_supported(dev0)
            assert hip.hipDeviceCanAccessPeer(dev0, dev1)
            assert _check_mempool_set_access(kmod, n, dev0, dev1)
    finally:
        hip.hipSetDevice(0)


@pytest.mark.parametrize("section", ["memPool NULL check", "Invalid Flag", "Invalid location type",
                                     "Invalid device number", "Unavailable device number"])
def test_Unit_hipMemPoolSetAccess_NegTst(platform, section):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    try:
        desc, error, target = access_desc(0, RW), E.hipErrorInvalidDevice, pool
        if section == "memPool NULL check":
            target, error = None, E.hipErrorInvalidValue
        elif section == "Invalid Flag":
            desc.flags, error = 0xffff, E.hipErrorInvalidValue
        elif section == "Invalid location type":
            desc.location.type, error = hip.hipMemLocationTypeInvalid, E.hipErrorInvalidValue
        elif section == "Invalid device number":
            desc.location.id = -1
        else:
            desc.location.id = hip.hipGetDeviceCount()
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemPoolSetAccess(target, desc, 1)
        assert ei.value.error == error
    finally:
        hip.hipMemPoolDestroy(pool)


# SECTION "Flags is nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["Mempool is nullptr", "Passing invalid location type",
                                     "Passing invalid location id"])
def test_Unit_hipMemPoolGetAccess_Negative_Parameters(platform, section):
    hip.hipSetDevice(0)
    mempools_supported(0)
    with MemPoolGuard("dev_default", 0) as g:
        pool, location = g.mempool, hip.hipMemLocation(DEV, 0)
        if section == "Mempool is nullptr":
            pool = None
        elif section == "Passing invalid location type":
            location.type = hip.hipMemLocationTypeInvalid
        else:
            location.id = hip.hipGetDeviceCount()
        with pytest.raises(hip.HipError) as ei:
            hip.hipMemPoolGetAccess(pool, location)
        assert ei.value.error == E.hipErrorInvalidValue


def _set_access_with_get(dev0, dev1):
    pool = hip.hipMemPoolCreate(pool_props(dev0))
    hip.hipMemPoolSetAccess(pool, access_desc(dev1, RW), 1)
    assert hip.hipMemPoolGetAccess(pool, hip.hipMemLocation(DEV, dev1)) == RW
    assert hip.hipMemPoolGetAccess(pool, hip.hipMemLocation(DEV, dev0)) == RW
    hip.hipMemPoolDestroy(pool)
    return True


def _set_access_with_get_using_array(dev0, dev1):
    pool = hip.hipMemPoolCreate(pool_props(dev0))
    hip.hipMemPoolSetAccess(pool, [access_desc(dev0, RW), access_desc(dev1, RW)], 2)
    assert hip.hipMemPoolGetAccess(pool, hip.hipMemLocation(DEV, dev0)) == RW
    assert hip.hipMemPoolGetAccess(pool, hip.hipMemLocation(DEV, dev1)) == RW
    hip.hipMemPoolDestroy(pool)     # upstream leaves the pool; destroyed here (the platform is shared)
    return True


def test_Unit_hipMemPoolGetAccess_SetGet(platform):
    assert hip.hipGetDeviceCount() >= 2            # checkIfMultiDev
    for dev0, dev1 in device_pairs(hip.hipGetDeviceCount()):
        mempools_supported(dev0)
        assert hip.hipDeviceCanAccessPeer(dev0, dev1)
        assert _set_access_with_get(dev0, dev1)
        assert _set_access_with_get_using_array(dev0, dev1)


def test_Unit_hipMemPoolGetAccess_GetDefMempoolOfEachDevice(platform):
    for dev in range(hip.hipGetDeviceCount()):
        mempools_supported(dev)
        pool = hip.hipDeviceGetDefaultMemPool(dev)
        assert hip.hipMemPoolGetAccess(pool, hip.hipMemLocation(DEV, dev)) == RW
