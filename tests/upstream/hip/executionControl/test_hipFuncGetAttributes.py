"""hipFuncGetAttributes of attribute_test_kernel (its hipFunction_t: hdemu has no host symbols)."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import attribute

UPSTREAM = "ROCm/hip-tests:catch/unit/executionControl/hipFuncGetAttributes.cc"
K_CONST_SIZE_BYTES = 128


@pytest.mark.parametrize("section", [
    "binaryVersion", "cacheModeCA",
    pytest.param("constSizeBytes", marks=pytest.mark.xfail(strict=True, reason=(
        "hdemu: a code object has no __constant__ memory (the file's 128-byte const_data), so "
        "constSizeBytes is 0"))),
    "maxThreadsPerBlock", "numRegs", "ptxVersion", "sharedSizeBytes"])
def test_Unit_hipFuncGetAttributes_Positive_Basic(kernels, section):
    attr = hip.hipFuncGetAttributes(kernels["attribute_test_kernel"])
    if section == "binaryVersion":
        assert attr.binaryVersion > 0          # HT_AMD
    elif section == "cacheModeCA":
        assert attr.cacheModeCA in (0, 1)
    elif section == "constSizeBytes":
        assert attr.constSizeBytes == K_CONST_SIZE_BYTES
    elif section == "maxThreadsPerBlock":
        assert attr.maxThreadsPerBlock == attribute("MaxThreadsPerBlock")
    elif section == "numRegs":
        assert attr.numRegs >= 0
    elif section == "ptxVersion":
        assert attr.ptxVersion > 0
    else:
        assert attr.sharedSizeBytes <= attribute("MaxSharedMemoryPerBlock")


# SECTION "attr == nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["func == nullptr"])
def test_Unit_hipFuncGetAttributes_Negative_Parameters(kernels, section):
    with pytest.raises(hip.HipError) as ei:
        hip.hipFuncGetAttributes(None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidDeviceFunction
