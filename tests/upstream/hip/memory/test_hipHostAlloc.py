"""hipHostAlloc (the older name of hipHostMalloc) with every OR of the portable, mapped and
write-combined flags: the memory is there, freed by hipFreeHost; a kernel's write through the device
pointer hipHostGetDevicePointer gives is seen by the host after a device, event or stream
synchronisation; a size of max size_t (upstream's -1) is hipErrorOutOfMemory and flags 999
hipErrorInvalidValue. The "host memory is nullptr" SECTION (a null out-pointer) has no Python form (the
pointer is the return value)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import launch

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


@pytest.mark.parametrize("section", ["device sync", "event sync", "stream sync"])
@_flags
def test_Unit_hipHostAlloc_DataValidation(kmod, flags, section):
    validation_number = 10
    event = None
    host_memory = hip.hipHostAlloc(INT, flags)
    try:
        device_memory = hip.hipHostGetDevicePointer(host_memory, 0)
        launch(kmod, "set_value", 1, 1, [device_memory, validation_number, 1])   # write_integer<<<1, 1>>>
        if section == "device sync":
            hip.hipDeviceSynchronize()
        elif section == "event sync":
            event = hip.hipEventCreateWithFlags(0)
            hip.hipEventRecord(event, None)
            hip.hipEventSynchronize(event)
        else:
            hip.hipStreamSynchronize(None)
        assert hip.host_array(host_memory, np.int32, 1)[0] == validation_number
    finally:
        if event is not None:
            hip.hipEventDestroy(event)
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
