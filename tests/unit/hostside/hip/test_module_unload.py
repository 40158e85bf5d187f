"""hipModuleUnload, host side: a function of an unloaded module cannot be launched (an error at the
call, also for a kernel the device has run and cached before), and the module's code object and
device globals stay until the work launched before the unload has finished (so that work runs, and
never writes into memory a later hipMalloc took over). None of this depends on the command processor
re-checking the code object of a cached kernel: the host never sends the stale launch."""
import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from tests.paths import kernel_file

pytestmark = pytest.mark.timeout(120)

#: a module with a device global and a kernel that writes it after a while
LATE = '''
import time
from shm_layout.kernels import kernel

__hdemu_globals__ = {"g": "i32[1024]"}


@kernel("f64 seconds, i32 v")
def late_write(ctx, seconds, v):
    time.sleep(seconds)
    g[:] = v  # noqa: F821 - bound by the command processor


@kernel("i32* x, u32 n")
def inc(ctx, x, n):
    x[:n] += 1
'''


@pytest.fixture(scope="module")
def platform():
    hip.hipDeviceReset()
    hsa.configure({"agents": 2, "memory_mib": 16, "host_pool_mib": 16, "engines": 2})
    try:
        hip.hipGetDeviceCount()
        yield
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()


@pytest.fixture(autouse=True)
def short_waits(platform, monkeypatch):
    monkeypatch.setattr(hsa.runtime(), "wait_timeout_s", 20.0)


def read(ptr, n):
    out = np.empty(n, np.int32)
    hip.hipMemcpy(out, ptr, 4 * n, hip.hipMemcpyDeviceToHost)
    return out


def test_launch_of_an_unloaded_function_fails_at_the_call(platform):
    m = hip.hipModuleLoad(kernel_file("basic.py"))
    f = hip.hipModuleGetFunction(m, "inc")
    x = hip.hipMalloc(64)
    s = hip.hipStreamCreate()
    try:
        hip.hipMemset(x, 0, 64)
        hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, [x, 16])     # the device caches it
        hip.hipStreamSynchronize(s)
        hip.hipModuleUnload(m)
        for stream in (s, None):
            with pytest.raises(hip.HipError) as ei:
                hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, stream, [x, 16])
            assert ei.value.name == "hipErrorInvalidHandle"
            assert "unloaded" in str(ei.value)
        assert hip.hipGetLastError() == hip.hipError_t.hipErrorInvalidHandle
        hip.hipStreamSynchronize(s)
        hip.hipDeviceSynchronize()
        assert np.array_equal(read(x, 16), np.ones(16, np.int32))       # it ran once, not again
        with pytest.raises(hip.HipError, match="hipErrorInvalidHandle"):
            hip.hipModuleGetFunction(m, "inc")
        with pytest.raises(hip.HipError, match="hipErrorNotFound"):     # a second unload (as HIP)
            hip.hipModuleUnload(m)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(x)


def test_unload_lets_the_launches_before_it_finish(platform):
    """A kernel launched (not yet loaded by the device) right before the unload runs normally."""
    m = hip.hipModuleLoadData(LATE, "late.py")
    s = hip.hipStreamCreate()
    try:
        gptr, gsize = hip.hipModuleGetGlobal(m, "g")
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "late_write"), 1, 1, 1, 1, 1, 1, 0, s, [0.3, 7])
        hip.hipModuleUnload(m)
        assert hip.hipStreamQuery(s) == hip.hipError_t.hipSuccess      # the unload waited for it
        hip.hipStreamSynchronize(s)                                     # and it did not fail
    finally:
        hip.hipStreamDestroy(s)


def test_a_global_of_an_unloaded_module_is_not_written_into_new_memory(platform):
    m = hip.hipModuleLoadData(LATE, "late.py")
    s = hip.hipStreamCreate()
    ptrs = []
    try:
        gptr, gsize = hip.hipModuleGetGlobal(m, "g")
        late = hip.hipModuleGetFunction(m, "late_write")
        hip.hipModuleLaunchKernel(late, 1, 1, 1, 1, 1, 1, 0, s, [0.0, 1])    # the device caches it
        hip.hipStreamSynchronize(s)
        hip.hipModuleLaunchKernel(late, 1, 1, 1, 1, 1, 1, 0, s, [0.3, 7])
        hip.hipModuleUnload(m)
        # first fit: allocations of the global's size soon take the global's memory over
        for _ in range(1000):
            ptrs.append(hip.hipMalloc(gsize))
            if ptrs[-1] <= gptr < ptrs[-1] + gsize:
                break
        assert ptrs[-1] <= gptr < ptrs[-1] + gsize                      # its memory is reused now
        for p in ptrs:
            hip.hipMemset(p, 0, gsize)              # the null stream: not ordered after the kernel
        hip.hipStreamSynchronize(s)
        for p in ptrs:
            assert not read(p, gsize // 4).any(), f"{p:#x} was written after the unload"
    finally:
        hip.hipStreamDestroy(s)
        for p in ptrs:
            hip.hipFree(p)


def test_unload_waits_for_work_of_the_module_on_every_device(platform):
    m = hip.hipModuleLoadData(LATE, "late.py")
    hip.hipSetDevice(1)
    try:
        s1 = hip.hipStreamCreate()
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "late_write"), 1, 1, 1, 1, 1, 1, 0, s1, [0.3, 5])
    finally:
        hip.hipSetDevice(0)
    try:
        hip.hipModuleUnload(m)
        assert hip.hipStreamQuery(s1) == hip.hipError_t.hipSuccess
    finally:
        hip.hipStreamDestroy(s1)


def test_graph_of_an_unloaded_module_is_not_launched(platform):
    m = hip.hipModuleLoadData(LATE, "late.py")
    x = hip.hipMalloc(64)
    s = hip.hipStreamCreate()
    g = hip.hipGraphCreate()
    try:
        hip.hipMemset(x, 0, 64)
        hip.hipGraphAddKernelNode(g, [], hip.hipKernelNodeParams(hip.hipModuleGetFunction(m, "inc"),
                                                                   (1, 1, 1), (16, 1, 1), 0, [x, 16]))
        ge = hip.hipGraphInstantiate(g)
        hip.hipGraphLaunch(ge, s)
        hip.hipStreamSynchronize(s)
        hip.hipModuleUnload(m)
        with pytest.raises(hip.HipError, match="hipErrorInvalidHandle"):
            hip.hipGraphLaunch(ge, s)
        with pytest.raises(hip.HipError, match="hipErrorInvalidDeviceFunction"):
            hip.hipGraphInstantiate(g)
        hip.hipStreamSynchronize(s)
        assert np.array_equal(read(x, 16), np.ones(16, np.int32))
        hip.hipGraphExecDestroy(ge)
    finally:
        hip.hipGraphDestroy(g)
        hip.hipStreamDestroy(s)
        hip.hipFree(x)
