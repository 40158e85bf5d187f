"""hipDeviceGetStreamPriorityRange: the least priority is >= the greatest on every device."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipDeviceGetStreamPriorityRange.cc"


@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipDeviceGetStreamPriorityRange_Default(mod, device):
    hip.hipSetDevice(device)
    low, high = hip.hipDeviceGetStreamPriorityRange()
    assert low >= high
