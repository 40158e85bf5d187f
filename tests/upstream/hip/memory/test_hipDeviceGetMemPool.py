"""hipDeviceGetMemPool: a device's current pool is its default pool (creating a pool does not change
that), on every device; hipMallocAsync from it (release threshold UINT64_MAX) computes C = A + B."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.mempool_common import check_malloc_async, mempools_supported, pool_props

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipDeviceGetMemPool.cc"
NUM_ELM = 1024 * 1024
UINT64_MAX = 2**64 - 1


@pytest.mark.parametrize("section", ["Check current mempool is default mempool",
                                     "Allocating a mempool does not impact default mempool ctx"])
def test_Unit_hipDeviceGetMemPool_Basic(platform, section):
    mempools_supported(0)
    default = hip.hipDeviceGetDefaultMemPool(0)
    if section == "Check current mempool is default mempool":
        assert hip.hipDeviceGetMemPool(0) is default
        return
    user = hip.hipMemPoolCreate(pool_props(0))
    assert hip.hipDeviceGetMemPool(0) is default
    hip.hipMemPoolDestroy(user)


def test_Unit_hipDeviceGetMemPool_Functional(platform, kmod):
    mempools_supported(0)
    pool = hip.hipDeviceGetMemPool(0)
    hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, UINT64_MAX)
    try:
        assert check_malloc_async(kmod, NUM_ELM)
    finally:        # the default pool outlives the test: later tests expect its default threshold
        hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, 0)


def test_Unit_hipDeviceGetMemPool_Multidevice(platform):
    try:
        for i in range(hip.hipGetDeviceCount()):
            mempools_supported(i)
            hip.hipSetDevice(i)
            assert hip.hipDeviceGetMemPool(i) is hip.hipDeviceGetDefaultMemPool(i)
    finally:
        hip.hipSetDevice(0)


def test_Unit_hipDeviceGetDefaultMemPool_Functional(platform, kmod):
    mempools_supported(0)
    pool = hip.hipDeviceGetDefaultMemPool(0)
    hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, UINT64_MAX)
    try:
        assert check_malloc_async(kmod, NUM_ELM)
    finally:        # the default pool outlives the test: later tests expect its default threshold
        hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, 0)
