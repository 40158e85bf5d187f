"""hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags (the header's template) on f1, copyKer and
copyKerDyn (their hipFunction_t: hdemu has no host symbols); the size function is any Python callable
(a function, a functor, a lambda). hipLaunchKernelGGL is hipModuleLaunchKernel."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.occupancy.occupancy_common import props

UPSTREAM = "ROCm/hip-tests:catch/unit/occupancy/hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags.cc"
SHARED_MEM_CONST = 256
F = hip.hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags


def block_size_to_dynamic_smem_size(blocksize: int) -> int:
    return blocksize * SHARED_MEM_CONST


class FunctorBlockSizeToDynamicSMemSize:
    def __init__(self, n: int):
        self.myconst = n

    def __call__(self, blocksize: int) -> int:
        return blocksize * self.myconst


def _chk_range(f1, block_size_limit: int, max_threads_per_block: int) -> None:
    min_grid, block = F(f1, block_size_to_dynamic_smem_size, block_size_limit, 0)
    assert min_grid > 0
    assert block > 0
    assert block <= max_threads_per_block


@pytest.mark.parametrize("section", ["block_size_limit = 0", "block_size_limit < maxThreadsPerBlock",
                                     "block_size_limit = maxThreadsPerBlock", "block_size_limit > maxThreadsPerBlock"])
def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_chkRange(kernels, section):
    m = props().maxThreadsPerBlock
    limit = {"block_size_limit = 0": 0, "block_size_limit < maxThreadsPerBlock": m - 1,
             "block_size_limit = maxThreadsPerBlock": m, "block_size_limit > maxThreadsPerBlock": m + 1}[section]
    _chk_range(kernels["f1"], limit, m)


def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_mgpu(kernels):
    n = hip.hipGetDeviceCount()
    assert n >= 2                   # the ported suites' platform has two devices
    for dev in range(n):
        m = hip.hipGetDeviceProperties(dev).maxThreadsPerBlock
        hip.hipSetDevice(dev)
        for limit in (0, m - 1, m):
            _chk_range(kernels["f1"], limit, m)
        hip.hipSetDevice(0)


def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_Functor(kernels):
    m = props().maxThreadsPerBlock
    min_grid, block = F(kernels["f1"], FunctorBlockSizeToDynamicSMemSize(SHARED_MEM_CONST), 0, 0)
    assert min_grid > 0 and 0 < block <= m


def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_Lambda(kernels):
    m = props().maxThreadsPerBlock

    def test_func(block_size):
        return block_size * SHARED_MEM_CONST
    for fn in (test_func, lambda block_size: block_size * SHARED_MEM_CONST):
        min_grid, block = F(kernels["f1"], fn, 0, 0)
        assert min_grid > 0 and 0 < block <= m


# SECTIONs "null min_grid_size" and "null block_size" (null out-pointers) have no Python form.
@pytest.mark.parametrize("section", ["null func", "invalid flag"])
def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_NegTst(kernels, section):
    with pytest.raises(hip.HipError) as ei:
        if section == "null func":
            F(None, block_size_to_dynamic_smem_size, 0, 0)
        else:
            F(kernels["f1"], block_size_to_dynamic_smem_size, 0, 0xFFFF)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def _check_func(mod_fn, num: int, shared_mem_bytes: int, block_size: int) -> None:
    """checkFunc: launch ``mod_fn(out, in)`` over num / blockSize blocks and check out == in."""
    nbytes = num * 4
    inp = np.arange(num, dtype=np.int32)
    out = np.empty(num, dtype=np.int32)
    inp_d, out_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    try:
        hip.hipMemcpy(inp_d, inp, nbytes, hip.hipMemcpyHostToDevice)
        hip.hipModuleLaunchKernel(mod_fn, num // block_size, 1, 1, block_size, 1, 1, shared_mem_bytes, None,
                                  [out_d, inp_d])
        hip.hipMemcpy(out, out_d, nbytes, hip.hipMemcpyDeviceToHost)
        hip.hipDeviceSynchronize()
        assert np.array_equal(out, inp)
    finally:
        hip.hipFree(inp_d)
        hip.hipFree(out_d)


def _appropriate_dyn_sh_mem_size(shared_mem_per_block: int) -> int:
    size = 1
    while size * size * 4 < shared_mem_per_block:
        size *= 2
    return size // 2


@pytest.mark.parametrize("section", ["Non Dynamic Shared Kernel", "Dynamic Shared Kernel"])
def test_Unit_hipOccupancyMaxPotBlkSizeVariableSMemWithFlags_Functional(kernels, section):
    p = props()
    if section == "Non Dynamic Shared Kernel":
        min_grid, block = F(kernels["copyKer"], lambda b: 0, 0, 0)
        assert min_grid > 0 and 0 < block <= p.maxThreadsPerBlock
        _check_func(kernels["copyKer"], min_grid * block, 0, block)
        return
    arr_size = _appropriate_dyn_sh_mem_size(p.sharedMemPerBlock)
    min_grid, block = F(kernels["copyKerDyn"], lambda b: arr_size * arr_size * 4, 0, 0)
    assert min_grid > 0 and 0 < block <= p.maxThreadsPerBlock
    total = min_grid * block
    if total * 4 < p.sharedMemPerBlock:
        _check_func(kernels["copyKerDyn"], total, total * 4, block)
    else:
        total = arr_size * arr_size
        if total % block == 0 and total // block > 0:
            _check_func(kernels["copyKerDyn"], total, total * 4, block)
