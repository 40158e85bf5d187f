"""hipOccupancyMaxPotentialBlockSize on f1 and f2<int> (their hipFunction_t: hdemu has no host
symbols). Negative_Parameters has only null out-pointer SECTIONs (and one under ``#if 0``):
NOT_PORTED.md."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import max_potential_block_size, props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxPotentialBlockSize.cc"
SECTIONS = ["dynSharedMemPerBlk = 0, blockSizeLimit = 0",
            "dynSharedMemPerBlk = sharedMemPerBlock, blockSizeLimit = maxThreadsPerBlock"]


def _range(f, section):
    p = props()
    shared, limit = (0, 0) if section == SECTIONS[0] else (p.sharedMemPerBlock, p.maxThreadsPerBlock)
    max_potential_block_size(lambda: hip.hipOccupancyMaxPotentialBlockSize(f, shared, limit), p.maxThreadsPerBlock)


@pytest.mark.parametrize("section", SECTIONS)
def test_Unit_hipOccupancyMaxPotentialBlockSize_Positive_RangeValidation(kernels, section):
    _range(kernels["f1"], section)


@pytest.mark.parametrize("section", SECTIONS)
def test_Unit_hipOccupancyMaxPotentialBlockSize_Positive_TemplateInvocation(kernels, section):
    _range(kernels["f2"], section)
