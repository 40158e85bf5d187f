"""hipMallocHost (the older name of hipHostMalloc with no flags): the memory is there, freed by
hipHostFree; a kernel's write to it is seen by the host after a device, event or stream
synchronisation; a size of max size_t (upstream's -1) is hipErrorOutOfMemory. The "host memory is
nullptr" SECTION (a null out-pointer) has no Python form (the pointer is the return value)."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import SYNC_SECTIONS, kernel_write_seen

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMallocHost.cc"

INT = 4                                     # sizeof(int)


def test_Unit_hipMallocHost_Positive(platform):
    host_memory = hip.hipMallocHost(INT)
    assert host_memory
    hip.hipHostFree(host_memory)


@pytest.mark.parametrize("section", SYNC_SECTIONS)
def test_Unit_hipMallocHost_DataValidation(kmod, section):
    host_memory = hip.hipMallocHost(INT)
    try:
        kernel_write_seen(kmod, host_memory, host_memory, section)
    finally:
        hip.hipHostFree(host_memory)


def test_Unit_hipMallocHost_Negative(platform):
    # "host memory is nullptr" (a null out-pointer) has no Python form; "size is negative": (size_t)-1
    with pytest.raises(hip.HipError) as ei:
        hip.hipMallocHost(2**64 - 1)
    assert ei.value.error == hip.hipError_t.hipErrorOutOfMemory
