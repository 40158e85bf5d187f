"""hipModuleOccupancyMaxPotentialBlockSizeWithFlags on simple_kernel's SimpleKernel."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import expect, max_potential_block_size, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipModuleOccupancyMaxPotentialBlockSizeWithFlags.cc"
F = hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags


# SECTIONs "gridSize is nullptr" and "blockSize is nullptr" have no Python form.
@pytest.mark.parametrize("section", ["Flag is invalid"])
def test_Unit_hipModuleOccupancyMaxPotentialBlockSizeWithFlags_Negative_Parameters(simple_kernel, section):
    expect(hip.hipError_t.hipErrorInvalidValue, F, simple_kernel, 0, 0, 2)


@pytest.mark.parametrize("section", ["dynSharedMemPerBlk = 0, blockSizeLimit = 0",
                                     "dynSharedMemPerBlk = sharedMemPerBlock, blockSizeLimit = maxThreadsPerBlock"])
def test_Unit_hipModuleOccupancyMaxPotentialBlockSizeWithFlags_Positive_RangeValidation(simple_kernel, section):
    p = props()
    shared, limit = (0, 0) if section.startswith("dynSharedMemPerBlk = 0") else (p.sharedMemPerBlock,
                                                                                 p.maxThreadsPerBlock)
    max_potential_block_size(lambda: F(simple_kernel, shared, limit, hip.hipOccupancyDefault), p.maxThreadsPerBlock)
