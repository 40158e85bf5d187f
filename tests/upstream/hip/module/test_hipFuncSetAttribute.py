"""hipFuncSetAttribute: both attributes accept 0 for a kernel (upstream passes fn's host stub;
hdemu has no host symbols, so the hipFunction_t of the same kernel stands in)."""
from hostside import hip
from tests.upstream.hip.module.common import get_kernel, load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipFuncSetAttribute.cc"


def test_Unit_hipFuncSetAttribute_Basic(platform):
    m = load("func_attr_kernels.py")
    try:
        fn = get_kernel(m, "fn")
        hip.hipFuncSetAttribute(fn, hip.hipFuncAttributeMaxDynamicSharedMemorySize, 0)
        hip.hipFuncSetAttribute(fn, hip.hipFuncAttributePreferredSharedMemoryCarveout, 0)
    finally:
        hip.hipModuleUnload(m)
