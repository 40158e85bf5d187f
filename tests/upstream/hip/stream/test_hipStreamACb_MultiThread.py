"""hipStreamAddCallback from many threads onto one non-blocking stream whose copy, kernel, delay, copy
sequence is still running: every callback runs once and sees the finished copy. Upstream's 2 s delay
kernel is a gate, opened once every thread has added its callback; it follows the copy back (a copy to
pageable memory returns only when it is done, as on AMD, so a gate before it would never be opened)."""
import threading

import numpy as np

from hostside import hip
from tests.upstream.hipkit import Gate

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamACb_MultiThread.cc"

N = 4096
NUM_THREADS = 50                       # upstream: 1000


def test_Unit_hipStreamAddCallback_MultipleThreads(mod):
    nbytes = N * 4
    a_h = (np.float32(1.618) + np.arange(N, dtype=np.float32)).astype(np.float32)
    c_h = np.zeros(N, dtype=np.float32)
    a_d, c_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    stream = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    lock = threading.Lock()
    counts = {"cb": 0, "mismatch": 0, "bad_args": 0}

    def make_callback():
        def callback(s, status, user_data):      # Thread1_Callback / Thread2_Callback
            with lock:
                if s != stream or user_data is not None or status != hip.hipError_t.hipSuccess:
                    counts["bad_args"] += 1
                counts["mismatch"] += int(np.count_nonzero(c_h != a_h * a_h))
                counts["cb"] += 1
        return callback

    thread1_callback, thread2_callback = make_callback(), make_callback()
    errors = []

    def thread_func(cb):
        try:
            hip.hipStreamAddCallback(stream, cb, None, 0)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    with Gate(mod) as gate:
        hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), (N + 255) // 256, 1, 1, 256,
                                  1, 1, 0, stream, [a_d, c_d, N])
        hip.hipGetLastError()
        hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, stream)
        gate.launch(stream)             # upstream's delay is before this copy (see the module docstring)
        threads = [threading.Thread(target=thread_func, args=(thread1_callback if i % 2 == 0 else thread2_callback,))
                   for i in range(NUM_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert counts["cb"] == 0, "a callback ran before the stream's earlier work was done"
        gate.open()
        hip.hipStreamSynchronize(stream)
    hip.hipStreamDestroy(stream)
    hip.hipFree(a_d)
    hip.hipFree(c_d)
    assert not errors, errors
    assert counts["cb"] == NUM_THREADS
    assert counts["mismatch"] == 0
    assert counts["bad_args"] == 0
