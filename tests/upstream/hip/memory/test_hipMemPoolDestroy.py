"""hipMemPoolDestroy: None, a second destroy and a device's default pool are hipErrorInvalidValue."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.mempool_common import mempools_supported, pool_props

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemPoolDestroy.cc"


@pytest.mark.parametrize("section", ["Passing nullptr to mempool", "Double hipMemPoolDestroy",
                                     "Attempt to destroy default mempool"])
def test_Unit_hipMemPoolDestroy_Negative_Parameter(platform, section):
    mempools_supported(0)
    if section == "Passing nullptr to mempool":
        pool = None
    elif section == "Double hipMemPoolDestroy":
        pool = hip.hipMemPoolCreate(pool_props(0, handleTypes=hip.hipMemHandleTypeNone))
        hip.hipMemPoolDestroy(pool)
    else:
        pool = hip.hipDeviceGetDefaultMemPool(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipMemPoolDestroy(pool)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
