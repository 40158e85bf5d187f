"""Kernel-argument preloading: kernelMultipleArgsSaxpy (18 arguments, ints and pointers interleaved)
launched with hipExtModuleLaunchKernel from a packed ``extra`` buffer, each of its six buffers checked.
Upstream builds the code object seven times with amdgpu-kernarg-preload-count 0..17 (compiler options
with no Python counterpart): every SECTION here loads the one code object, so each checks the same
packing of the argument struct."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import extra_config, load, pack_args

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipKerArgOptimization.cc"

KERNEL_NAME = "kernelMultipleArgsSaxpy"
COEFF = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
SECTIONS = ["No amdgpu-kernarg-preload-count"] + [f"amdgpu-kernarg-preload-count = {n}"
                                                  for n in (0, 1, 2, 3, 16, 17)]


@pytest.mark.parametrize("section", SECTIONS)
def test_Unit_KerArgOptimization_Saxpy(platform, section):
    arraylen = 1 << 16
    nbytes = arraylen * 4
    blocksize = 256
    rng = np.random.default_rng()
    hosts = [(rng.integers(0, 1 << 31, arraylen, dtype=np.int32) & 0xFF) for _ in range(6)]
    devs = [hip.hipMalloc(nbytes) for _ in range(6)]
    module = None
    try:
        for h, d in zip(hosts, devs):
            hip.hipMemcpy(d, h, nbytes, hip.hipMemcpyHostToDevice)
        fields = []
        for k, d in enumerate(devs):
            fields += [(np.int32, COEFF[2 * k]), (np.int32, COEFF[2 * k + 1]), (np.uint64, d)]
        config = extra_config(pack_args(*fields))
        module = load("copiousArgKernel.py")
        function = hip.hipModuleGetFunction(module, KERNEL_NAME)
        hip.hipExtModuleLaunchKernel(function, arraylen, 1, 1, blocksize, 1, 1, 0, None, None, config, None, None, 0)
        hip.hipDeviceSynchronize()
        for k, (h, d) in enumerate(zip(hosts, devs)):
            buf = np.empty(arraylen, dtype=np.int32)
            hip.hipMemcpy(buf, d, nbytes, hip.hipMemcpyDeviceToHost)
            assert np.array_equal(buf, COEFF[2 * k] * h + COEFF[2 * k + 1]), k
    finally:
        for d in devs:
            hip.hipFree(d)
        if module is not None:
            hip.hipModuleUnload(module)
