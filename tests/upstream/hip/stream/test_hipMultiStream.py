"""Several streams of one device with the null stream between them: a long kernel on each created stream
and an increment on the null stream (the legacy null stream orders them), and many rounds of empty
kernels on the null stream and two created streams."""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipMultiStream.cc"

NN = 1 << 12                           # upstream: 1 << 21


def _one(mod, name, stream, args):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, name), 1, 1, 1, 1, 1, 1, 0, stream, args)


def test_Unit_hipMultiStream_sameDevice(mod):
    num_streams = 8
    y, x = np.ones(1, dtype=np.float32), np.ones(1, dtype=np.float32)
    yd, xd = hip.hipMalloc(4), hip.hipMalloc(4)
    hip.hipMemcpy(yd, y, 4, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(xd, x, 4, hip.hipMemcpyHostToDevice)
    for _ in range(num_streams):
        s = hip.hipStreamCreate()
        data = hip.hipMalloc(NN * 4)
        _one(mod, "stream_pow_fill", s, [data, xd, NN])
        hip.hipGetLastError()
        _one(mod, "stream_n_kernel", None, [yd])
        hip.hipGetLastError()
        hip.hipFree(data)
        hip.hipStreamDestroy(s)
    hip.hipMemcpy(x, xd, 4, hip.hipMemcpyDeviceToHost)
    hip.hipMemcpy(y, yd, 4, hip.hipMemcpyDeviceToHost)
    assert x[0] == pytest.approx(y[0])
    assert y[0] == 1.0 + num_streams
    hip.hipFree(xd)
    hip.hipFree(yd)


def test_Unit_hipMultiStream_multimeDevice(mod):
    n_loops = 50                       # upstream: 50000
    n_streams = 2
    assert hip.hipGetDeviceCount() >= 1
    hip.hipSetDevice(0)
    hip.hipGetDeviceProperties(0)
    streams = [hip.hipStreamCreate() for _ in range(n_streams)]
    for _ in range(n_loops + 1):
        hip.hipDeviceSynchronize()
        _one(mod, "stream_do_nothing", None, [1])
        hip.hipGetLastError()
        for s in streams:
            _one(mod, "stream_do_nothing", s, [1])
            hip.hipGetLastError()
        hip.hipStreamSynchronize(streams[0])
    hip.hipDeviceSynchronize()
    for s in streams:
        hip.hipStreamDestroy(s)
