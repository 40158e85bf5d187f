"""hipMalloc3D: one small allocation freed leaves the free memory as it was; chunks of a small and a big
extent allocated and then freed, on device 0 and from one thread per device. The big extent (100 floats
by 100 by 100, 5 MB a chunk with its pitch) is allocated 4 times, not upstream's CHUNK_LOOP (100, about
500 MB: the ported platform's devices have 32 MiB). CHECK_IMAGE_SUPPORT is not applied, as in the
hipMemcpy2D port: these cases use no image memory, and on hdemu (ImageSupport 0) it would make each of
them return at once."""
import threading

import numpy as np

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMalloc3D.cc"

SMALL_SIZE = 4
CHUNK_LOOP = 100
BIG_SIZE = 100
#: CHUNK_LOOP of the big extent: what fits in a 32 MiB device (upstream: CHUNK_LOOP)
BIG_CHUNK_LOOP = 4
FLOAT = np.dtype(np.float32).itemsize


def memory_alloc_3d_diff_sizes(gpu: int) -> None:
    """MemoryAlloc3DDiffSizes: CHUNK_LOOP hipMalloc3D of each extent, then their hipFree."""
    hip.hipSetDevice(gpu)
    for sizes, loops in ((SMALL_SIZE, CHUNK_LOOP), (BIG_SIZE, BIG_CHUNK_LOOP)):
        extent = hip.make_hipExtent(sizes * FLOAT, sizes, sizes)
        hip.hipMemGetInfo()
        pitched = []
        try:
            for _ in range(loops):
                pitched.append(hip.hipMalloc3D(extent))
        finally:
            for p in pitched:
                hip.hipFree(p.ptr)


def test_Unit_hipMalloc3D_Basic(platform):
    extent = hip.make_hipExtent(SMALL_SIZE, SMALL_SIZE, SMALL_SIZE)
    pavail, _ptot = hip.hipMemGetInfo()
    dev_pitched = hip.hipMalloc3D(extent)
    assert dev_pitched.ptr
    hip.hipFree(dev_pitched.ptr)
    avail, _tot = hip.hipMemGetInfo()
    assert pavail == avail, "Memory leak of hipMalloc3D API"


def test_Unit_hipMalloc3D_SmallandBigChunks(platform):
    memory_alloc_3d_diff_sizes(0)


def test_Unit_hipMalloc3D_MultiThread(platform):
    dev_cnt = hip.hipGetDeviceCount()
    errors = {}

    def thread_func(gpu):
        try:
            memory_alloc_3d_diff_sizes(gpu)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors[gpu] = exc

    threads = [threading.Thread(target=thread_func, args=(i,)) for i in range(dev_cnt)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == {}
