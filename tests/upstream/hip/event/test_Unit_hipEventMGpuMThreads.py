"""Events timing a copy in, a 2-D transpose kernel and a copy out, one thread per device (once, and twice
in a row). The 1024 x 1024 matrix of upstream is 128 x 128 here."""
import threading

import numpy as np

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEventMGpuMThreads.cc"

WIDTH = 128
NUM = WIDTH * WIDTH
TB = 4      # THREADS_PER_BLOCK_X / _Y


def _thread_run(mod, device):
    hip.hipGetDeviceProperties(device)
    hip.hipSetDevice(device)
    start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    matrix = np.arange(NUM, dtype=np.float32) * np.float32(10.0)
    transposed = np.zeros(NUM, np.float32)
    gpu_matrix, gpu_transposed = hip.hipMalloc(4 * NUM), hip.hipMalloc(4 * NUM)
    hip.hipEventRecord(start)
    hip.hipMemcpy(gpu_matrix, matrix, 4 * NUM, hip.hipMemcpyHostToDevice)
    hip.hipEventRecord(stop)
    hip.hipEventSynchronize(stop)
    hip.hipEventElapsedTime(start, stop)
    hip.hipEventRecord(start)
    f = hip.hipModuleGetFunction(mod, "event_matrix_transpose")
    hip.hipModuleLaunchKernel(f, WIDTH // TB, WIDTH // TB, 1, TB, TB, 1, 0, None,
                              [gpu_transposed, gpu_matrix, WIDTH])
    hip.hipEventRecord(stop)
    hip.hipEventSynchronize(stop)
    hip.hipEventElapsedTime(start, stop)
    hip.hipEventRecord(start)
    hip.hipMemcpy(transposed, gpu_transposed, 4 * NUM, hip.hipMemcpyDeviceToHost)
    hip.hipEventRecord(stop)
    hip.hipEventSynchronize(stop)
    hip.hipEventElapsedTime(start, stop)
    reference = matrix.reshape(WIDTH, WIDTH).T.reshape(-1)
    errors = int((np.abs(transposed - reference) > 1.0e-6).sum())
    hip.hipFree(gpu_matrix)
    hip.hipFree(gpu_transposed)
    hip.hipEventDestroy(start)
    hip.hipEventDestroy(stop)
    assert errors == 0


def _run_threads(mod, n):
    failures = []

    def body(i):
        try:
            _thread_run(mod, i)
        except BaseException as exc:    # reported by the main thread
            failures.append((i, exc))

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not failures, failures


def test_Unit_hipEventMGpuMThreads_1(mod):
    _run_threads(mod, 1)


def test_Unit_hipEventMGpuMThreads_2(mod):
    n = hip.hipGetDeviceCount()
    assert n > 1
    _run_threads(mod, n)


def test_Unit_hipEventMGpuMThreads_3(mod):
    n = hip.hipGetDeviceCount()
    assert n > 1
    _run_threads(mod, n)
    _run_threads(mod, n)
