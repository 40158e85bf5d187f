"""hipFuncGetAttribute: each attribute of get_function_module's GlobalKernel is in range (the block
limit is the device's maxThreadsPerBlock, shared memory at most sharedMemPerBlock), and the errors
for an attribute out of the enum and a null function."""
import pytest

from hostside import hip
from tests.upstream.hip.module.common import attribute, get_kernel, load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipFuncGetAttribute.cc"
FA = hip.hipFunction_attribute


@pytest.fixture(scope="module")
def kernel(platform):
    hip.hipFree(0)
    m = load("get_function_module.py")
    yield get_kernel(m, "GlobalKernel")
    hip.hipModuleUnload(m)


@pytest.mark.parametrize("section", ["binaryVersion", "cacheModeCA", "maxThreadsPerBlock", "numRegs", "ptxVersion",
                                     "sharedSizeBytes"])
def test_Unit_hipFuncGetAttribute_Positive_Basic(kernel, section):
    if section == "binaryVersion":
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_BINARY_VERSION, kernel) > 0       # HT_AMD
    elif section == "cacheModeCA":
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA, kernel) in (0, 1)
    elif section == "maxThreadsPerBlock":
        assert (hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel)
                == attribute("MaxThreadsPerBlock"))
    elif section == "numRegs":
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_NUM_REGS, kernel) >= 0
    elif section == "ptxVersion":
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_PTX_VERSION, kernel) > 0
    else:
        assert (hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, kernel)
                <= attribute("MaxSharedMemoryPerBlock"))


# SECTION "value == nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["invalid attribute", "hfunc == nullptr"])
def test_Unit_hipFuncGetAttribute_Negative_Parameters(kernel, section):
    with pytest.raises(hip.HipError) as ei:
        if section == "invalid attribute":
            hip.hipFuncGetAttribute(-1, kernel)
        else:
            hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_BINARY_VERSION, None)
    want = hip.hipError_t.hipErrorInvalidValue if section == "invalid attribute" else \
        hip.hipError_t.hipErrorInvalidResourceHandle
    assert ei.value.error == want
