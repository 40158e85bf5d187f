"""Coherent mapped host memory: a kernel writes hipHostMallocMapped memory and keeps running, and the
host sees the values while it still runs. Upstream's kernel spins on the clock for a while after its
writes; here it runs until the test opens a flag (a Gate-like kernel), so "still running" is a fact."""
import numpy as np

from hostside import hip
from tests.upstream.hipkit import wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemoryAllocateCoherent.cc"


def test_Unit_hipHostMalloc_CoherentAccess(kmod):
    blocks = 2
    host_res = hip.hipHostMalloc(blocks * 4, hip.hipHostMallocMapped)
    flag_ptr = hip.hipHostMalloc(4)
    res = hip.host_array(host_res, np.float32, blocks)
    flag = hip.host_array(flag_ptr, np.uint32, 1)
    res[:] = 0
    flag[0] = 0
    try:
        # upstream reads hipDeviceAttributeClockRate (WallClockRate on gfx11) for its clock loop
        clk_rate = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeClockRate, 0)
        assert clk_rate > 0
        f = hip.hipModuleGetFunction(kmod, "memory_coherent_write_wait")
        hip.hipModuleLaunchKernel(f, 1, 1, 1, blocks, 1, 1, 0, None, [host_res, flag_ptr, 30.0])
        hip.hipGetLastError()
        for ele_counter in range(blocks):
            wait_until(lambda: res[ele_counter] != 0, 30, f"hostRes[{ele_counter}] to change")
        assert list(res) == [1.0, 2.0]
        assert hip.hipStreamQuery(None) == hip.hipError_t.hipErrorNotReady, "the kernel had already ended"
    finally:
        flag[0] = 1
        hip.hipDeviceSynchronize()
        hip.hipHostFree(host_res)
        hip.hipHostFree(flag_ptr)
