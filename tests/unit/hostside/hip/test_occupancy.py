"""The occupancy calls added to match CLR (hostside/hip/_occupancy.py): the *WithFlags variants
(hipamd/src/hip_platform.cpp: flags hipOccupancyDefault or hipOccupancyDisableCachingOverride, the
order of the checks) and the header's hipOccupancyMaxPotentialBlockSizeVariableSMem(WithFlags)."""
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 3})


@pytest.fixture
def f(mod):
    return hip.hipModuleGetFunction(mod, "empty")


def expect(err, fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == err, f"{fn.__name__}: {ei.value.name}, expected {err.name}: {ei.value}"
    assert hip.hipGetLastError() == err


@pytest.mark.parametrize("flags", [hip.hipOccupancyDefault, hip.hipOccupancyDisableCachingOverride])
def test_with_flags_as_without(f, flags):
    cus = hip.hipGetDeviceProperties(0).multiProcessorCount
    assert cus == 3
    assert hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f, 0, 100, flags) == (16 * cus, 128)
    assert hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f, 65536, 0, flags) == (cus, 1024)
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 256, 0, flags) == 8
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 64, 32768, flags) == 2
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 65, 0, flags) == 16
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 2**31 - 1, 0, flags) == 0
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 256, 2**31 - 1, flags) == 0


def test_with_flags_checks(f):
    inval, nofunc = E.hipErrorInvalidValue, E.hipErrorInvalidDeviceFunction
    for bad in (2, -1, 0xFFFF, 1.0):
        expect(inval, hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags, f, 0, 0, bad)
        expect(inval, hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, f, 64, 0, bad)
        expect(inval, hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, f, 64, 0, bad)
    # the module calls check the function first, the runtime call the flags first (as CLR)
    expect(inval, hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags, None, 0, 0, 0)
    expect(inval, hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, None, 64, 0, 2)
    expect(nofunc, hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, None, 64, 0, 0)
    expect(inval, hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, None, 64, 0, 2)
    expect(inval, hip.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, f, 0, 0, 0)


def test_variable_smem(f):
    cus = hip.hipGetDeviceProperties(0).multiProcessorCount
    assert hip.hipOccupancyMaxPotentialBlockSizeVariableSMem(f, lambda b: 0) == (2 * cus, 1024)
    # 256 bytes a work-item: 64 KiB of LDS hold 256 work-items a CU, whatever the block size
    grid, block = hip.hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(f, lambda b: 256 * b, 0, 0)
    assert block * grid // cus == 256 and block == 256
    # a limit of 100: 16 blocks of 100 (rounded up to 128 work-items) keep 1600 busy, 32 of 64 all 2048
    assert hip.hipOccupancyMaxPotentialBlockSizeVariableSMem(f, lambda b: 0, 100) == (32 * cus, 64)
    assert hip.hipOccupancyMaxPotentialBlockSizeVariableSMem(f, lambda b: 0, 5000) == (2 * cus, 1024)
    inval = E.hipErrorInvalidValue
    expect(inval, hip.hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags, None, lambda b: 0, 0, 0)
    expect(inval, hip.hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags, f, lambda b: 0, 0, 0xFFFF)
    expect(inval, hip.hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags, f, None, 0, 0)
