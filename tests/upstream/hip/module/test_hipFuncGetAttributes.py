"""hipFuncGetAttributes: a kernel's attributes report a non-zero maxThreadsPerBlock (upstream passes
the host stub of a __global__ function; hdemu has no host symbols, so the hipFunction_t of the same
kernel stands in: getAttrFn is get_function_module's GlobalKernel)."""
from hostside import hip
from tests.upstream.hip.module.common import get_kernel, load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipFuncGetAttributes.cc"


def test_Unit_hipFuncGetAttributes_basic(platform):
    m = load("get_function_module.py")
    try:
        attr = hip.hipFuncGetAttributes(get_kernel(m, "GlobalKernel"))
        assert attr.maxThreadsPerBlock != 0
    finally:
        hip.hipModuleUnload(m)
