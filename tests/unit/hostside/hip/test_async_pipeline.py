"""Streams far ahead of the device: kernels mixed with copies, fills, events and graph launches, no
sync until the end (the stream's completion-signal ring wraps many times; see the signal-reuse rule in
hostside/clr/_vgpu.py). Each iteration copies the counter the kernel just bumped into its own slot of a
history buffer, so the history checks the order of every kernel/copy pair, not only the last one.

Every host wait is bounded by a short ``wait_timeout_s``: a deadlock fails with hipErrorLaunchTimeOut
in seconds instead of hanging."""
import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from hostside.clr import SIGNALS_PER_STREAM
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(300)

#: well past the ring (SIGNALS_PER_STREAM commands ahead is where it used to stick)
ITERS = 1000
assert ITERS * 2 > 3 * SIGNALS_PER_STREAM


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2, "max_queues": 32})


@pytest.fixture(autouse=True)
def short_waits(mod, monkeypatch):
    """A stuck stream fails in 20 s (hipErrorLaunchTimeOut), not after the default 60/600 s."""
    monkeypatch.setattr(hsa.runtime(), "wait_timeout_s", 20.0)


@pytest.fixture
def mem(mod):
    """mem(nbytes, host=False, device=0) -> pointer (zeroed); all freed at the end of the test."""
    ptrs = []

    def alloc(n, host=False, device=0):
        if host:
            p = hip.hipHostMalloc(n)
            hip.host_array(p, np.uint8, n)[:] = 0
        else:
            hip.hipSetDevice(device)
            try:
                p = hip.hipMalloc(n)
                hip.hipMemset(p, 0, n)          # asynchronous on device memory (as in HIP); streams
                hip.hipDeviceSynchronize()      # of the other device are not ordered with it
            finally:
                hip.hipSetDevice(0)
        ptrs.append((p, host))
        return p
    yield alloc
    hip.hipDeviceSynchronize()
    for p, host in ptrs:
        (hip.hipHostFree if host else hip.hipFree)(p)


@pytest.fixture
def streams(mod):
    """streams(device=0) -> a new stream of that device; all destroyed at the end of the test."""
    made = []

    def create(device=0):
        hip.hipSetDevice(device)
        try:
            s = hip.hipStreamCreate()
        finally:
            hip.hipSetDevice(0)
        made.append(s)
        return s
    yield create
    for s in made:
        hip.hipStreamDestroy(s)


def inc(mod, stream, x, n=1):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "inc"), 1, 1, 1, n, 1, 1, 0, stream, [x, n])


def history(ptr, n):
    out = np.empty(n, np.int32)
    hip.hipMemcpy(out, ptr, 4 * n, hip.hipMemcpyDeviceToHost)
    return out


def expected(n):
    return np.arange(1, n + 1, dtype=np.int32)


# -- one stream, one pattern each --------------------------------------------------------------------
def test_kernel_then_d2d_copy_far_ahead(mod, mem, streams):
    s = streams()
    x, hist = mem(4), mem(4 * ITERS)
    for i in range(ITERS):
        inc(mod, s, x)
        hip.hipMemcpyAsync(hist + 4 * i, x, 4, hip.hipMemcpyDeviceToDevice, s)
    hip.hipStreamSynchronize(s)
    assert np.array_equal(history(hist, ITERS), expected(ITERS))


def test_kernel_then_d2h_copy_into_pinned_far_ahead(mod, mem, streams):
    s = streams()
    x, hist = mem(4), mem(4 * ITERS, host=True)
    for i in range(ITERS):
        inc(mod, s, x)
        hip.hipMemcpyAsync(hist + 4 * i, x, 4, hip.hipMemcpyDeviceToHost, s)
    hip.hipStreamSynchronize(s)
    assert np.array_equal(hip.host_array(hist, np.int32, ITERS), expected(ITERS))


def test_memset_then_kernel_far_ahead(mod, mem, streams):
    s = streams()
    x, y = mem(4), mem(64)
    for _ in range(ITERS):
        hip.hipMemsetAsync(y, 0, 64, s)         # SDMA, then the kernel behind a cross-engine barrier
        inc(mod, s, y, 16)
        inc(mod, s, x)
    hip.hipStreamSynchronize(s)
    assert history(x, 1)[0] == ITERS
    assert np.array_equal(history(y, 16), np.ones(16, np.int32))


def test_events_recorded_between_kernels_and_copies(mod, mem, streams):
    """An event re-recorded every iteration: the copy after a record depends on the event's signal,
    so a re-record may not reuse that signal while the copy has not passed it."""
    s = streams()
    x, hist = mem(4), mem(4 * ITERS)
    ev = hip.hipEventCreate()
    try:
        for i in range(ITERS):
            inc(mod, s, x)
            hip.hipEventRecord(ev, s)
            hip.hipMemcpyAsync(hist + 4 * i, x, 4, hip.hipMemcpyDeviceToDevice, s)
        hip.hipEventSynchronize(ev)
        hip.hipStreamSynchronize(s)
        assert hip.hipEventQuery(ev) == hip.hipError_t.hipSuccess
    finally:
        hip.hipEventDestroy(ev)
    assert np.array_equal(history(hist, ITERS), expected(ITERS))


def test_stream_wait_event_ping_pong_far_ahead(mod, mem, streams):
    """A producer stream (kernel, copy, record) and a consumer stream (wait, copy, record) that the
    producer waits for in turn; both events re-recorded every iteration."""
    a, b = streams(), streams()
    iters = 150                                  # 3 ring signals of stream a each: well past its ring
    x, y, hist = mem(4), mem(4), mem(4 * iters)
    ev_a, ev_b = hip.hipEventCreate(), hip.hipEventCreate()
    try:
        for i in range(iters):
            inc(mod, a, x)
            hip.hipMemcpyAsync(y, x, 4, hip.hipMemcpyDeviceToDevice, a)
            hip.hipEventRecord(ev_a, a)
            hip.hipStreamWaitEvent(b, ev_a)
            hip.hipMemcpyAsync(hist + 4 * i, y, 4, hip.hipMemcpyDeviceToDevice, b)
            hip.hipEventRecord(ev_b, b)
            hip.hipStreamWaitEvent(a, ev_b)      # the next bump of x waits for b's copy of y
        hip.hipStreamSynchronize(a)
        hip.hipStreamSynchronize(b)
    finally:
        hip.hipEventDestroy(ev_a)
        hip.hipEventDestroy(ev_b)
    assert np.array_equal(history(hist, iters), expected(iters))


def test_graph_launches_interleaved_with_copies_and_kernels(mod, mem, streams):
    """Graph launches (kernel -> copy) between plain kernels and copies of the same stream."""
    s = streams()
    x, y, hist = mem(4), mem(4), mem(4 * ITERS)
    g = hip.hipGraphCreate()
    k = hip.hipGraphAddKernelNode(g, [], hip.hipKernelNodeParams(hip.hipModuleGetFunction(mod, "inc"),
                                                                   (1, 1, 1), (1, 1, 1), 0, [x, 1]))
    hip.hipGraphAddMemcpyNode1D(g, [k], y, x, 4, hip.hipMemcpyDeviceToDevice)
    ge = hip.hipGraphInstantiate(g)
    try:
        for i in range(ITERS // 2):
            hip.hipGraphLaunch(ge, s)                # x += 1, y = x
            hip.hipMemcpyAsync(hist + 8 * i, y, 4, hip.hipMemcpyDeviceToDevice, s)
            inc(mod, s, x)
            hip.hipMemcpyAsync(hist + 8 * i + 4, x, 4, hip.hipMemcpyDeviceToDevice, s)
        hip.hipStreamSynchronize(s)
    finally:
        hip.hipGraphExecDestroy(ge)
        hip.hipGraphDestroy(g)
    assert np.array_equal(history(hist, ITERS), expected(ITERS))


def test_many_streams_far_ahead(mod, mem, streams):
    """Eight streams fed round robin from one thread, each kernel + copy per iteration."""
    n_streams, iters = 8, ITERS // 2
    ss = [streams() for _ in range(n_streams)]
    xs = [mem(4) for _ in ss]
    hists = [mem(4 * iters) for _ in ss]
    for i in range(iters):
        for s, x, h in zip(ss, xs, hists):
            inc(mod, s, x)
            hip.hipMemcpyAsync(h + 4 * i, x, 4, hip.hipMemcpyDeviceToDevice, s)
    for s in ss:
        hip.hipStreamSynchronize(s)
    for h in hists:
        assert np.array_equal(history(h, iters), expected(iters))


# -- the long pipeline ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("devices", [1, 2])
def test_async_pipeline_10000_iterations(mod, mem, streams, devices):
    """Kernel + copy per iteration, no sync, 10,000 iterations, on one stream per device (a D2H copy
    into pinned memory every 8th iteration, D2D otherwise; with two devices the second device's copies
    go into a history on the first device)."""
    iters = 10_000
    ss = [streams(d) for d in range(devices)]
    xs = [mem(4, device=d) for d in range(devices)]
    hists = [mem(4 * iters) for _ in range(devices)]
    pins = [mem(4 * iters, host=True) for _ in range(devices)]
    for i in range(iters):
        for s, x, h, p in zip(ss, xs, hists, pins):
            inc(mod, s, x)
            if i % 8 == 7:
                hip.hipMemcpyAsync(p + 4 * i, x, 4, hip.hipMemcpyDeviceToHost, s)
            else:
                hip.hipMemcpyAsync(h + 4 * i, x, 4, hip.hipMemcpyDeviceToDevice, s)
    for s in ss:
        hip.hipStreamSynchronize(s)
    want = expected(iters)
    pinned = np.arange(iters) % 8 == 7
    for h, p in zip(hists, pins):
        got = history(h, iters)
        got[pinned] = hip.host_array(p, np.int32, iters)[pinned]
        assert np.array_equal(got, want)
