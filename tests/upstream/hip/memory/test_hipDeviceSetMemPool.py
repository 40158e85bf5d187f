"""hipDeviceSetMemPool: a created pool set on its device is what hipDeviceGetMemPool returns (the
default pool again once it is destroyed), and hipMallocAsync allocates from it (C = A + B), also with
its release threshold UINT64_MAX."""
from hostside import hip
from tests.upstream.hip.memory.mempool_common import check_malloc_async, mempools_supported, pool_props

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipDeviceSetMemPool.cc"
NUM_ELM = 1024 * 1024
UINT64_MAX = 2**64 - 1


def test_Unit_hipDeviceSetMemPool_Basic(platform):
    for dev in range(hip.hipGetDeviceCount()):
        mempools_supported(dev)
        pool = hip.hipMemPoolCreate(pool_props(dev))
        hip.hipDeviceSetMemPool(dev, pool)
        assert hip.hipDeviceGetMemPool(dev) is pool
        hip.hipMemPoolDestroy(pool)


def test_Unit_hipDeviceSetMemPool_DestroyCurrentMempool(platform):
    try:
        for dev in range(hip.hipGetDeviceCount()):
            mempools_supported(dev)
            hip.hipSetDevice(dev)
            pool = hip.hipMemPoolCreate(pool_props(dev))
            hip.hipDeviceSetMemPool(dev, pool)
            hip.hipMemPoolDestroy(pool)
            assert hip.hipDeviceGetMemPool(dev) is hip.hipDeviceGetDefaultMemPool(dev)
    finally:
        hip.hipSetDevice(0)


def _functional(kmod, threshold=None):
    mempools_supported(0)
    pool = hip.hipMemPoolCreate(pool_props(0))
    hip.hipDeviceSetMemPool(0, pool)
    if threshold is not None:
        hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, threshold)
    assert check_malloc_async(kmod, NUM_ELM)
    assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrUsedMemHigh) == 3 * 4 * NUM_ELM   # from this pool
    hip.hipMemPoolDestroy(pool)


def test_Unit_hipDeviceSetMemPool_functional(platform, kmod):
    _functional(kmod)


def test_Unit_hipDeviceSetMemPool_functionalAttribute(platform, kmod):
    _functional(kmod, UINT64_MAX)
