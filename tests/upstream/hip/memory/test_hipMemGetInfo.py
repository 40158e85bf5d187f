"""hipMemGetInfo: free memory is at most the total, and drops below it once something is allocated."""
from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemGetInfo.cc"


def test_Unit_hipMemGetInfo_FreeLessThanTotal(platform):
    free_init, total_init = hip.hipMemGetInfo()
    assert free_init <= total_init
    a = hip.hipMalloc(1024)
    try:
        free, total = hip.hipMemGetInfo()
        assert free < total
        assert total == total_init
    finally:
        hip.hipFree(a)
