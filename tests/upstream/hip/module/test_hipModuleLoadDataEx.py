"""hipModuleLoadDataEx: hipModuleLoadData with JIT options (none are passed; CLR ignores them): a code
object from a file's bytes and source text compiled in memory load, a null image is
hipErrorInvalidValue and an empty one hipErrorInvalidImage."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import read_image
from tests.upstream.hip.module.test_hipModuleLoadData import RTC_SOURCE

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleLoadDataEx.cc"


@pytest.mark.parametrize("section", ["Load compiled module from file", "Load RTCd module"])
def test_Unit_hipModuleLoadDataEx_Positive_Basic(platform, section):
    hip.hipFree(0)
    image = read_image("empty_module.py") if section == "Load compiled module from file" else RTC_SOURCE
    module = hip.hipModuleLoadDataEx(image, 0, None, None)
    assert module is not None
    hip.hipModuleUnload(module)


# SECTION "module == nullptr" (a null out-pointer) has no Python form.
def test_Unit_hipModuleLoadDataEx_Negative_Parameters(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:     # image == nullptr
        hip.hipModuleLoadDataEx(None, 0, None, None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def test_Unit_hipModuleLoadDataEx_Negative_Image_Is_An_Empty_String(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleLoadDataEx("", 0, None, None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidImage
