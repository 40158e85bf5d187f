"""hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags on simple_kernel's SimpleKernel."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import expect, max_active_blocks_per_multiprocessor, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags.cc"
F = hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags


# SECTION "numBlocks is nullptr" has no Python form.
@pytest.mark.parametrize("section", ["Block size is 0", "Flag is invalid"])
def test_Unit_hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_Negative_Parameters(simple_kernel, section):
    _grid, block = hip.hipModuleOccupancyMaxPotentialBlockSize(simple_kernel, 0, 0)
    if section == "Block size is 0":
        expect(hip.hipError_t.hipErrorInvalidValue, F, simple_kernel, 0, 0, hip.hipOccupancyDefault)
    else:
        expect(hip.hipError_t.hipErrorInvalidValue, F, simple_kernel, block, 0, 2)


@pytest.mark.parametrize("section", ["dynSharedMemPerBlk = 0", "dynSharedMemPerBlk = sharedMemPerBlock"])
def test_Unit_hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_Positive_RangeValidation(simple_kernel,
                                                                                                    section):
    p = props()
    shared = 0 if section == "dynSharedMemPerBlk = 0" else p.sharedMemPerBlock
    _grid, block = hip.hipModuleOccupancyMaxPotentialBlockSize(simple_kernel, shared, 0)
    max_active_blocks_per_multiprocessor(lambda: F(simple_kernel, block, shared, hip.hipOccupancyDefault),
                                         block, p.maxThreadsPerMultiProcessor)
