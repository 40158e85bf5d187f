"""A code object loaded from a file runs: hello_world copies 64 floats, launched through ``extra``.
The "multiple GPUs" SECTION builds a multi-architecture code object with hipcc at run time; here the
test writes the kernel's source to a file at run time and loads that (there is one architecture)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import extra_config, pack_args, path

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModule.cc"

LEN = 64
SIZE = LEN << 2
CODE_OBJ_SINGLEARCH = "vcpy_kernel.py"
KERNEL_NAME = "hello_world"
#: the kernel testMultiTargArchCodeObj writes out (vcpy_kernel.cpp's hello_world, as Python)
CODE_OBJ_SOURCE = '''from shm_layout.kernels import kernel


@kernel("f32* a, f32* b")
def hello_world(ctx, a, b):
    tx = ctx.global_id(0)
    b[tx] = a[tx]
'''


def check_code_obj_file(code_obj_file: str) -> bool:
    """testCodeObjFile."""
    a = np.arange(LEN, dtype=np.float32)
    b = np.zeros(LEN, dtype=np.float32)
    ad, bd = hip.hipMalloc(SIZE), hip.hipMalloc(SIZE)
    hip.hipMemcpy(ad, a, SIZE, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(bd, b, SIZE, hip.hipMemcpyHostToDevice)
    module = hip.hipModuleLoad(code_obj_file)
    function = hip.hipModuleGetFunction(module, KERNEL_NAME)
    stream = hip.hipStreamCreate()
    config = extra_config(pack_args((np.uint64, ad), (np.uint64, bd)))
    hip.hipModuleLaunchKernel(function, 1, 1, 1, LEN, 1, 1, 0, stream, None, config)
    hip.hipStreamDestroy(stream)
    hip.hipMemcpy(b, bd, SIZE, hip.hipMemcpyDeviceToHost)
    passed = bool(np.array_equal(a, b))
    hip.hipFree(bd)
    hip.hipFree(ad)
    hip.hipModuleUnload(module)
    return passed


@pytest.mark.parametrize("section", ["Code object file test on current GPU",
                                     "Code object file test on multiple GPUs"])
def test_Unit_hipModule_Functional(platform, tmp_path, section):
    if section == "Code object file test on current GPU":
        assert check_code_obj_file(path(CODE_OBJ_SINGLEARCH))
    else:
        generated = tmp_path / "vcpy_kernel_multarch.py"
        generated.write_text(CODE_OBJ_SOURCE)
        assert check_code_obj_file(str(generated))
