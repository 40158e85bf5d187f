"""hipFuncSetSharedMemConfig: each bank size is accepted, and ReverseSeq launched afterwards with
NELMTS * sizeof(int) bytes of dynamic shared memory reverses its input (ReverseSeq is a hipFunction_t
here: hdemu has no host symbols; the triple-chevron launch is hipModuleLaunchKernel)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import get_kernel, load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipFuncSetSharedMemConfig.cc"
NELMTS = 128


@pytest.mark.parametrize("section", ["Flag: hipSharedMemBankSizeDefault", "Flag: hipSharedMemBankSizeFourBytes",
                                     "Flag: hipSharedMemBankSizeEightByte"])
def test_Unit_hipFuncSetSharedMemConfig_functional(platform, section):
    config = {"Flag: hipSharedMemBankSizeDefault": hip.hipSharedMemBankSizeDefault,
              "Flag: hipSharedMemBankSizeFourBytes": hip.hipSharedMemBankSizeFourByte,
              "Flag: hipSharedMemBankSizeEightByte": hip.hipSharedMemBankSizeEightByte}[section]
    nbytes = NELMTS * 4
    ah = np.arange(NELMTS, dtype=np.int32)
    rah = NELMTS - ah - 1
    m = load("func_attr_kernels.py")
    ad, rad = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    try:
        hip.hipMemcpy(ad, ah, nbytes, hip.hipMemcpyHostToDevice)
        hip.hipMemset(rad, 0, nbytes)
        reverse = get_kernel(m, "ReverseSeq")
        hip.hipFuncSetSharedMemConfig(reverse, config)
        hip.hipModuleLaunchKernel(reverse, 1, 1, 1, NELMTS, 1, 1, nbytes, None, [ad, rad, NELMTS])
        ah[:] = 0
        hip.hipMemcpy(ah, rad, nbytes, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(ah, rah)
    finally:
        hip.hipFree(ad)
        hip.hipFree(rad)
        hip.hipModuleUnload(m)
