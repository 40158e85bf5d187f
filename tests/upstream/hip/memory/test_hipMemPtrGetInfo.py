"""hipMemPtrGetInfo gives the size hipMalloc was asked for, for three allocations of 1024 bytes (an
int, a float and a struct pointer upstream: the same bytes here)."""
from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemPtrGetInfo.cc"


def test_Unit_hipMemPtrGetInfo_Basic(platform):
    s_set_size = 1024
    ptrs = [hip.hipMalloc(s_set_size) for _ in range(3)]        # iPtr, fPtr, sPtr
    try:
        for p in ptrs:
            assert hip.hipMemPtrGetInfo(p) == s_set_size
    finally:
        for p in ptrs:
            hip.hipFree(p)
