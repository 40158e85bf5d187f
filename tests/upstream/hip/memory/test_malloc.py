"""hipHostMalloc and hipMalloc of 4 bytes, then freed."""
from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/malloc.cc"


def test_Unit_hipHostMalloc_4bytes(platform):
    d_a = hip.hipHostMalloc(4, 0)
    assert d_a
    hip.hipHostFree(d_a)


def test_Unit_hipMalloc_4bytes(platform):
    d_a = hip.hipMalloc(4)
    assert d_a
    hip.hipFree(d_a)
