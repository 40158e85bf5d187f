"""hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags on kern1 (its hipFunction_t: hdemu has no host
symbols); a failed call returns no numBlocks, so upstream's ``numBlocks == 0`` after an error is the
raised error here."""
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import expect

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags.cc"
F = hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
BLOCK_SIZE = 256


@pytest.mark.parametrize("section", ["hipOccupancyDefault no shared memory", "hipOccupancyDefault with shared memory",
                                     "hipOccupancyDisableCachingOverride no shared memory",
                                     "hipOccupancyDisableCachingOverride with shared memory"])
def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_ValidArgs(kernels, section):
    flags = hip.hipOccupancyDefault if section.startswith("hipOccupancyDefault") else \
        hip.hipOccupancyDisableCachingOverride
    shared = 256 if section.endswith("with shared memory") else 0
    assert F(kernels["kern1"], BLOCK_SIZE, shared, flags) > 0


# SECTION "Null numBlocks" has no Python form.
@pytest.mark.parametrize("section", ["Zero block size", "Null kernel", "Invalid flag", "Too large block size",
                                     "Too large shared memory size"])
def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_InvalidArgs(kernels, section):
    k, E = kernels["kern1"], hip.hipError_t
    if section == "Zero block size":
        expect(E.hipErrorInvalidValue, F, k, 0, 0, hip.hipOccupancyDefault)
    elif section == "Null kernel":
        expect(E.hipErrorInvalidDeviceFunction, F, None, BLOCK_SIZE, 0, hip.hipOccupancyDefault)
    elif section == "Invalid flag":
        expect(E.hipErrorInvalidValue, F, k, BLOCK_SIZE, 0, -1)
    elif section == "Too large block size":
        assert F(k, 2**31 - 1, 0, hip.hipOccupancyDefault) == 0
    else:
        assert F(k, BLOCK_SIZE, 2**31 - 1, hip.hipOccupancyDefault) == 0
