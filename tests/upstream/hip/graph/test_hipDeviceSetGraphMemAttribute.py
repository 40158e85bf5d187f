"""hipDeviceSetGraphMemAttribute: the high watermarks reset to 0, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipDeviceSetGraphMemAttribute.cc"

E = hip.hipError_t


@pytest.mark.parametrize("attr", [hip.hipGraphMemAttrUsedMemHigh, hip.hipGraphMemAttrReservedMemHigh])
@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipDeviceSetGraphMemAttribute_Positive_Default(mod, device, attr):
    hip.hipDeviceSetGraphMemAttribute(device, attr, 0)
    assert hip.hipDeviceGetGraphMemAttribute(device, attr) == 0


@pytest.mark.parametrize("section", ["device", "not_supported", "not_valid", "used_high_nonzero",
                                     "reserved_high_nonzero"])
def test_Unit_hipDeviceSetGraphMemAttribute_Negative_Parameters(mod, section):
    hip.hipSetDevice(0)
    n = hip.hipGetDeviceCount()
    call = {"device": (E.hipErrorInvalidDevice, n, hip.hipGraphMemAttrUsedMemHigh, 0),
            "not_supported": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrUsedMemCurrent, 0),
            "not_valid": (E.hipErrorInvalidValue, 0, 0x7, 0),
            "used_high_nonzero": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrUsedMemHigh, 1),
            "reserved_high_nonzero": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrReservedMemHigh, 1)}[section]
    expect_error(call[0], hip.hipDeviceSetGraphMemAttribute, *call[1:])
