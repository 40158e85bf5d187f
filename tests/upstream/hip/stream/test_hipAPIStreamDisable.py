"""Basic multi-stream use: a long kernel on each of 8 created streams and an increment on the null
stream after each; both counters end equal."""
import numpy as np

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipAPIStreamDisable.cc"

NN = 1 << 12                           # upstream: 1 << 21
NUM_STREAMS = 8


def test_Unit_hipStreamCreate_MultistreamBasicFunctionalities(mod):
    y, x = np.ones(1, dtype=np.float32), np.ones(1, dtype=np.float32)
    yd, xd = hip.hipMalloc(4), hip.hipMalloc(4)
    hip.hipMemcpy(yd, y, 4, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(xd, x, 4, hip.hipMemcpyHostToDevice)
    fill = hip.hipModuleGetFunction(mod, "stream_pow_fill")
    inc = hip.hipModuleGetFunction(mod, "stream_n_kernel")
    data = []
    for _ in range(NUM_STREAMS):
        s = hip.hipStreamCreate()
        data.append(hip.hipMalloc(NN * 4))
        hip.hipModuleLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s, [data[-1], xd, NN])
        hip.hipGetLastError()
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 1, 1, 1, 0, None, [yd])
        hip.hipGetLastError()
        hip.hipStreamDestroy(s)
    hip.hipMemcpy(x, xd, 4, hip.hipMemcpyDeviceToHost)
    hip.hipMemcpy(y, yd, 4, hip.hipMemcpyDeviceToHost)
    assert x[0] == y[0]
    for p in data + [xd, yd]:            # upstream leaks data[] and the counters
        hip.hipFree(p)
