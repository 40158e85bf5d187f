"""The older hipOccupancyMaxActiveBlocksPerMultiprocessor tests, on f1 and f2<int> (their hipFunction_t:
hdemu has no host symbols)."""
from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxActiveBlocksPerMultiprocessor_old.cc"
OCCUPANCY_DISABLE_CACHING_OVERRIDE = 0x01


def _fails(fn, *args) -> bool:
    try:
        fn(*args)
    except hip.HipError:
        return True
    return False


def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_Negative(kernels):
    f1 = kernels["f1"]
    _grid, block = hip.hipOccupancyMaxPotentialBlockSize(f1, 0, 0)
    # (NULL, f1, blockSize, 0): a null out-pointer has no Python form
    assert _fails(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor, None, block, 0)
    assert _fails(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor, f1, 0, 0)
    assert _fails(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor, f1, 0, 2**64 - 1)
    hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f1, 32, 0, OCCUPANCY_DISABLE_CACHING_OVERRIDE)


def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_rangeValidation(kernels):
    f1 = kernels["f1"]
    _grid, block = hip.hipOccupancyMaxPotentialBlockSize(f1, 0, 0)
    p = props()
    n = hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f1, block, 0)
    assert n > 0 and n * block <= p.maxThreadsPerMultiProcessor
    n = hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f1, block, p.sharedMemPerBlock)
    assert n > 0 and n * block <= p.maxThreadsPerMultiProcessor


def test_Unit_hipOccupancyMaxActiveBlocksPerMultiprocessor_templateInvocation(kernels):
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(kernels["f2"], 32, 0) > 0
