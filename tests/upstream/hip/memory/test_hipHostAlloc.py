"""hipHostAlloc (the older name of hipHostMalloc) with every OR of the portable, mapped and
write-combined flags: the memory is there, freed by hipFreeHost; a kernel's write through the device
pointer hipHostGetDevicePointer gives is seen by the host after a device, event or stream
synchronisation; a size of max size_t (upstream's -1) is hipErrorOutOfMemory and flags 999
hipErrorInvalidValue. The "host memory is nullptr" SECTION (a null out-pointer) has no Python form (the
pointer is the return value)."""
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import SYNC_SECTIONS, kernel_write_seen

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostAlloc.cc"

#: get_flags(): GENERATE over these
FLAGS = [hip.hipHostMallocDefault,
         hip.hipHostMallocPortable,
         hip.hipHostMallocMapped,
         hip.hipHostMallocWriteCombined,
         hip.hipHostMallocPortable | hip.hipHostMallocMapped,
         hip.hipHostMallocPortable | hip.hipHostMallocWriteCombined,
         hip.hipHostMallocMapped | hip.hipHostMallocWriteCombined,
         hip.hipHostMallocPortable | hip.hipHostMallocMapped | hip.hipHostMallocWriteCombined]
INT = 4                                     # sizeof(int)

_flags = pytest.mark.parametrize("flags", FLAGS, ids=lambda f: f"{f:#x}")


@_flags
def test_Unit_hipHostAlloc_Positive(platform, flags):
    host_memory = hip.hipHostAlloc(INT, flags)
    assert host_memory
    hip.hipFreeHost(host_memory)


@pytest.mark.parametrize("section", SYNC_SECTIONS)
@_flags
def test_Unit_hipHostAlloc_DataValidation(kmod, flags, section):
    host_memory = hip.hipHostAlloc(INT, flags)
    try:
        kernel_write_seen(kmod, host_memory, hip.hipHostGetDevicePointer(host_memory, 0), section)
    finally:
        hip.hipFreeHost(host_memory)


@pytest.mark.parametrize("section", ["size is negative", "flag is out of range"])
@_flags
def test_Unit_hipHostAlloc_Negative(platform, flags, section):
    # "host memory is nullptr" (a null out-pointer) has no Python form
    if section == "size is negative":
        size, flag, expected = 2**64 - 1, flags, hip.hipError_t.hipErrorOutOfMemory    # (size_t)-1
    else:
        size, flag, expected = INT, 999, hip.hipError_t.hipErrorInvalidValue
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostAlloc(size, flag)
    assert ei.value.error == expected
