"""The HipTest:: helpers the ported memcpy / malloc / free files share: initArrays / setDefaultData /
freeArrays as typed host and device buffers, the typed vectorADD and vector_square kernels of
tests/kernels/upstream.py, setNumBlocks, and BlockingContext (a stream held busy by a host callback
until the test releases it), and the write-then-synchronise check of hipHostAlloc / hipMallocHost."""
from __future__ import annotations

import threading

import numpy as np

from hostside import hip

__all__ = ["VECTOR_ADD", "VECTOR_SQUARE", "HostBuf", "Arrays", "default_data", "set_num_blocks", "launch",
           "vector_add", "vector_square", "BlockingContext", "host_address", "SYNC_SECTIONS", "kernel_write_seen"]

#: HipTest::vectorADD<T> of each element type (the Python kernels do the grid-stride loop in one step)
VECTOR_ADD = {np.int32: "vectorADD_i32", np.float32: "vectorADD", np.float64: "memcpy_vector_add_f64"}
#: HipTest::vector_square<T>
VECTOR_SQUARE = {np.int32: "stream_vector_square_i32", np.float32: "vector_square",
                 np.float64: "memory_vector_square_f64"}


def default_data(dtype, n: int):
    """setDefaultData: (A, B, C) host values; int 3, 4, 5; char 'a', 'b', 'c'; floating 3.146f + i,
    1.618f + i, 1.4f + i (computed in float, then stored as T)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and dtype.itemsize == 1:
        return tuple(np.full(n, ord(ch), dtype=dtype) for ch in "abc")
    if dtype.kind in "iu":
        return tuple(np.full(n, v, dtype=dtype) for v in (3, 4, 5))
    i = np.arange(n, dtype=np.float32)
    return tuple((np.float32(v) + i).astype(dtype) for v in (3.146, 1.618, 1.4))


class HostBuf:
    """A host array of ``n`` elements: pageable (``ptr`` is the numpy array itself) or pinned by
    hipHostMalloc (``ptr`` is the pointer, ``a`` its numpy view)."""

    def __init__(self, dtype, n: int, pinned: bool, flags: int = 0):
        self.pinned, self.nbytes = pinned, n * np.dtype(dtype).itemsize
        if pinned:
            self.ptr = hip.hipHostMalloc(self.nbytes, flags)
            self.a = hip.host_array(self.ptr, dtype, n)
            self.a[:] = 0
        else:
            self.a = np.zeros(n, dtype=dtype)
            self.ptr = self.a

    def at(self, offset: int):
        """The buffer ``offset`` elements in (what ``ptr + offset`` is in C)."""
        return self.ptr + offset * self.a.itemsize if self.pinned else self.a[offset:]

    def free(self):
        if self.pinned and self.ptr:
            hip.hipHostFree(self.ptr)
        self.ptr = self.a = None


class Arrays:
    """HipTest::initArrays: device buffers A_d, B_d, C_d and host buffers A_h, B_h, C_h (``HostBuf``)
    holding setDefaultData; ``which`` picks the buffers to make (e.g. "A_d B_d A_h B_h")."""

    NAMES = ("A_d", "B_d", "C_d", "A_h", "B_h", "C_h")

    def __init__(self, dtype, n: int, pinned: bool = False, which: str = "A_d B_d C_d A_h B_h C_h"):
        self.dtype, self.n, self.nbytes = np.dtype(dtype).type, n, n * np.dtype(dtype).itemsize
        wanted = which.split()
        data = dict(zip(("A_h", "B_h", "C_h"), default_data(dtype, n)))
        for name in self.NAMES:
            setattr(self, name, None)
        try:
            for name in wanted:
                if name.endswith("_d"):
                    setattr(self, name, hip.hipMalloc(self.nbytes))
                else:
                    buf = HostBuf(dtype, n, pinned)
                    buf.a[:] = data[name]
                    setattr(self, name, buf)
        except BaseException:
            self.free()
            raise

    def free(self):
        """freeArrays."""
        for name in self.NAMES:
            v = getattr(self, name)
            if isinstance(v, HostBuf):
                v.free()
            elif v:
                hip.hipFree(v)
            setattr(self, name, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def set_num_blocks(blocks_per_cu: int, threads_per_block: int, n: int) -> int:
    """HipTest::setNumBlocks: multiProcessorCount * blocksPerCU, or enough blocks to cover ``n``."""
    props = hip.hipGetDeviceProperties(hip.hipGetDevice())
    blocks = props.multiProcessorCount * blocks_per_cu
    if blocks * threads_per_block < n:
        blocks = (n + threads_per_block - 1) // threads_per_block
    return blocks


def launch(mod, name: str, grid: int, block: int, args, stream=None) -> None:
    """hipLaunchKernelGGL(name, dim3(grid), dim3(block), 0, stream, args...)."""
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, name), grid, 1, 1, block, 1, 1, 0, stream, args)


def vector_add(mod, dtype, a, b, c, n: int, stream=None, grid: int = 1, block: int = 1) -> None:
    launch(mod, VECTOR_ADD[np.dtype(dtype).type], grid, block, [a, b, c, n], stream)


def vector_square(mod, dtype, a, b, n: int, stream=None, grid: int = 1, block: int = 1) -> None:
    launch(mod, VECTOR_SQUARE[np.dtype(dtype).type], grid, block, [a, b, n], stream)


def host_address(a: np.ndarray) -> int:
    """The address of ordinary host memory (a stack or heap variable in the C++ original)."""
    return int(a.ctypes.data)


class BlockingContext:
    """HipTest::BlockingContext: ``block_stream()`` adds a host callback that holds ``stream`` until
    ``unblock_stream()``; ``is_blocked()`` is hipStreamQuery == hipErrorNotReady. The callback waits on
    an event (bounded: it gives up after ``limit_s`` so a test that forgets to unblock still ends)."""

    def __init__(self, stream=None, limit_s: float = 30.0):
        self.stream, self.limit_s = stream, limit_s
        self._released = threading.Event()

    def block_stream(self) -> None:
        self._released.clear()

        def blocking_callback(_stream, _status, event):
            event.wait(self.limit_s)

        hip.hipStreamAddCallback(self.stream, blocking_callback, self._released, 0)

    def unblock_stream(self) -> None:
        self._released.set()

    def is_blocked(self) -> bool:
        return hip.hipStreamQuery(self.stream) == hip.hipError_t.hipErrorNotReady

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unblock_stream()


#: the synchronisation SECTIONs of hipHostAlloc.cc / hipMallocHost.cc's DataValidation
SYNC_SECTIONS = ["device sync", "event sync", "stream sync"]


def kernel_write_seen(mod, host_memory: int, device_memory: int, section: str, validation_number: int = 10) -> None:
    """write_integer<<<1, 1>>>(device_memory, validation_number), the SECTION's synchronisation (device,
    event or stream), then the int at ``host_memory`` is validation_number."""
    event = None
    try:
        launch(mod, "set_value", 1, 1, [device_memory, validation_number, 1])   # write_integer<<<1, 1>>>
        if section == "device sync":
            hip.hipDeviceSynchronize()
        elif section == "event sync":
            event = hip.hipEventCreateWithFlags(0)
            hip.hipEventRecord(event, None)
            hip.hipEventSynchronize(event)
        else:
            hip.hipStreamSynchronize(None)
        assert hip.host_array(host_memory, np.int32, 1)[0] == validation_number
    finally:
        if event is not None:
            hip.hipEventDestroy(event)
