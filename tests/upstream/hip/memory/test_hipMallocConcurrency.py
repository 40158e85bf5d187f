"""hipMalloc under load: size 0, a null free and an impossible size; alloc/free cycles of big and small
chunks, many small buffers kept and freed later, and cycles on every device from one thread each,
each followed by a vectorADD whose result is checked. The iteration counts are cut down (upstream:
10000 big and 50000 small cycles, 20000 pooled buffers) and the vectors are 64 Ki ints, not 4 Mi."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import Arrays, set_num_blocks, vector_add

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMallocConcurrency.cc"

BUFF_SIZE_BC = 5 * 1024 * 1024
BUFF_SIZE_SC = 16
MAX_ALLOC_FREE_BIG_CHUNKS = 50
MAX_ALLOC_FREE_SMALL_CHUNKS = 500
MAX_ALLOC_POOL_ITER = 500
N = 64 * 1024


def validate_memory_on_gpu(mod, gpu: int) -> bool:
    """validateMemoryOnGPU: vectorADD of the default data on ``gpu``, the result read back."""
    hip.hipSetDevice(gpu)
    with Arrays(np.int32, N) as m:
        blocks = set_num_blocks(6, 256, N)
        hip.hipMemcpy(m.A_d, m.A_h.ptr, m.nbytes, hip.hipMemcpyHostToDevice)
        hip.hipMemcpy(m.B_d, m.B_h.ptr, m.nbytes, hip.hipMemcpyHostToDevice)
        vector_add(mod, np.int32, m.A_d, m.B_d, m.C_d, N, None, blocks, 256)
        hip.hipGetLastError()
        hip.hipMemcpy(m.C_h.ptr, m.C_d, m.nbytes, hip.hipMemcpyDeviceToHost)
        return bool(np.array_equal(m.C_h.a, m.A_h.a + m.B_h.a))


def regress_alloc_in_loop(gpu: int) -> bool:
    hip.hipSetDevice(gpu)
    for num_bytes, iters in ((BUFF_SIZE_BC, MAX_ALLOC_FREE_BIG_CHUNKS), (BUFF_SIZE_SC, MAX_ALLOC_FREE_SMALL_CHUNKS)):
        for _ in range(iters):
            ptr = hip.hipMalloc(num_bytes)
            hip.hipFree(ptr)
    return True


# SECTION "hipMalloc() with invalid argument" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["hipMalloc() when size(0)", "hipFree() when freeing nullptr",
                                     "hipMalloc() with max size_t"])
def test_Unit_hipMalloc_ArgumentValidation(platform, section):
    if section == "hipMalloc() when size(0)":
        assert not hip.hipMalloc(0)
    elif section == "hipFree() when freeing nullptr":
        hip.hipFree(None)
    else:
        with pytest.raises(hip.HipError) as ei:
            hip.hipMalloc(2**64 - 1)
        assert ei.value.error == hip.hipError_t.hipErrorMemoryAllocation


def test_Unit_hipMalloc_LoopRegressionAllocFreeCycles(kmod):
    assert hip.hipGetDeviceCount() > 0
    assert regress_alloc_in_loop(0)
    assert validate_memory_on_gpu(kmod, 0)


def test_Unit_hipMalloc_AllocateAndPoolBuffers(kmod):
    assert hip.hipGetDeviceCount() > 0
    ptrlist = []
    for i in range(MAX_ALLOC_POOL_ITER):
        try:
            ptrlist.append(hip.hipMalloc(10))
        except hip.HipError as exc:
            avail, tot = hip.hipMemGetInfo()
            pytest.fail(f"pool allocation failure: total {tot}, free {avail}, iter {i}, error {exc}")
    for p in ptrlist:
        hip.hipFree(p)
    assert validate_memory_on_gpu(kmod, 0)


def test_Unit_hipMalloc_Multithreaded_MultiGPU(kmod):
    dev_cnt = hip.hipGetDeviceCount()
    assert dev_cnt > 0
    passed = {}

    def thread_func(gpu):
        try:
            passed[gpu] = regress_alloc_in_loop(gpu) and validate_memory_on_gpu(kmod, gpu)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            passed[gpu] = exc

    threads = [threading.Thread(target=thread_func, args=(i,)) for i in range(dev_cnt)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert passed == {i: True for i in range(dev_cnt)}
