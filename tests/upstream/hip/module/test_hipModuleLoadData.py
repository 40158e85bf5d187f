"""hipModuleLoadData: load a code object image from memory (a file's bytes, or source text compiled
in memory: hdemu's code objects are Python source, so the hiprtc section loads source text), the
errors for a null or empty image, and a launch of a kernel of a module loaded from memory."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import extra_config, pack_args, read_image

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleLoadData.cc"

#: what CreateRTCCharArray compiles (extern "C" __global__ void kernel() {}), as hdemu source text
RTC_SOURCE = 'from shm_layout.kernels import kernel\n\n\n@kernel("")\ndef kernel(ctx):\n    pass\n'


@pytest.mark.parametrize("section", ["Load compiled module from file", "Load RTCd module"])
def test_Unit_hipModuleLoadData_Positive_Basic(platform, section):
    hip.hipFree(0)
    image = read_image("empty_module.py") if section == "Load compiled module from file" else RTC_SOURCE
    module = hip.hipModuleLoadData(image)
    assert module is not None
    hip.hipModuleUnload(module)


# SECTION "module == nullptr" (a null out-pointer) has no Python form.
def test_Unit_hipModuleLoadData_Negative_Parameters(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:     # image == nullptr
        hip.hipModuleLoadData(None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def test_Unit_hipModuleLoadData_Negative_Image_Is_An_Empty_String(platform):
    hip.hipFree(0)
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleLoadData("")
    assert ei.value.error == hip.hipError_t.hipErrorInvalidImage


def test_Unit_hipModuleLoadData_Functional(platform):
    LEN = 64
    SIZE = LEN << 2
    A = np.arange(LEN, dtype=np.float32)
    B = np.zeros(LEN, dtype=np.float32)
    Ad = hip.hipMalloc(SIZE)
    Bd = hip.hipMalloc(SIZE)
    hip.hipMemcpy(Ad, A, SIZE, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(Bd, B, SIZE, hip.hipMemcpyHostToDevice)
    module = hip.hipModuleLoadData(read_image("vcpy_kernel.py"))
    function = hip.hipModuleGetFunction(module, "hello_world")
    stream = hip.hipStreamCreate()
    try:
        args = pack_args((np.uint64, Ad), (np.uint64, Bd))
        hip.hipModuleLaunchKernel(function, 1, 1, 1, LEN, 1, 1, 0, stream, None, extra_config(args))
        hip.hipStreamDestroy(stream)
        hip.hipMemcpy(B, Bd, SIZE, hip.hipMemcpyDeviceToHost)
        np.testing.assert_array_equal(A, B)
    finally:
        hip.hipModuleUnload(module)
        hip.hipFree(Ad)
        hip.hipFree(Bd)
