"""hipModuleOccupancyMaxActiveBlocksPerMultiprocessor on simple_kernel's SimpleKernel."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import expect, max_active_blocks_per_multiprocessor, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.cc"


# SECTION "numBlocks is nullptr" has no Python form.
@pytest.mark.parametrize("section", ["Block size is 0"])
def test_Unit_hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_Negative_Parameters(simple_kernel, section):
    hip.hipModuleOccupancyMaxPotentialBlockSize(simple_kernel, 0, 0)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor,
           simple_kernel, 0, 0)


@pytest.mark.parametrize("section", ["dynSharedMemPerBlk = 0", "dynSharedMemPerBlk = sharedMemPerBlock"])
def test_Unit_hipModuleOccupancyMaxActiveBlocksPerMultiprocessor_Positive_RangeValidation(simple_kernel, section):
    p = props()
    shared = 0 if section == "dynSharedMemPerBlk = 0" else p.sharedMemPerBlock
    _grid, block = hip.hipModuleOccupancyMaxPotentialBlockSize(simple_kernel, shared, 0)
    max_active_blocks_per_multiprocessor(
        lambda: hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(simple_kernel, block, shared),
        block, p.maxThreadsPerMultiProcessor)
