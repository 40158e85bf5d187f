"""hipModuleLaunchCooperativeKernel: a cooperative kernel (a grid barrier) and a kernel with
kernelParams, the block limits the device reports, and the launch-time errors for a null function,
zero or oversized dimensions, too much shared memory and a destroyed stream."""
import math

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import attribute, get_kernel, load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleLaunchCooperativeKernel.cc"
E = hip.hipError_t


@pytest.fixture
def module(platform):
    hip.hipFree(0)
    assert attribute("CooperativeLaunch") == 1      # DeviceAttributesSupport: upstream skips otherwise
    m = load("launch_kernel_module.py")
    yield m
    hip.hipModuleUnload(m)


@pytest.mark.parametrize("section", ["Cooperative kernel with no arguments",
                                     "Kernel with arguments using kernelParams"])
def test_Unit_hipModuleLaunchCooperativeKernel_Positive_Basic(module, section):
    if section == "Cooperative kernel with no arguments":
        f = get_kernel(module, "CoopKernel")
        hip.hipModuleLaunchCooperativeKernel(f, 2, 2, 1, 1, 1, 1, 0, None, None)
        hip.hipDeviceSynchronize()
        return
    f = get_kernel(module, "Kernel42")
    result_dev = hip.hipMalloc(4)
    try:
        hip.hipMemset(result_dev, 0, 4)
        hip.hipModuleLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, None, [result_dev])
        result = np.zeros(1, dtype=np.int32)
        hip.hipMemcpy(result, result_dev, 4, hip.hipMemcpyDefault)
        assert result[0] == 42
    finally:
        hip.hipFree(result_dev)


@pytest.mark.parametrize("axis", "XYZ", ids=[f"blockDim.{a} == maxBlockDim{a.upper()}" for a in "xyz"])
def test_Unit_hipModuleLaunchCooperativeKernel_Positive_Parameters(module, axis):
    f = get_kernel(module, "NOPKernel")
    value = attribute("MaxBlockDim" + axis)
    # upstream passes the limit as blockDim.x in all three sections
    hip.hipModuleLaunchCooperativeKernel(f, 1, 1, 1, value, 1, 1, 0, None, None)
    hip.hipDeviceSynchronize()


NEGATIVE = ["f == nullptr", "gridDim.x == 0", "gridDim.y == 0", "gridDim.z == 0", "blockDim.x == 0",
            "blockDim.y == 0", "blockDim.z == 0", "blockDim.x > maxBlockDimX", "blockDim.y > maxBlockDimY",
            "blockDim.z > maxBlockDimZ", "blockDim.x * blockDim.y * blockDim.z > maxThreadsPerBlock",
            "sharedMemBytes > maxSharedMemoryPerBlock", "Invalid stream"]


@pytest.mark.parametrize("section", NEGATIVE, ids=NEGATIVE)
def test_Unit_hipModuleLaunchCooperativeKernel_Negative_Parameters(module, section):
    f = get_kernel(module, "NOPKernel")
    args = [f, 1, 1, 1, 1, 1, 1, 0, None, None]
    error = E.hipErrorInvalidValue
    if section == "f == nullptr":
        args[0] = None
        error = E.hipErrorInvalidResourceHandle
    elif section.endswith("== 0"):
        args[1 + "xyz".index(section[section.index(".") + 1]) + (3 if section.startswith("block") else 0)] = 0
    elif section.startswith("blockDim.x * "):
        dim = math.ceil(math.cbrt(attribute("MaxThreadsPerBlock")))
        args[4:7] = [dim, dim, dim]
    elif section.startswith("blockDim."):
        axis = section[len("blockDim.")]
        args[4 + "xyz".index(axis)] = attribute("MaxBlockDim" + axis.upper()) + 1
    elif section.startswith("sharedMemBytes"):
        args[7] = attribute("MaxSharedMemoryPerBlock") + 1
    else:                                   # Invalid stream: a destroyed one
        stream = hip.hipStreamCreate()
        hip.hipStreamDestroy(stream)
        args[8] = stream
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleLaunchCooperativeKernel(*args)
    assert ei.value.error == error
