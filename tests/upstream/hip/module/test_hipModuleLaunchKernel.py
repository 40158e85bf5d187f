"""hipModuleLaunchKernel: launches with kernelParams and extra, the grid and block limits the device
reports (hipDeviceGetAttribute / hipDeviceProp_t), and the launch-time errors for a null function,
zero or oversized dimensions, too much shared memory and bad extra arrays."""
import math

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module import launch_common as lc
from tests.upstream.hip.module.common import extra_config, load, pack_args

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleLaunchKernel.cc"


@pytest.fixture
def module(platform):
    hip.hipFree(0)
    m = load("launch_kernel_module.py")
    yield m
    hip.hipModuleUnload(m)


@pytest.mark.parametrize("section", lc.POSITIVE_BASIC)
def test_Unit_hipModuleLaunchKernel_Positive_Basic(module, section):
    hip.hipFree(0)
    lc.positive_basic(lc.module_launch_kernel, module, section)


@pytest.mark.parametrize("section", lc.POSITIVE_PARAMETERS)
def test_Unit_hipModuleLaunchKernel_Positive_Parameters(module, section):
    hip.hipFree(0)
    lc.positive_parameters(lc.module_launch_kernel, module, section)


@pytest.mark.parametrize("section", lc.NEGATIVE_PARAMETERS)
def test_Unit_hipModuleLaunchKernel_Negative_Parameters(module, section):
    hip.hipFree(0)
    lc.negative_parameters(lc.module_launch_kernel, module, section)


def _negative_tests():
    """Module_Negative_tests: every one of these launches must fail."""
    hip.hipSetDevice(0)
    module = load("matmul.py")
    mult = hip.hipModuleGetFunction(module, "matmulK")
    both = hip.hipModuleGetFunction(module, "KernelandExtraParams")
    args1 = pack_args((np.int32, 0), (np.uint64, 0), (np.uint64, 0), (np.uint64, 0), (np.int32, 0))
    config1 = extra_config(args1)
    stream1 = hip.hipStreamCreate()
    props = hip.hipGetDeviceProperties(0)
    u32max = 2**32 - 1
    mtpb = props.maxThreadsPerBlock
    launches = [
        (None, (1, 1, 1, 1, 1, 1), None, config1),                                  # null kernel function
        (mult, (1, 1, 1, u32max, u32max, u32max), None, config1),                   # max uint32 block dims
        (mult, (0, 0, 0, 0, 0, 0), None, config1),                                  # all dimensions 0
        (mult, (0, 1, 1, 0, 1, 1), None, config1),                                  # x dimension 0
        (mult, (1, 0, 1, 1, 0, 1), None, config1),                                  # y dimension 0
        (mult, (1, 1, 0, 1, 1, 0), None, config1),                                  # z dimension 0
        (both, (1, 1, 1, 1, 1, 1), [0], config1),                                   # kernelParams and extra
        (mult, (1, 1, 1, mtpb + 1, mtpb + 1, mtpb + 1), None, config1),             # over maxThreadsPerBlock
        (mult, (1, 1, 1, props.maxThreadsDim[0] + 1, 1, 1), None, config1),         # block X over the max
        (mult, (1, 1, 1, 1, props.maxThreadsDim[1] + 1, 1), None, config1),         # block Y over the max
        (mult, (1, 1, 1, 1, 1, props.maxThreadsDim[2] + 1), None, config1),         # block Z over the max
        # an invalid extra array: BUFFER_POINTER without its value
        (mult, (1, 1, 1, 1, 1, 1), None, [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                          len(args1), hip.HIP_LAUNCH_PARAM_END]),
    ]
    accepted = []
    for i, (f, dims, params, extra) in enumerate(launches):
        try:
            hip.hipModuleLaunchKernel(f, *dims, 0, stream1, params, extra)
            accepted.append(i)
        except hip.HipError:
            pass
    hip.hipStreamDestroy(stream1)
    hip.hipModuleUnload(module)
    assert accepted == [], f"launches {accepted} were accepted"


def _grid_block_corner_tests():
    hip.hipSetDevice(0)
    module = load("matmul.py")
    dummy = hip.hipModuleGetFunction(module, "dummyKernel")
    stream1 = hip.hipStreamCreate()
    props = hip.hipGetDeviceProperties(0)
    bx, by, bz = props.maxThreadsDim
    gx, gy, gz = props.maxGridSize
    for dims in [(1, 1, 1, bx, 1, 1), (1, 1, 1, 1, by, 1), (1, 1, 1, 1, 1, bz),
                 (gx, 1, 1, 1, 1, 1), (1, gy, 1, 1, 1, 1), (1, 1, gz, 1, 1, 1)]:
        hip.hipModuleLaunchKernel(dummy, *dims, 0, stream1, None, None)
    hip.hipStreamSynchronize(stream1)
    hip.hipStreamDestroy(stream1)
    hip.hipModuleUnload(module)


def _work_group_test():
    hip.hipSetDevice(0)
    module = load("matmul.py")
    dummy = hip.hipModuleGetFunction(module, "dummyKernel")
    stream1 = hip.hipStreamCreate()
    root = math.cbrt(hip.hipGetDeviceProperties(0).maxThreadsPerBlock)
    lo, hi = math.floor(root), math.ceil(root)
    hip.hipModuleLaunchKernel(dummy, 1, 1, 1, lo, lo, lo, 0, stream1, None, None)     # within the work-group size
    with pytest.raises(hip.HipError):                                                   # over it
        hip.hipModuleLaunchKernel(dummy, 1, 1, 1, hi, hi, hi + 1, 0, stream1, None, None)
    hip.hipStreamDestroy(stream1)
    hip.hipModuleUnload(module)


@pytest.mark.parametrize("section", [
    "Negative test scenarios", "Grid Block corner test",
    "Work Group Test"])
def test_Unit_hipModuleLaunchKernel_Fntl(platform, section):
    {"Negative test scenarios": _negative_tests, "Grid Block corner test": _grid_block_corner_tests,
     "Work Group Test": _work_group_test}[section]()
