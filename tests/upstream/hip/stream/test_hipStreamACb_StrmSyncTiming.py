"""A callback after a copy, kernel, copy sequence sees the finished copy, and the stream cannot finish
while the callback runs. Upstream delays the kernel with a clock loop and the callback with a 2 s sleep,
then requires hipStreamSynchronize to take under 100 us once the callback is done. The port keeps the
kernel busy with a gate and holds the callback until the test releases it, and checks the facts behind
the timing instead of a wall clock: while the callback is held the stream is not ready, and once it has
returned hipStreamSynchronize has nothing left to wait for but the stream's end."""
import threading

import numpy as np

from hostside import hip
from tests.upstream.hipkit import Gate, wait_until

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamACb_StrmSyncTiming.cc"

N_ELMTS = 4096


def test_Unit_hipStreamAddCallback_StrmSyncTiming(mod):
    nbytes = N_ELMTS * 4
    a_h = (np.float32(1.618) + np.arange(N_ELMTS, dtype=np.float32)).astype(np.float32)
    c_h = np.zeros(N_ELMTS, dtype=np.float32)
    a_d, c_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    stream = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    release = threading.Event()
    state = {"entered": False, "done": False, "mismatch": None}

    def callback1(s, status, user_data):
        state["entered"] = True
        state["mismatch"] = int(np.count_nonzero(c_h != a_h * a_h))
        release.wait(30)                      # upstream: sleeps 2 s
        state["done"] = True

    with Gate(mod) as gate:
        hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), (N_ELMTS + 255) // 256, 1, 1,
                                  256, 1, 1, 0, stream, [a_d, c_d, N_ELMTS])
        hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, stream)
        # upstream: work-item 1 of the kernel spins on clock64; the gate follows the copy back (a copy to
        # pageable memory returns only when it is done, as on AMD)
        gate.launch(stream)
        hip.hipStreamAddCallback(stream, callback1, None, 0)
        assert not state["entered"]
        gate.open()
        wait_until(lambda: state["entered"], 30, "the callback to start")
        assert hip.hipStreamQuery(stream) == hip.hipError_t.hipErrorNotReady
        release.set()
        wait_until(lambda: state["done"], 30, "the callback to finish")
        hip.hipStreamSynchronize(stream)
        assert hip.hipStreamQuery(stream) == hip.hipError_t.hipSuccess
    hip.hipStreamDestroy(stream)
    hip.hipFree(a_d)
    hip.hipFree(c_d)
    assert state["mismatch"] == 0
