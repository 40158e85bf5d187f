"""hipModuleOccupancyMaxPotentialBlockSize on simple_kernel's SimpleKernel (the Negative_Parameters
TEST_CASE passes only null out-pointers: NOT_PORTED.md)."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import max_potential_block_size, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipModuleOccupancyMaxPotentialBlockSize.cc"


@pytest.mark.parametrize("section", ["dynSharedMemPerBlk = 0, blockSizeLimit = 0",
                                     "dynSharedMemPerBlk = sharedMemPerBlock, blockSizeLimit = maxThreadsPerBlock"])
def test_Unit_hipModuleOccupancyMaxPotentialBlockSize_Positive_RangeValidation(simple_kernel, section):
    p = props()
    shared, limit = (0, 0) if section.startswith("dynSharedMemPerBlk = 0") else (p.sharedMemPerBlock,
                                                                                 p.maxThreadsPerBlock)
    max_potential_block_size(lambda: hip.hipModuleOccupancyMaxPotentialBlockSize(simple_kernel, shared, limit),
                             p.maxThreadsPerBlock)
