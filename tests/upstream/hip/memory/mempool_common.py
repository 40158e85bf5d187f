"""What the ported mempool tests share (upstream catch/unit/memory/mempool_common.hh): pool properties
and ``StreamMemAllocTest`` (streamMemAllocTest: C = A + B in memory from a pool, on one stream)."""
import numpy as np

from hostside import hip
from tests.upstream.hip.memory.common import vector_set
from tests.upstream.hip.memory.hiptest_common import launch
from tests.upstream.hipkit import Gate

THREADS_PER_BLOCK = 512


def pool_props(device: int = 0, **kw) -> hip.hipMemPoolProps:
    """``hipMemPoolProps prop{}`` with allocType pinned and a device location."""
    return hip.hipMemPoolProps(allocType=hip.hipMemAllocationTypePinned,
                               location=hip.hipMemLocation(hip.hipMemLocationTypeDevice, device), **kw)


class StreamMemAllocTest:
    """streamMemAllocTest(N): host buffers A (odd), B (even), C (0); A_d, B_d, C_d from a pool or
    hipMallocAsync; vectorADD on the stream; C copied back and checked."""

    def __init__(self, n: int):
        self.n = n
        self.nbytes = 4 * n
        self.mem_pool = None
        i = np.arange(n, dtype=np.int32)
        self.A_h, self.B_h, self.C_h = 2 * i + 1, 2 * i, np.zeros(n, np.int32)

    def use_common_mempool(self, pool) -> None:
        self.mem_pool = pool

    def create_mempool(self, attr=None, value=None, dev: int = 0) -> None:
        """createMempool: a pool on ``dev``; ``attr`` set to ``value`` if given."""
        self.mem_pool = hip.hipMemPoolCreate(pool_props(dev))
        if attr is not None:
            hip.hipMemPoolSetAttribute(self.mem_pool, attr, value)

    def alloc_from_mempool(self, stream) -> None:
        self.A_d, self.B_d, self.C_d = (hip.hipMallocFromPoolAsync(self.nbytes, self.mem_pool, stream)
                                        for _ in range(3))

    def alloc_from_def_mempool(self, stream) -> None:
        self.A_d, self.B_d, self.C_d = (hip.hipMallocAsync(self.nbytes, stream) for _ in range(3))

    def transfer_to_mempool(self, stream) -> None:
        hip.hipMemcpyAsync(self.A_d, self.A_h, self.nbytes, hip.hipMemcpyHostToDevice, stream)
        hip.hipMemcpyAsync(self.B_d, self.B_h, self.nbytes, hip.hipMemcpyHostToDevice, stream)

    def run_kernel(self, mod, stream) -> None:
        launch(mod, "vectorADD_i32", self.n // THREADS_PER_BLOCK, THREADS_PER_BLOCK,
               [self.A_d, self.B_d, self.C_d, self.n], stream)

    def transfer_from_mempool(self, stream) -> None:
        hip.hipMemcpyAsync(self.C_h, self.C_d, self.nbytes, hip.hipMemcpyDeviceToHost, stream)

    def validate_result(self) -> bool:
        return bool(np.array_equal(self.C_h, self.A_h + self.B_h))

    def free_dev_buf(self, stream) -> None:
        for p in (self.A_d, self.B_d, self.C_d):
            hip.hipFreeAsync(p, stream)

    def free_mempool(self) -> None:
        hip.hipMemPoolDestroy(self.mem_pool)


def check_malloc_async(mod, n: int) -> bool:
    """checkMallocAsync of hipDeviceGetMemPool.cc / hipDeviceSetMemPool.cc: the whole round trip with
    hipMallocAsync (the device's current pool) on a created stream."""
    t = StreamMemAllocTest(n)
    stream = hip.hipStreamCreate()
    try:
        t.alloc_from_def_mempool(stream)
        t.transfer_to_mempool(stream)
        t.run_kernel(mod, stream)
        t.transfer_from_mempool(stream)
        t.free_dev_buf(stream)
        hip.hipStreamSynchronize(stream)
        assert t.validate_result()
    finally:
        hip.hipStreamDestroy(stream)
    return True


def mempools_supported(device: int) -> None:
    """checkMempoolSupported: hdemu always reports the attribute 1 (the test would be skipped otherwise)."""
    assert hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMemoryPoolsSupported, device) == 1


class MemPoolGuard:
    """MemPoolGuard(type, device): the device's default pool ("dev_default") or a created one ("created",
    destroyed at the end); the default pool's high watermarks are reset at the end, as upstream's."""

    def __init__(self, kind: str, device: int, handle_type=hip.hipMemHandleTypeNone):
        self.kind = kind
        if kind == "dev_default":
            self.mempool = hip.hipDeviceGetDefaultMemPool(device)
        else:
            self.mempool = hip.hipMemPoolCreate(pool_props(device, handleTypes=handle_type))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.kind == "created":
            hip.hipMemPoolDestroy(self.mempool)
        else:
            hip.hipMemPoolSetAttribute(self.mempool, hip.hipMemPoolAttrReservedMemHigh, 0)
            hip.hipMemPoolSetAttribute(self.mempool, hip.hipMemPoolAttrUsedMemHigh, 0)


#: the mempool suites' own kernels (upstream defines them in the test files)
KERNELS = '''
from shm_layout.kernels import kernel


@kernel("i32* dst, i32* src, u64 n")
def copy_p2p_and_scale(ctx, dst, src, n):
    """copyP2PAndScale: dst = 2 * src."""
    dst[:n] = 2 * src[:n]
'''


def load_kernels():
    return hip.hipModuleLoadData(KERNELS, "mempool_kernels")


def access_desc(device: int, flags=hip.hipMemAccessFlagsProtReadWrite, kind=hip.hipMemLocationTypeDevice):
    return hip.hipMemAccessDesc(hip.hipMemLocation(kind, device), flags)


def device_pairs(n: int):
    """getDevicePairs: (i, j) for i < j."""
    return [(i, j) for i in range(n - 1) for j in range(i + 1, n)]


# -- MallocMemPoolAsync_* of mempool_common.hh (malloc_func(size, pool, stream) -> pointer) -----------------
# Upstream's kernel_500ms, which keeps the stream busy while the pool is queried, is a Gate opened once
# the busy state was checked (it writes nothing: VectorSet overwrites what kernel_500ms wrote).
PAGE = 4096


def _pool_attr(pool, attr):
    return hip.hipMemPoolGetAttribute(pool, attr)


def malloc_mempool_async_one_alloc(mod, malloc_func, kind: str, size: int) -> None:
    hip.hipSetDevice(0)
    mempools_supported(0)
    host = hip.hipHostMalloc(size)
    stream = hip.hipStreamCreate()
    try:
        with MemPoolGuard(kind, 0) as g, Gate(mod) as gate:
            mem = malloc_func(size, g.mempool, stream)
            gate.launch(stream)
            n = size // 4
            vector_set(mod, mem, 17, n, stream)
            hip.hipMemcpyAsync(host, mem, size, hip.hipMemcpyDeviceToHost, stream)
            hip.hipFreeAsync(mem, stream)
            res_before_sync = _pool_attr(g.mempool, hip.hipMemPoolAttrReservedMemCurrent)
            gate.open()
            hip.hipStreamSynchronize(stream)
            assert _pool_attr(g.mempool, hip.hipMemPoolAttrReservedMemCurrent) <= res_before_sync
            assert _pool_attr(g.mempool, hip.hipMemPoolAttrUsedMemCurrent) == 0
            assert (hip.host_array(host, np.int32, n) == 17).all()
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipHostFree(host)


def malloc_mempool_async_two_allocs(mod, malloc_func, kind: str, size: int) -> None:
    hip.hipSetDevice(0)
    mempools_supported(0)
    host = hip.hipHostMalloc(size)
    stream = hip.hipStreamCreate()
    try:
        with MemPoolGuard(kind, 0) as g, Gate(mod) as gate:
            pool = g.mempool
            mem1 = malloc_func(size, pool, stream)
            mem2 = malloc_func(size, pool, stream)
            gate.launch(stream)
            n = size // 4
            vector_set(mod, mem1, 17, n, stream)
            assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
            hip.hipMemcpyAsync(mem2, mem1, size, hip.hipMemcpyDeviceToDevice, stream)
            hip.hipMemcpyAsync(host, mem2, size, hip.hipMemcpyDeviceToHost, stream)
            hip.hipFreeAsync(mem1, stream)
            res_before_sync = _pool_attr(pool, hip.hipMemPoolAttrReservedMemCurrent)
            gate.open()
            hip.hipStreamSynchronize(stream)
            assert _pool_attr(pool, hip.hipMemPoolAttrReservedMemCurrent) <= res_before_sync
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == size      # just the second buffer
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemHigh) == 2 * size     # both
            hip.hipFreeAsync(mem2, stream)
            hip.hipStreamSynchronize(stream)
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0
            assert (hip.host_array(host, np.int32, n) == 17).all()
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipHostFree(host)


def malloc_mempool_async_reuse(mod, malloc_func, kind: str, size1: int) -> None:
    """MallocMemPoolAsync_Reuse; ``size1`` is upstream's kPageSize * kPageSize * 2 scaled to the platform."""
    hip.hipSetDevice(0)
    mempools_supported(0)
    stream = hip.hipStreamCreate()
    try:
        with MemPoolGuard(kind, 0) as g:
            pool = g.mempool
            size2 = PAGE
            mem1 = malloc_func(size1, pool, stream)
            mem3 = malloc_func(size2, pool, stream)
            with Gate(mod) as gate:
                gate.launch(stream)
                hip.hipFreeAsync(mem1, stream)          # not a real free: the kernel is not done
                mem2 = malloc_func(size1, pool, stream)
                assert mem1 == mem2                     # the runtime must reuse the pointer
                gate.open()
                hip.hipStreamSynchronize(stream)
            with Gate(mod) as gate:                     # the second kernel on the new memory
                gate.launch(stream)
                gate.open()
                hip.hipStreamSynchronize(stream)
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == size1 + size2
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemHigh) == size1 + size2
            hip.hipFreeAsync(mem2, stream)
            assert _pool_attr(pool, hip.hipMemPoolAttrUsedMemCurrent) == size2
            hip.hipFreeAsync(mem3, stream)
            hip.hipStreamSynchronize(stream)
    finally:
        hip.hipStreamDestroy(stream)
