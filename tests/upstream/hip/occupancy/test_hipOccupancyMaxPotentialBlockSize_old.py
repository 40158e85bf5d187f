"""The older hipOccupancyMaxPotentialBlockSize tests, on f1 and f2<int> (their hipFunction_t: hdemu
has no host symbols)."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxPotentialBlockSize_old.cc"


def test_Unit_hipOccupancyMaxPotentialBlockSize_Negative(kernels):
    # (NULL, &blockSize, ...) and (&gridSize, NULL, ...): null out-pointers have no Python form
    with pytest.raises(hip.HipError):
        hip.hipOccupancyMaxPotentialBlockSize(None, 0, 0)


def test_Unit_hipOccupancyMaxPotentialBlockSize_rangeValidation(kernels):
    f1 = kernels["f1"]
    p = props()
    for shared, limit in ((0, 0), (p.sharedMemPerBlock, p.maxThreadsPerBlock)):
        grid, block = hip.hipOccupancyMaxPotentialBlockSize(f1, shared, limit)
        assert grid > 0 and block > 0
        assert block <= p.maxThreadsPerBlock


def test_Unit_hipOccupancyMaxPotentialBlockSize_templateInvocation(kernels):
    grid, block = hip.hipOccupancyMaxPotentialBlockSize(kernels["f2"], 0, 0)
    assert grid > 0 and block > 0
