"""The legacy null stream, stream flags and priorities, host functions, launch-time checks, ``extra``
and hipExtModuleLaunchKernel, event flags and the upstream error codes (issue 10, items 1-4)."""
import struct
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate, launch, platform_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t


@pytest.fixture(scope="module")
def mod():
    yield from platform_module()


@pytest.fixture
def dint():
    """A device int32 buffer of n elements, zeroed; freed afterwards."""
    ptrs = []

    def make(n=16):
        p = hip.hipMalloc(4 * n)
        hip.hipMemset(p, 0, 4 * n)      # asynchronous for device memory (as in HIP): wait for it, so a
        hip.hipDeviceSynchronize()      # non-blocking stream's kernel cannot run before it
        ptrs.append(p)
        return p
    yield make
    hip.hipDeviceSynchronize()
    for p in ptrs:
        hip.hipFree(p)


def read(p, n=16):
    out = np.zeros(n, np.int32)
    hip.hipMemcpy(out, p, 4 * n, hip.hipMemcpyDeviceToHost)
    return out


def raises(err, fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == err, ei.value
    assert hip.hipGetLastError() == err


# -- the legacy null stream ------------------------------------------------------------------------
def test_null_stream_waits_for_blocking_streams(mod, dint):
    d = dint()
    s = hip.hipStreamCreate()
    with Gate(mod) as g:
        g.launch(s)
        launch(mod, "set_value", [d, 7, 16], s, n=16)
        launch(mod, "increment", [d, 16], None, n=16)     # must run after set_value
        assert hip.hipStreamQuery(0) == E.hipErrorNotReady
        assert hip.hipStreamQuery(None) == E.hipErrorNotReady
        g.open()
        hip.hipStreamSynchronize(0)
        assert hip.hipStreamQuery(s) == E.hipSuccess      # the null stream's sync covered s
    assert (read(d) == 8).all()
    hip.hipStreamDestroy(s)


def test_null_stream_waits_for_work_after_it_saw_the_stream_idle(mod, dint):
    """The null stream skips a blocking stream that took no command since it was seen idle: work
    submitted after that is still waited for, every time."""
    d = dint()
    s = hip.hipStreamCreate()
    for i in range(3):
        launch(mod, "increment", [d, 16], None, n=16)     # s idle: nothing to wait for
        hip.hipStreamSynchronize(None)
        with Gate(mod) as g:
            g.launch(s)
            launch(mod, "set_value", [d, 10 * (i + 1), 16], s, n=16)
            launch(mod, "increment", [d, 16], None, n=16)     # must run after set_value
            assert hip.hipStreamQuery(None) == E.hipErrorNotReady
            g.open()
            hip.hipStreamSynchronize(None)
        assert (read(d) == 10 * (i + 1) + 1).all(), i
    hip.hipStreamDestroy(s)


def test_blocking_stream_waits_for_the_null_stream(mod, dint):
    d = dint()
    s = hip.hipStreamCreate()
    with Gate(mod) as g:
        g.launch(None)
        launch(mod, "set_value", [d, 7, 16], None, n=16)
        launch(mod, "increment", [d, 16], s, n=16)        # must run after the null stream's work
        g.open()
        hip.hipStreamSynchronize(s)
    assert (read(d) == 8).all()
    hip.hipStreamDestroy(s)


def test_synchronous_memcpy_reads_what_a_blocking_stream_wrote(mod, dint):
    d = dint(1024)
    s = hip.hipStreamCreate()
    for i in range(20):
        launch(mod, "set_value", [d, i, 1024], s, n=1024)
        out = np.zeros(1024, np.int32)
        hip.hipMemcpy(out, d, 4096, hip.hipMemcpyDeviceToHost)      # no sync of s: the legacy order
        assert (out == i).all()
    hip.hipStreamDestroy(s)


def test_non_blocking_stream_is_not_ordered_with_the_null_stream(mod, dint):
    d = dint()
    ns = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    assert hip.hipStreamGetFlags(ns) == hip.hipStreamNonBlocking
    with Gate(mod) as g:
        g.launch(None)
        launch(mod, "increment", [d, 16], ns, n=16)
        hip.hipStreamSynchronize(ns)                       # returns while the null stream is held
        assert hip.hipStreamQuery(0) == E.hipErrorNotReady
        assert hip.hipStreamQuery(ns) == E.hipSuccess
        g.open()
    assert (read(d) == 1).all()
    hip.hipStreamDestroy(ns)


def test_async_pipeline_alternating_null_and_blocking_streams_past_every_ring(mod, dint):
    """No sync for 700 iterations (past the 256 completion signals of a stream): each command waits
    for the one before on the other stream, so the sum is exact."""
    d = dint(4)
    s = hip.hipStreamCreate()
    for _ in range(350):
        launch(mod, "increment", [d, 4], s, n=4)
        launch(mod, "add_count", [d, 4, 2], None, n=4)
    hip.hipStreamSynchronize(None)
    assert (read(d, 4) == 1050).all()
    hip.hipStreamDestroy(s)


def test_per_thread_stream(mod, dint):
    d = dint()
    seen = {}

    def work(i):
        launch(mod, "increment", [d + 4 * i, 1], hip.hipStreamPerThread, n=1)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
        seen[i] = hip.hipStreamGetFlags(hip.hipStreamPerThread)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert seen == {i: hip.hipStreamDefault for i in range(4)}
    assert (read(d)[:4] == 1).all()


def test_capture_rules_of_the_legacy_stream(mod, dint):
    d = dint()
    s = hip.hipStreamCreate()
    for mode in (hip.hipStreamCaptureModeGlobal, hip.hipStreamCaptureModeThreadLocal):
        hip.hipStreamBeginCapture(s, mode)
        raises(E.hipErrorStreamCaptureImplicit, hip.hipStreamIsCapturing, 0)
        raises(E.hipErrorStreamCaptureImplicit, hip.hipStreamGetCaptureInfo, hip.hipStreamLegacy)
        launch(mod, "increment", [d, 16], s, n=16)
        g = hip.hipStreamEndCapture(s)                     # a query leaves the capture valid
        assert len(hip.hipGraphGetNodes(g)) == 1
        hip.hipGraphDestroy(g)
        hip.hipStreamBeginCapture(s, mode)
        raises(E.hipErrorStreamCaptureImplicit, hip.hipMemsetAsync, d, 0, 64, None)
        raises(E.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, s)    # work invalidates it
    ns = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    hip.hipStreamBeginCapture(ns, hip.hipStreamCaptureModeGlobal)   # a non-blocking stream: no order
    assert hip.hipStreamIsCapturing(0) == hip.hipStreamCaptureStatusNone
    hip.hipGraphDestroy(hip.hipStreamEndCapture(ns))
    hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeRelaxed)
    raises(E.hipErrorStreamCaptureUnsupported, hip.hipDeviceSynchronize)   # any mode (as hip-tests)
    raises(E.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, s)
    for x in (s, ns):
        hip.hipStreamDestroy(x)


def test_stream_handles_and_priorities(mod):
    least, greatest = hip.hipDeviceGetStreamPriorityRange()
    assert least >= greatest
    for p in range(greatest - 2, least + 3):
        s = hip.hipStreamCreateWithPriority(hip.hipStreamDefault, p)
        assert greatest <= hip.hipStreamGetPriority(s) <= least
        assert hip.hipStreamGetDevice(s) == 0
        hip.hipStreamDestroy(s)
    raises(E.hipErrorInvalidValue, hip.hipStreamCreateWithFlags, 5)
    raises(E.hipErrorInvalidValue, hip.hipStreamCreateWithPriority, 0, "high")
    s = hip.hipStreamCreate()
    hip.hipStreamDestroy(s)
    raises(E.hipErrorContextIsDestroyed, hip.hipStreamQuery, s)
    raises(E.hipErrorContextIsDestroyed, hip.hipStreamSynchronize, s)
    raises(E.hipErrorContextIsDestroyed, hip.hipStreamDestroy, s)
    raises(E.hipErrorInvalidHandle, hip.hipStreamDestroy, None)
    raises(E.hipErrorInvalidHandle, hip.hipStreamQuery, "stream")


# -- host functions --------------------------------------------------------------------------------
def test_host_functions_run_in_stream_order(mod, dint):
    d = dint()
    s = hip.hipStreamCreate()
    calls = []
    hp = hip.hipHostMalloc(4)
    host = hip.host_array(hp, np.int32, 1)
    with Gate(mod) as g:
        g.launch(s)
        launch(mod, "set_value", [d, 5, 16], s, n=16)
        hip.hipMemcpyAsync(hp, d, 4, hip.hipMemcpyDeviceToHost, s)      # pinned: truly asynchronous
        hip.hipLaunchHostFunc(s, lambda u: calls.append(("fn", u, int(host[0]))), "a")
        hip.hipStreamAddCallback(s, lambda st, status, u: calls.append(("cb", u, status)), "b", 0)
        launch(mod, "increment", [d, 16], s, n=16)
        assert calls == []                                  # the gate holds everything
        g.open()
        hip.hipStreamSynchronize(s)
    assert calls == [("fn", "a", 5), ("cb", "b", E.hipSuccess)]
    assert (read(d) == 6).all()
    raises(E.hipErrorInvalidValue, hip.hipLaunchHostFunc, s, None, None)
    raises(E.hipErrorInvalidValue, hip.hipStreamAddCallback, s, lambda *a: None, None, 1)
    hip.hipStreamDestroy(s)
    hip.hipHostFree(hp)


def test_many_host_functions_without_a_sync(mod):
    s = hip.hipStreamCreate()
    seen = []
    for i in range(300):
        hip.hipLaunchHostFunc(s, seen.append, i)
    hip.hipStreamSynchronize(s)
    assert seen == list(range(300))
    hip.hipStreamDestroy(s)


# -- launch-time checks ----------------------------------------------------------------------------
@pytest.mark.parametrize("dims,shared,err", [
    ((0, 1, 1, 1, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 0, 1, 1, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 1, 1, 0, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 1, 1, 1025, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 1, 1, 32, 32, 2), 0, E.hipErrorInvalidValue),
    ((1, 1, 1, 2**32 - 1, 2**32 - 1, 2**32 - 1), 0, E.hipErrorInvalidValue),
    ((2**31, 1, 1, 1, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 65537, 1, 1, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 1, 65537, 1, 1, 1), 0, E.hipErrorInvalidValue),
    ((1, 1, 1, 1, 1, 1), 65537, E.hipErrorInvalidValue),
    ((1, 1, 1, 1.5, 1, 1), 0, E.hipErrorInvalidValue),
    ((-1, 1, 1, 1, 1, 1), 0, E.hipErrorInvalidValue),
])
def test_launch_configuration_is_checked_at_the_call(mod, dims, shared, err):
    s = hip.hipStreamCreate()
    f = hip.hipModuleGetFunction(mod, "empty")
    raises(err, hip.hipModuleLaunchKernel, f, *dims, shared, s, [])
    hip.hipStreamSynchronize(s)                 # the stream is as it was
    hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
    hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)


def test_launch_limits_match_the_properties(mod):
    p = hip.hipGetDeviceProperties(0)
    f = hip.hipModuleGetFunction(mod, "empty")
    s = hip.hipStreamCreate()
    for d in ((1, 1, 1, p.maxThreadsDim[0], 1, 1), (1, 1, 1, 1, p.maxThreadsDim[1], 1),
              (1, 1, 1, 1, 1, p.maxThreadsDim[2]), (1, p.maxGridSize[1], 1, 1, 1, 1),
              (1, 1, p.maxGridSize[2], 1, 1, 1), (1, 1, 1, p.maxThreadsPerBlock, 1, 1)):
        hip.hipModuleLaunchKernel(f, *d, p.sharedMemPerBlock, s, [])
    hip.hipStreamSynchronize(s)
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, f, 1, 1, 1, p.maxThreadsPerBlock + 1, 1, 1, 0, s, [])
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, f, 1, 1, 1, 1, 1, 1, p.sharedMemPerBlock + 1, s, [])
    hip.hipStreamDestroy(s)


def test_launch_error_codes_and_last_error(mod, dint):
    d = dint()
    s = hip.hipStreamCreate()
    raises(E.hipErrorInvalidResourceHandle, hip.hipModuleLaunchKernel, None, 1, 1, 1, 1, 1, 1, 0, s, [])
    inc = hip.hipModuleGetFunction(mod, "increment")
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 1, 1, 1, 0, s, [d])     # too few
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 1, 1, 1, 0, s, ["x", 1])
    hip.hipStreamDestroy(s)
    raises(E.hipErrorContextIsDestroyed, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 1, 1, 1, 0, s, [d, 1])
    assert hip.hipPeekAtLastError() == E.hipSuccess


def test_extra_argument_buffer(mod, dint):
    d = dint()
    inc = hip.hipModuleGetFunction(mod, "add_count")       # (i32* a, u64 n, i32 count)
    buf = struct.pack("<QQi", d, 16, 3)
    extra = [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, len(buf),
             hip.HIP_LAUNCH_PARAM_END]
    hip.hipModuleLaunchKernel(inc, 1, 1, 1, 16, 1, 1, 0, None, None, extra)
    hip.hipDeviceSynchronize()
    assert (read(d) == 3).all()
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 16, 1, 1, 0, None, [d, 16, 1], extra)
    bad = [hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, len(buf), hip.HIP_LAUNCH_PARAM_END]
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 16, 1, 1, 0, None, None, bad)
    short = extra[:3] + [8, hip.HIP_LAUNCH_PARAM_END]
    raises(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 16, 1, 1, 0, None, None, short)
    empty = hip.hipModuleGetFunction(mod, "empty")        # no arguments: the buffer is ignored
    hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, None, None, extra)
    hip.hipDeviceSynchronize()


def test_ext_module_launch_by_global_size_with_events(mod, dint):
    d = dint(100)
    f = hip.hipModuleGetFunction(mod, "global_ids")
    a, b = hip.hipEventCreate(), hip.hipEventCreate()
    hip.hipExtModuleLaunchKernel(f, 100, 1, 1, 256, 1, 1, 0, None, [d], None, a, b)   # block > grid: shrunk
    hip.hipEventSynchronize(b)
    assert hip.hipEventQuery(a) == E.hipSuccess
    assert hip.hipEventElapsedTime(a, b) >= 0
    assert (read(d, 100) == np.arange(100)).all()
    raises(E.hipErrorInvalidValue, hip.hipExtModuleLaunchKernel, f, 0, 1, 1, 1, 1, 1, 0, None, [d])
    raises(E.hipErrorInvalidValue, hip.hipExtModuleLaunchKernel, f, 64, 1, 1, 2048, 1, 1, 0, None, [d])
    for e in (a, b):
        hip.hipEventDestroy(e)


# -- modules and events ----------------------------------------------------------------------------
def test_module_error_codes(mod, tmp_path):
    raises(E.hipErrorInvalidValue, hip.hipModuleLoad, None)
    raises(E.hipErrorInvalidValue, hip.hipModuleLoad, "")
    empty = tmp_path / "empty.py"
    empty.write_text("")
    raises(E.hipErrorInvalidImage, hip.hipModuleLoad, str(empty))
    raises(E.hipErrorInvalidImage, hip.hipModuleLoadData, b"")
    raises(E.hipErrorInvalidValue, hip.hipModuleLoadData, None)
    raises(E.hipErrorFileNotFound, hip.hipModuleLoad, str(tmp_path / "missing.py"))
    raises(E.hipErrorInvalidValue, hip.hipModuleGetFunction, mod, None)
    raises(E.hipErrorNotFound, hip.hipModuleGetFunction, mod, "no_such_kernel")


def test_event_flags_and_error_codes(mod):
    raises(E.hipErrorInvalidValue, hip.hipEventCreateWithFlags, hip.hipEventInterprocess)
    raises(E.hipErrorInvalidValue, hip.hipEventCreateWithFlags, 0x08000000)
    raises(E.hipErrorInvalidValue, hip.hipEventCreateWithFlags,
           hip.hipEventReleaseToDevice | hip.hipEventReleaseToSystem)
    ipc = hip.hipEventCreateWithFlags(hip.hipEventInterprocess | hip.hipEventDisableTiming)
    nt = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    t = hip.hipEventCreateWithFlags(hip.hipEventBlockingSync)
    for e in (nt, t):
        hip.hipEventRecord(e, None)
    hip.hipEventSynchronize(t)
    hip.hipEventSynchronize(nt)
    raises(E.hipErrorInvalidHandle, hip.hipEventElapsedTime, nt, t)
    hip.hipSetDevice(1)
    other = hip.hipEventCreate()
    hip.hipEventRecord(other, None)
    hip.hipEventSynchronize(other)
    hip.hipSetDevice(0)
    raises(E.hipErrorInvalidHandle, hip.hipEventElapsedTime, t, other)
    for e in (ipc, nt, t, other):
        hip.hipEventDestroy(e)
    raises(E.hipErrorContextIsDestroyed, hip.hipEventDestroy, t)
    raises(E.hipErrorInvalidResourceHandle, hip.hipEventDestroy, None)


def test_event_destroy_does_not_wait(mod):
    s = hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    with Gate(mod) as g:
        g.launch(s)
        hip.hipEventRecord(ev, s)
        assert hip.hipEventQuery(ev) == E.hipErrorNotReady
        hip.hipEventDestroy(ev)                            # returns with the record still pending
        assert hip.hipStreamQuery(s) == E.hipErrorNotReady
        g.open()
        hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)


def test_threads_mixing_the_null_stream_and_blocking_streams(mod, dint):
    """Four threads, no sync between them: two launch on their own blocking streams, two on the null
    stream with synchronous copies in between. Every thread's own counter ends exact, nothing hangs."""
    ds = [dint(4) for _ in range(4)]
    errors = []

    def blocking(i):
        try:
            s = hip.hipStreamCreate()
            for _ in range(150):
                launch(mod, "increment", [ds[i], 4], s, n=4)
            hip.hipStreamSynchronize(s)
            hip.hipStreamDestroy(s)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def null(i):
        try:
            out = np.zeros(4, np.int32)
            for k in range(150):
                launch(mod, "increment", [ds[i], 4], None, n=4)
                if k % 10 == 9:
                    hip.hipMemcpy(out, ds[i], 16, hip.hipMemcpyDeviceToHost)
                    assert (out == k + 1).all(), (k, out)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    ts = [threading.Thread(target=blocking, args=(0,)), threading.Thread(target=blocking, args=(1,)),
          threading.Thread(target=null, args=(2,)), threading.Thread(target=null, args=(3,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(90)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    assert errors == []
    hip.hipDeviceSynchronize()
    for d in ds:
        assert (read(d, 4) == 150).all()


def test_peer_access_and_peer_copies(mod):
    assert hip.hipDeviceCanAccessPeer(0, 1) == 1 and hip.hipDeviceCanAccessPeer(1, 1) == 0
    raises(E.hipErrorInvalidDevice, hip.hipDeviceCanAccessPeer, 0, 7)
    hip.hipDeviceEnablePeerAccess(1, 0)
    raises(E.hipErrorPeerAccessAlreadyEnabled, hip.hipDeviceEnablePeerAccess, 1, 0)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceEnablePeerAccess, 0, 0)
    hip.hipDeviceDisablePeerAccess(1)
    raises(E.hipErrorPeerAccessNotEnabled, hip.hipDeviceDisablePeerAccess, 1)
    a = hip.hipMalloc(64)
    hip.hipSetDevice(1)
    b = hip.hipMalloc(64)
    hip.hipSetDevice(0)
    src = np.arange(16, dtype=np.int32)
    hip.hipMemcpyWithStream(a, src, 64, hip.hipMemcpyHostToDevice, None)
    hip.hipMemcpyPeer(b, 1, a, 0, 64)
    out = np.zeros(16, np.int32)
    hip.hipMemcpyDtoH(out, b, 64)
    assert (out == src).all()
    hip.hipMemcpyPeerAsync(a, 0, b, 1, 64, None)
    raises(E.hipErrorInvalidDevice, hip.hipMemcpyPeer, b, 5, a, 0, 64)
    hip.hipDeviceSynchronize()
    hip.hipFree(a)
    hip.hipFree(b)


def test_host_free_waits_for_the_device(mod):
    p = hip.hipHostMalloc(64)
    with Gate(mod) as g:
        g.launch(None)
        hip.hipMemsetAsync(p, 1, 64, None)
        done = threading.Event()
        t = threading.Thread(target=lambda: (hip.hipHostFree(p), done.set()))
        t.start()
        assert not done.wait(0.2)          # held by the gate (a bounded negative check)
        g.open()
        t.join(30)
    assert done.is_set()
