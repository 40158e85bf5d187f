"""hipDeviceGraphMemTrim: every device, and a device that does not exist."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipDeviceGraphMemTrim.cc"


@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipDeviceGraphMemTrim_Positive_Default(mod, device):
    hip.hipDeviceGraphMemTrim(device)


def test_Unit_hipDeviceGraphMemTrim_Negative_Parameters(mod):
    hip.hipSetDevice(0)
    expect_error(hip.hipError_t.hipErrorInvalidDevice, hip.hipDeviceGraphMemTrim, hip.hipGetDeviceCount())
