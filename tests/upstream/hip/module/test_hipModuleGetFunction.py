"""hipModuleGetFunction: a kernel is found; a null or unknown name, or a device function, is not."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import load


@pytest.fixture
def module(platform):
    hip.hipFree(0)
    m = load("get_function_module.py")
    yield m
    hip.hipModuleUnload(m)


UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleGetFunction.cc"


def test_Unit_hipModuleGetFunction_Positive_Basic(module):
    kernel = hip.hipModuleGetFunction(module, "GlobalKernel")
    assert kernel is not None


# SECTION "function == nullptr" (a null out-pointer) has no Python form; "module == nullptr" and
# "kname == empty string" run on NVIDIA only (disabled on AMD: EXSWHTEC-154, EXSWHTEC-155).
@pytest.mark.parametrize("kname, error", [
    pytest.param(None, "hipErrorInvalidValue", id="kname == nullptr"),
    pytest.param("NonExistentKernel", "hipErrorNotFound", id="kname == non existent kernel"),
    pytest.param("DeviceKernel", "hipErrorNotFound", id="kname == __device__ kernel"),
])
def test_Unit_hipModuleGetFunction_Negative_Parameters(module, kname, error):
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleGetFunction(module, kname)
    assert ei.value.error == hip.hipError_t[error]
