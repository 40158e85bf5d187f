"""hipMemset of 4 bytes of device memory and of pinned host memory."""
import numpy as np

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/memset.cc"


def test_Unit_hipMemset_4bytes(platform):
    d_a = hip.hipMalloc(4)
    hip.hipMemset(d_a, 0, 4)
    hip.hipFree(d_a)


def test_Unit_hipMemset_4bytes_hostMem(platform):
    d_a = hip.hipHostMalloc(4, 0)
    view = hip.host_array(d_a, np.int32, 1)
    view[0] = -1
    hip.hipMemset(d_a, 0, 4)
    assert view[0] == 0                 # not upstream's: shows the memset happened
    hip.hipHostFree(d_a)
