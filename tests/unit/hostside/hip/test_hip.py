"""The HIP layer end to end on two emulated GPUs and several streams."""
import threading

import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

KFILE = kernel_file("basic.py")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2})


def fn(mod, name):
    return hip.hipModuleGetFunction(mod, name)


def launch(f, n, stream, args, block=64):
    hip.hipModuleLaunchKernel(f, (n + block - 1) // block, 1, 1, block, 1, 1, 0, stream, args)


def test_devices(mod):
    assert hip.hipGetDeviceCount() == 2
    hip.hipSetDevice(1)
    assert hip.hipGetDevice() == 1
    hip.hipSetDevice(0)
    p = hip.hipGetDeviceProperties(1)
    assert p.totalGlobalMem == 16 << 20 and p.name == "hdemu-gpu1"
    with pytest.raises(hip.HipError) as ei:
        hip.hipSetDevice(5)
    assert ei.value.name == "hipErrorInvalidDevice"
    assert hip.hipGetLastError() == hip.hipError_t.hipErrorInvalidDevice
    assert hip.hipGetLastError() == hip.hipError_t.hipSuccess


@pytest.mark.parametrize("device", [0, 1])
def test_vector_add_and_inplace_increment_on_several_streams(mod, device):
    hip.hipSetDevice(device)
    try:
        n = 5000
        rng = np.random.default_rng(device)
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        streams = [hip.hipStreamCreate() for _ in range(3)]
        da, db = hip.hipMalloc(4 * n), hip.hipMalloc(4 * n)
        outs = [hip.hipMalloc(4 * n) for _ in streams]
        cnt = [hip.hipMalloc(4 * n) for _ in streams]
        hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyHostToDevice)
        hip.hipMemcpy(db, b, 4 * n, hip.hipMemcpyHostToDevice)
        for s, o, c in zip(streams, outs, cnt):
            hip.hipMemsetAsync(c, 0, 4 * n, s)
            launch(fn(mod, "vadd"), n, s, [da, db, o, n])
            for _ in range(7):
                launch(fn(mod, "inc"), n, s, [c, n])
        for s, o, c in zip(streams, outs, cnt):
            hip.hipStreamSynchronize(s)
            got = np.empty(n, np.float32)
            hip.hipMemcpy(got, o, 4 * n, hip.hipMemcpyDeviceToHost)
            assert np.array_equal(got, a + b)
            k = np.empty(n, np.int32)
            hip.hipMemcpy(k, c, 4 * n, hip.hipMemcpyDeviceToHost)
            assert np.array_equal(k, np.full(n, 7, np.int32))
        for p in [da, db] + outs + cnt:
            hip.hipFree(p)
        for s in streams:
            hip.hipStreamDestroy(s)
    finally:
        hip.hipSetDevice(0)


def test_threads_launch_concurrently_on_their_streams(mod):
    n = 256
    results = {}

    def work(i):
        s = hip.hipStreamCreate()
        d = hip.hipMalloc(4 * n)
        hip.hipMemsetAsync(d, 0, 4 * n, s)
        for _ in range(50):
            launch(fn(mod, "inc"), n, s, [d, n])
        out = np.empty(n, np.int32)
        hip.hipStreamSynchronize(s)
        hip.hipMemcpy(out, d, 4 * n, hip.hipMemcpyDeviceToHost)
        results[i] = out
        hip.hipFree(d)
        hip.hipStreamDestroy(s)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert all(np.array_equal(results[i], np.full(n, 50, np.int32)) for i in range(3))


def test_copies_of_every_kind_round_trip(mod):
    n = 3 * (1 << 20) + 123          # bigger than one staging half: chunked
    data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
    d0 = hip.hipMalloc(n)
    hip.hipSetDevice(1)
    d1 = hip.hipMalloc(n)
    hip.hipSetDevice(0)
    pin = hip.hipHostMalloc(n)
    pin2 = hip.hipHostMalloc(n)
    try:
        hip.hipMemcpy(d0, data, n, hip.hipMemcpyHostToDevice)              # pageable H2D
        hip.hipMemcpy(d1, d0, n, hip.hipMemcpyDeviceToDevice)              # D2D, across devices
        hip.hipMemcpy(pin, d1, n, hip.hipMemcpyDeviceToHost)               # D2H into pinned
        assert np.array_equal(hip.host_array(pin, np.uint8, n), data)
        hip.hipMemcpy(pin2, pin, n, hip.hipMemcpyHostToHost)               # H2H pinned
        back = np.zeros(n, np.uint8)
        hip.hipMemcpy(back, pin2, n, hip.hipMemcpyHostToHost)              # pinned -> pageable
        assert np.array_equal(back, data)
        hip.hipMemcpy(d0, pin2, n, hip.hipMemcpyHostToDevice)              # pinned H2D
        out = np.zeros(n, np.uint8)
        hip.hipMemcpy(out, d0, n, hip.hipMemcpyDefault)                    # pageable D2H, kind inferred
        assert np.array_equal(out, data)
        s = hip.hipStreamCreate()
        out2 = bytearray(n)
        hip.hipMemcpyAsync(d1, d0, n, hip.hipMemcpyDeviceToDevice, s)
        hip.hipMemsetAsync(d0, 0xAB, 1000, s)
        hip.hipMemcpyAsync(out2, d1, n, hip.hipMemcpyDeviceToHost, s)
        hip.hipStreamSynchronize(s)
        assert bytes(out2) == data.tobytes()
        hip.hipMemset(d1, 7, 100)
        head = np.zeros(1000, np.uint8)
        hip.hipMemcpy(head, d0, 1000, hip.hipMemcpyDeviceToHost)
        assert (head == 0xAB).all()
        hip.hipMemcpy(head, d1, 1000, hip.hipMemcpyDeviceToHost)
        assert (head[:100] == 7).all() and np.array_equal(head[100:], data[100:1000])
        hip.hipStreamDestroy(s)
    finally:
        hip.hipFree(d0)
        hip.hipFree(d1)
        hip.hipHostFree(pin)
        hip.hipHostFree(pin2)


def test_copy_errors_name_the_problem(mod):
    d = hip.hipMalloc(64)
    try:
        with pytest.raises(hip.HipError, match="hipErrorInvalidValue.*not inside a live allocation"):
            hip.hipMemcpy(d, np.zeros(512, np.uint8), 512, hip.hipMemcpyHostToDevice)
        with pytest.raises(hip.HipError, match="hipErrorInvalidMemcpyDirection"):
            hip.hipMemcpy(np.zeros(8, np.uint8), d, 8, hip.hipMemcpyHostToDevice)
        with pytest.raises(hip.HipError, match="hipErrorInvalidValue"):
            hip.hipMemcpy(0x1234, d, 8, hip.hipMemcpyDefault)
        with pytest.raises(hip.HipError, match="hipErrorInvalidValue"):
            hip.hipFree(d + 8)
    finally:
        hip.hipFree(d)


def test_events_measure_elapsed_time(mod):
    s = hip.hipStreamCreate()
    e0, e1 = hip.hipEventCreate(), hip.hipEventCreate()
    hip.hipEventRecord(e0, s)
    hip.hipModuleLaunchKernel(fn(mod, "sleep"), 1, 1, 1, 1, 1, 1, 0, s, [0.05])
    hip.hipEventRecord(e1, s)
    hip.hipEventSynchronize(e1)
    assert hip.hipEventQuery(e1) == hip.hipError_t.hipSuccess
    ms = hip.hipEventElapsedTime(e0, e1)
    assert 45 <= ms < 60000
    hip.hipEventDestroy(e0)
    hip.hipEventDestroy(e1)
    hip.hipStreamDestroy(s)


def test_stream_query(mod):
    s = hip.hipStreamCreate()
    with Gate(mod) as gate:                     # busy until the test opens it
        gate.launch(s)
        assert hip.hipStreamQuery(s) == hip.hipError_t.hipErrorNotReady
        gate.open()
        hip.hipStreamSynchronize(s)
        assert hip.hipStreamQuery(s) == hip.hipError_t.hipSuccess
    hip.hipStreamDestroy(s)


def test_grid_ids(mod):
    n = 1000
    d = hip.hipMalloc(4 * n)
    hip.hipModuleLaunchKernel(fn(mod, "grid_ids"), 10, 1, 1, 100, 1, 1, 0, None, [d])
    out = np.empty(n, np.int32)
    hip.hipMemcpy(out, d, 4 * n, hip.hipMemcpyDeviceToHost)
    assert np.array_equal(out, np.arange(n))
    hip.hipFree(d)


@pytest.mark.parametrize("kernel,args,err", [
    ("boom", [0], "hipErrorLaunchFailure"),
    ("overrun", ["d", 1], "hipErrorIllegalAddress"),
    ("inc", [0xDEAD0000, 1], "hipErrorIllegalAddress"),
])
def test_device_failure_surfaces_as_hip_error(mod, kernel, args, err):
    s = hip.hipStreamCreate()
    d = hip.hipMalloc(64)
    args = [d if a == "d" else a for a in args]
    hip.hipModuleLaunchKernel(fn(mod, kernel), 1, 1, 1, 1, 1, 1, 0, s, args)
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamSynchronize(s)
    assert ei.value.name == err
    assert hip.hipGetLastError().name == err
    # other streams keep working
    ok = hip.hipStreamCreate()
    launch(fn(mod, "inc"), 16, ok, [d, 16])
    hip.hipStreamSynchronize(ok)
    hip.hipStreamDestroy(ok)
    hip.hipStreamDestroy(s)
    hip.hipFree(d)


def test_launch_argument_errors(mod):
    with pytest.raises(hip.HipError, match="hipErrorInvalidValue.*takes 4 arguments"):
        hip.hipModuleLaunchKernel(fn(mod, "vadd"), 1, 1, 1, 1, 1, 1, 0, None, [1, 2])
    with pytest.raises(hip.HipError, match="hipErrorNotFound"):
        hip.hipModuleGetFunction(mod, "nope")
    with pytest.raises(hip.HipError, match="hipErrorFileNotFound"):
        hip.hipModuleLoad("/nonexistent/k.py")
    with pytest.raises(hip.HipError, match="hipErrorInvalidImage"):
        hip.hipModuleLoadData("def (")
    with pytest.raises(hip.HipError, match="hipErrorInvalidHandle"):
        hip.hipStreamSynchronize("not a stream")
