"""hipOccupancyMaxActiveBlocksPerMultiprocessor: upstream passes the host stubs of f1 and f2<int>;
hdemu has no host symbols, so their hipFunction_t stand in."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import expect, max_active_blocks_per_multiprocessor, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxActiveBlocksPerMultiprocessor.cc"
SECTIONS = ["dynSharedMemPerBlk = 0", "dynSharedMemPerBlk = sharedMemPerBlock"]


# SECTION "numBlocks is nullptr" has no Python form.
@pytest.mark.parametrize("section", ["Block size is 0", "Kernel function is NULL"])
def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_Negative_Parameters(kernels, section):
    _grid, block = hip.hipOccupancyMaxPotentialBlockSize(kernels["f1"], 0, 0)
    if section == "Block size is 0":
        expect(hip.hipError_t.hipErrorInvalidValue, hip.hipOccupancyMaxActiveBlocksPerMultiprocessor,
               kernels["f1"], 0, 0)
    else:
        expect(hip.hipError_t.hipErrorInvalidDeviceFunction, hip.hipOccupancyMaxActiveBlocksPerMultiprocessor,
               None, block, 0)


def _range(f, section):
    p = props()
    shared = 0 if section == SECTIONS[0] else p.sharedMemPerBlock
    _grid, block = hip.hipOccupancyMaxPotentialBlockSize(f, shared, 0)
    max_active_blocks_per_multiprocessor(lambda: hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, block, shared),
                                         block, p.maxThreadsPerMultiProcessor)


@pytest.mark.parametrize("section", SECTIONS)
def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_Positive_RangeValidation(kernels, section):
    _range(kernels["f1"], section)


@pytest.mark.parametrize("section", SECTIONS)
def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_Positive_TemplateInvocation(kernels, section):
    _range(kernels["f2"], section)
