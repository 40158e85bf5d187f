"""hip_module_launch_kernel_common.hh: the positive and negative parameter checks shared by the
hipModuleLaunchKernel and hipExtModuleLaunchKernel tests. ``func`` has hipExtModuleLaunchKernel's
parameters: (f, x, y, z, bx, by, bz, sharedMemBytes, stream, kernelParams, extra, start, stop, flags)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import attribute, extra_config, get_kernel, pack_args

__all__ = ["POSITIVE_BASIC", "POSITIVE_PARAMETERS", "NEGATIVE_PARAMETERS", "module_launch_kernel",
           "positive_basic", "positive_parameters", "negative_parameters"]


def module_launch_kernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, _start, _stop, _flags):
    """hipModuleLaunchKernelWrapper: hipModuleLaunchKernel with the Ext signature."""
    return hip.hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)


POSITIVE_BASIC = [
    pytest.param("Kernel with no arguments", id="Kernel with no arguments"),
    pytest.param("Kernel with arguments using kernelParams", id="Kernel with arguments using kernelParams"),
    pytest.param("Kernel with arguments using extra", id="Kernel with arguments using extra"),
]


def positive_basic(func, module, section):
    if section == "Kernel with no arguments":
        f = get_kernel(module, "NOPKernel")
        func(f, 1, 1, 1, 1, 1, 1, 0, None, None, None, None, None, 0)
        hip.hipDeviceSynchronize()
        return
    f = get_kernel(module, "Kernel42")
    result_dev = hip.hipMalloc(4)
    try:
        hip.hipMemset(result_dev, 0, 4)
        if section == "Kernel with arguments using kernelParams":
            func(f, 1, 1, 1, 1, 1, 1, 0, None, [result_dev], None, None, None, 0)
        else:
            extra = extra_config(pack_args((np.uint64, result_dev)))
            func(f, 1, 1, 1, 1, 1, 1, 0, None, None, extra, None, None, 0)
        result = np.zeros(1, dtype=np.int32)
        hip.hipMemcpy(result, result_dev, 4, hip.hipMemcpyDefault)
        assert result[0] == 42
    finally:
        hip.hipFree(result_dev)


POSITIVE_PARAMETERS = [pytest.param(s, id=s) for s in (
    "gridDimX == maxGridDimX", "gridDimY == maxGridDimY", "gridDimZ == maxGridDimZ",
    "blockDimX == maxBlockDimX", "blockDimY == maxBlockDimY", "blockDimZ == maxBlockDimZ")]


def _axis_dims(axis: int, value: int, block: bool) -> list:
    dims = [1] * 6
    dims[axis + (3 if block else 0)] = value
    return dims


def positive_parameters(func, module, section):
    axis = "XYZ".index(section.split()[0][-1])
    block = section.startswith("block")
    value = attribute(("MaxBlockDim" if block else "MaxGridDim") + "XYZ"[axis])
    f = get_kernel(module, "NOPKernel")
    func(f, *_axis_dims(axis, value, block), 0, None, None, None, None, None, 0)
    hip.hipDeviceSynchronize()


NEGATIVE_PARAMETERS = [pytest.param(s, id=s) for s in (
    "f == nullptr",
    "gridDimX == 0", "gridDimY == 0", "gridDimZ == 0", "blockDimX == 0", "blockDimY == 0", "blockDimZ == 0",
    "gridDimX > maxGridDimX", "gridDimY > maxGridDimY", "gridDimZ > maxGridDimZ",
    "blockDimX > maxBlockDimX", "blockDimY > maxBlockDimY", "blockDimZ > maxBlockDimZ",
    "blockDimX * blockDimY * blockDimZ > MaxThreadsPerBlock", "sharedMemBytes > max shared memory per block",
    "Passing kernel_args and extra simultaneously", "Invalid extra")]
# SECTION "Invalid stream" runs on NVIDIA only (disabled on AMD: EXSWHTEC-160).


def negative_parameters(func, module, section):
    f = get_kernel(module, "NOPKernel")
    args = [f, 1, 1, 1, 1, 1, 1, 0, None, None, None, None, None, 0]
    error = hip.hipError_t.hipErrorInvalidValue
    result_dev = None
    if section == "f == nullptr":
        args[0] = None
        error = hip.hipError_t.hipErrorInvalidResourceHandle
    elif section.endswith("== 0"):
        args[1 + "XYZ".index(section.split()[0][-1]) + (3 if section.startswith("block") else 0)] = 0
    elif section.startswith(("gridDim", "blockDim")) and "> max" in section:
        axis = "XYZ".index(section.split()[0][-1])
        block = section.startswith("block")
        args[1:7] = _axis_dims(axis, attribute(("MaxBlockDim" if block else "MaxGridDim") + "XYZ"[axis]) + 1, block)
    elif section.startswith("blockDimX * blockDimY"):
        dim = math.ceil(math.cbrt(attribute("MaxThreadsPerBlock"))) + 1
        args[4:7] = [dim, dim, dim]
    elif section.startswith("sharedMemBytes"):
        args[7] = attribute("MaxSharedMemoryPerBlock") + 1
    else:
        args[0] = get_kernel(module, "Kernel42")
        result_dev = hip.hipMalloc(4)
        if section == "Passing kernel_args and extra simultaneously":
            args[9] = [result_dev]
            args[10] = extra_config(pack_args((np.uint64, result_dev)))
        else:                       # Invalid extra: an empty extra array
            args[10] = []
    try:
        with pytest.raises(hip.HipError) as ei:
            func(*args)
        assert ei.value.error == error
    finally:
        if result_dev is not None:
            hip.hipFree(result_dev)
