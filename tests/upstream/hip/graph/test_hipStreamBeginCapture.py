"""hipStreamBeginCapture: capture on created streams in every mode, forks and joins through events,
several streams and threads, capture errors, unsafe calls during capture and multi-device captures."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._begin_capture_cases import (GLOBAL, capture_and_launch, colligated, dummy, inc,
                                                           inter_stream_event_sync, three_stream_fork)
from tests.upstream.hip.graph._common import (LAUNCH_ITERS, MODES, STREAM_TYPES, N, capture_branched,
                                              capture_compute, capture_linear, expect_error, launch, run_threads,
                                              unchecked)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamBeginCapture.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["linear", "branched"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamBeginCapture_Positive_Functional(mod, res, stream_type, mode, section):
    stream = res.stream(stream_type)
    events = res.events(3)
    streams = res.streams(2)
    if section == "linear":
        capture_and_launch(mod, res, capture_linear, mode, stream)
    else:
        capture_and_launch(mod, res, lambda h1, d1, h2, d2, n, s: capture_branched(h1, d1, h2, d2, n, s,
                                                                                  streams, events),
                            mode, stream)


@pytest.mark.parametrize("section", ["null_stream", "same_stream_again", "invalid_mode", "destroyed_stream"])
def test_Unit_hipStreamBeginCapture_Negative_Parameters(mod, res, section):
    stream = res.stream()
    if section == "null_stream":
        expect_error(E.hipErrorStreamCaptureUnsupported, hip.hipStreamBeginCapture, None, GLOBAL)
    elif section == "same_stream_again":
        hip.hipStreamBeginCapture(stream, GLOBAL)
        expect_error(E.hipErrorIllegalState, hip.hipStreamBeginCapture, stream, GLOBAL)
    elif section == "invalid_mode":
        expect_error(E.hipErrorInvalidValue, hip.hipStreamBeginCapture, stream, -1)
    else:
        gone = hip.hipStreamCreate()
        hip.hipStreamDestroy(gone)
        expect_error(E.hipErrorContextIsDestroyed, hip.hipStreamBeginCapture, gone, GLOBAL)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamBeginCapture_Positive_Basic(mod, res, stream_type, mode):
    s = res.stream(stream_type)
    hip.hipStreamBeginCapture(s, mode)
    graph = hip.hipStreamEndCapture(s)
    hip.hipGraphDestroy(graph)


FLAG_PAIRS = [pytest.param(a, b, id=f"{a}-{b}")
              for a in ("hipStreamDefault", "hipStreamNonBlocking") for b in ("hipStreamDefault", "hipStreamNonBlocking")]


@pytest.mark.parametrize("flags1,flags2", FLAG_PAIRS)
def test_Unit_hipStreamBeginCapture_Positive_InterStrmEventSync_Flags(mod, res, flags1, flags2):
    s1 = res.stream_with_flags(getattr(hip, flags1))
    s2 = res.stream_with_flags(getattr(hip, flags2))
    inter_stream_event_sync(mod, res, s1, s2)


def test_Unit_hipStreamBeginCapture_Positive_InterStrmEventSync_Priority(mod, res):
    least, greatest = hip.hipDeviceGetStreamPriorityRange()
    inter_stream_event_sync(mod, res, res.stream_with_priority(least), res.stream_with_priority(greatest))


@pytest.mark.parametrize("flags1,flags2", FLAG_PAIRS)
def test_Unit_hipStreamBeginCapture_Positive_ColligatedStrmCapture_Flags(mod, res, flags1, flags2):
    s1 = res.stream_with_flags(getattr(hip, flags1))
    s2 = res.stream_with_flags(getattr(hip, flags2))
    colligated(mod, res, s1, s2)


def test_Unit_hipStreamBeginCapture_Positive_ColligatedStrmCapture_Prio(mod, res):
    least, greatest = hip.hipDeviceGetStreamPriorityRange()
    colligated(mod, res, res.stream_with_priority(least), res.stream_with_priority(greatest))


def _int_buffers(res, count):
    return [(np.zeros(N, np.int32), res.malloc(N * 4)) for _ in range(count)]


def test_Unit_hipStreamBeginCapture_Positive_ColligatedStrmCaptureFunc(mod, res):
    stream1, stream2 = res.stream(), res.stream()
    (a_h, a_d), (b_h, b_d), (c_h, c_d), (d_h, d_d) = _int_buffers(res, 4)
    hip.hipStreamBeginCapture(stream1, GLOBAL)
    hip.hipStreamBeginCapture(stream2, GLOBAL)
    capture_linear(a_h, a_d, b_h, b_d, N, stream1)
    capture_linear(c_h, c_d, d_h, d_d, N, stream2)
    capture_compute(mod, a_d, b_h, b_d, N, stream1, np.int32)
    capture_compute(mod, c_d, d_h, d_d, N, stream2, np.int32)
    graph1 = res.keep(hip.hipStreamEndCapture(stream1))
    graph2 = res.keep(hip.hipStreamEndCapture(stream2))
    exe1, exe2 = res.instantiate(graph1), res.instantiate(graph2)
    for it in range(LAUNCH_ITERS):
        a_h[:] = it
        c_h[:] = it
        hip.hipGraphLaunch(exe1, stream1)
        hip.hipGraphLaunch(exe2, stream2)
        hip.hipStreamSynchronize(stream1)
        hip.hipStreamSynchronize(stream2)
        assert (b_h == it * it).all()
        assert (d_h == it * it).all()


@pytest.mark.parametrize("mode", MODES)
def test_Unit_hipStreamBeginCapture_Positive_Multithreaded(mod, res, mode):
    stream1, stream2 = res.stream(), res.stream()
    (a_h, a_d), (b_h, b_d), (c_h, c_d), (d_h, d_d) = _int_buffers(res, 4)
    graphs = {}

    def capture(key, stream, h1, d1, h2, d2):
        hip.hipStreamBeginCapture(stream, mode)
        capture_linear(h1, d1, h2, d2, N, stream)
        capture_compute(mod, d1, h2, d2, N, stream, np.int32)
        graphs[key] = res.keep(hip.hipStreamEndCapture(stream))

    run_threads(lambda: capture(1, stream1, a_h, a_d, b_h, b_d), lambda: capture(2, stream2, c_h, c_d, d_h, d_d))
    exe1, exe2 = res.instantiate(graphs[1]), res.instantiate(graphs[2])
    for it in range(LAUNCH_ITERS):
        a_h[:] = it
        c_h[:] = it
        hip.hipGraphLaunch(exe1, stream1)
        hip.hipGraphLaunch(exe2, stream2)
        hip.hipStreamSynchronize(stream1)
        hip.hipStreamSynchronize(stream2)
        assert (b_h == it * it).all()
        assert (d_h == it * it).all()


@pytest.mark.parametrize("section", ["interdependent_events", "single_event"])
def test_Unit_hipStreamBeginCapture_Positive_Multiplestrms(mod, res, section):
    streams = res.streams(3)
    graphs = []
    if section == "interdependent_events":
        events = res.events(2)
        hip.hipStreamBeginCapture(streams[0], GLOBAL)
        hip.hipEventRecord(events[0], streams[0])
        hip.hipStreamWaitEvent(streams[1], events[0], 0)
        dummy(mod, streams[0])
        graphs.append(hip.hipStreamEndCapture(streams[0]))
        hip.hipStreamBeginCapture(streams[1], GLOBAL)
        hip.hipEventRecord(events[1], streams[1])
        hip.hipStreamWaitEvent(streams[2], events[1], 0)
        dummy(mod, streams[1])
        graphs.append(hip.hipStreamEndCapture(streams[1]))
    else:
        event = res.event()
        hip.hipStreamBeginCapture(streams[0], GLOBAL)
        hip.hipEventRecord(event, streams[0])
        hip.hipStreamWaitEvent(streams[1], event, 0)
        hip.hipStreamWaitEvent(streams[2], event, 0)
        dummy(mod, streams[0])
        graphs.append(hip.hipStreamEndCapture(streams[0]))
        hip.hipStreamBeginCapture(streams[1], GLOBAL)
        dummy(mod, streams[1])
        graphs.append(hip.hipStreamEndCapture(streams[1]))
    hip.hipStreamBeginCapture(streams[2], GLOBAL)
    dummy(mod, streams[2])
    graphs.append(hip.hipStreamEndCapture(streams[2]))
    for g in graphs:
        res.keep(g)
    assert [len(hip.hipGraphGetNodes(g)) for g in graphs] == [1, 1, 1]
    for g in graphs:
        hip.hipGraphDestroy(g)


def _one_int(res):
    host = np.zeros(1, np.int32)
    dev = res.malloc(4)
    return host, dev


def test_Unit_hipStreamBeginCapture_Positive_CapturingFromWithinStrms(mod, res):
    streams, events = res.streams(3), res.events(3)
    host, dev = _one_int(res)
    hip.hipMemset(dev, 0, 4)
    hip.hipDeviceSynchronize()
    inc(mod, streams[0], dev)
    hip.hipStreamBeginCapture(streams[0], GLOBAL)
    hip.hipEventRecord(events[0], streams[0])
    inc(mod, streams[1], dev)               # not captured yet: streams 1 and 2 join below
    inc(mod, streams[1], dev)
    inc(mod, streams[2], dev)
    hip.hipStreamWaitEvent(streams[1], events[0], 0)
    hip.hipStreamWaitEvent(streams[2], events[0], 0)
    for i in (0, 1, 2, 0, 1, 2, 2):
        inc(mod, streams[i], dev)
    hip.hipEventRecord(events[1], streams[1])
    hip.hipEventRecord(events[2], streams[2])
    hip.hipStreamWaitEvent(streams[0], events[1], 0)
    hip.hipStreamWaitEvent(streams[0], events[2], 0)
    hip.hipMemcpyAsync(host, dev, 4, hip.hipMemcpyDefault, streams[0])
    graph = res.keep(hip.hipStreamEndCapture(streams[0]))
    hip.hipMemset(dev, 0, 4)
    hip.hipDeviceSynchronize()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, streams[0])
    hip.hipStreamSynchronize(streams[0])
    assert host[0] == 7


def test_Unit_hipStreamBeginCapture_Negative_DetectingInvalidCapture(mod, res):
    streams = res.streams(2)
    event = res.event()
    hip.hipStreamBeginCapture(streams[0], GLOBAL)
    hip.hipEventRecord(event, streams[0])
    hip.hipStreamWaitEvent(streams[1], event, 0)
    dummy(mod, streams[0])
    expect_error(E.hipErrorIllegalState, hip.hipStreamBeginCapture, streams[1], GLOBAL)
    res.keep(hip.hipStreamEndCapture(streams[0]))


def test_Unit_hipStreamBeginCapture_Positive_CapturingMultGraphsFrom1Strm(mod, res):
    stream1 = res.stream()
    host, dev = _one_int(res)
    hip.hipMemset(dev, 0, 4)
    hip.hipDeviceSynchronize()
    graphs = []
    for i in range(3):
        hip.hipStreamBeginCapture(stream1, GLOBAL)
        for _ in range(i + 1):
            inc(mod, stream1, dev)
        hip.hipMemcpyAsync(host, dev, 4, hip.hipMemcpyDefault, stream1)
        graphs.append(res.keep(hip.hipStreamEndCapture(stream1)))
    for i in range(3):
        hip.hipMemset(dev, 0, 4)
        exe = hip.hipGraphInstantiate(graphs[i])
        hip.hipGraphLaunch(exe, stream1)
        hip.hipStreamSynchronize(stream1)
        assert host[0] == i + 1
        hip.hipGraphExecDestroy(exe)
        hip.hipGraphDestroy(graphs[i])


@pytest.mark.parametrize("section", ["stream_sync", "stream_query", "device_sync", "event_sync", "event_query"])
@pytest.mark.parametrize("mode", MODES)
def test_Unit_hipStreamBeginCapture_Negative_CheckingSyncDuringCapture(mod, res, mode, section):
    stream = res.stream()
    e = res.event()
    hip.hipStreamBeginCapture(stream, mode)
    if section == "stream_sync":
        expect_error(E.hipErrorStreamCaptureUnsupported, hip.hipStreamSynchronize, stream)
    elif section == "stream_query":
        expect_error(E.hipErrorStreamCaptureUnsupported, hip.hipStreamQuery, stream)
    elif section == "device_sync":
        expect_error(E.hipErrorStreamCaptureUnsupported, hip.hipDeviceSynchronize)
    elif section == "event_sync":
        hip.hipEventRecord(e, stream)
        expect_error(E.hipErrorCapturedEvent, hip.hipEventSynchronize, e)
    else:
        hip.hipEventRecord(e, stream)
        expect_error(E.hipErrorCapturedEvent, hip.hipEventQuery, e)


@pytest.mark.parametrize("section", ["hipMalloc", "hipMemcpy", "hipMemset"])
@pytest.mark.parametrize("mode", MODES[:2])
def test_Unit_hipStreamBeginCapture_Negative_UnsafeCallsDuringCapture(mod, res, mode, section):
    stream = res.stream()
    host = np.zeros(1, np.int32)
    dev = res.malloc(4)
    hip.hipStreamBeginCapture(stream, mode)
    if section == "hipMalloc":
        expect_error(E.hipErrorStreamCaptureUnsupported, hip.hipMalloc, 4)
    elif section == "hipMemcpy":
        expect_error(E.hipErrorStreamCaptureImplicit, hip.hipMemcpy, dev, host, 4, hip.hipMemcpyHostToDevice)
    else:
        expect_error(E.hipErrorStreamCaptureImplicit, hip.hipMemset, dev, 0, 4)


@pytest.mark.parametrize("section", ["abrupt_end_in_forked", "forked_still_has_operations"])
def test_Unit_hipStreamBeginCapture_Negative_EndingCapwhenCapInProg(mod, res, section):
    stream1, stream2 = res.streams(2)
    if section == "abrupt_end_in_forked":
        e = res.event()
        hip.hipStreamBeginCapture(stream1, GLOBAL)
        dummy(mod, stream1)
        hip.hipEventRecord(e, stream1)
        hip.hipStreamWaitEvent(stream2, e, 0)
        dummy(mod, stream2)
    else:
        e1, e2 = res.events(2)
        hip.hipStreamBeginCapture(stream1, GLOBAL)
        dummy(mod, stream1)
        hip.hipEventRecord(e1, stream1)
        hip.hipStreamWaitEvent(stream2, e1, 0)
        dummy(mod, stream2)
        hip.hipEventRecord(e2, stream2)
        hip.hipStreamWaitEvent(stream1, e2, 0)
        dummy(mod, stream2)
    expect_error(E.hipErrorStreamCaptureUnjoined, hip.hipStreamEndCapture, stream1)


def test_Unit_hipStreamBeginCapture_Positive_MultiGPU(mod, res):
    devcount = hip.hipGetDeviceCount()
    assert devcount >= 2
    streams, graphs, hosts, devs, execs = [], [], [], [], []
    try:
        for dev in range(devcount):
            hip.hipSetDevice(dev)
            streams.append(hip.hipStreamCreate())
            hosts.append(np.zeros(1, np.int32))
            devs.append(hip.hipMalloc(4))
            hip.hipStreamBeginCapture(streams[dev], GLOBAL)
            hip.hipMemsetAsync(devs[dev], 0, 4, streams[dev])
            for _ in range(dev + 1):
                inc(mod, streams[dev], devs[dev])
            hip.hipMemcpyAsync(hosts[dev], devs[dev], 4, hip.hipMemcpyDefault, streams[dev])
            graphs.append(hip.hipStreamEndCapture(streams[dev]))
        for dev in range(devcount):
            hip.hipSetDevice(dev)
            execs.append(hip.hipGraphInstantiate(graphs[dev]))
            hip.hipGraphLaunch(execs[dev], streams[dev])
        for dev in range(devcount):
            hip.hipSetDevice(dev)
            hip.hipStreamSynchronize(streams[dev])
            assert hosts[dev][0] == dev + 1
    finally:
        for dev in range(len(streams)):
            hip.hipSetDevice(dev)
            unchecked(hip.hipStreamEndCapture, streams[dev])
            if dev < len(execs):
                hip.hipGraphExecDestroy(execs[dev])
            hip.hipStreamDestroy(streams[dev])
            if dev < len(devs):
                hip.hipFree(devs[dev])
        hip.hipSetDevice(0)


def test_Unit_hipStreamBeginCapture_Positive_nestedStreamCapture(mod, res):
    streams, events = res.streams(3), res.events(4)
    host, dev = _one_int(res)
    hip.hipMemset(dev, 0, 4)
    hip.hipDeviceSynchronize()
    three_stream_fork(mod, res, streams, events, dev)
    hip.hipMemcpyAsync(host, dev, 4, hip.hipMemcpyDefault, streams[0])
    graph = res.keep(hip.hipStreamEndCapture(streams[0]))
    hip.hipMemset(dev, 0, 4)
    hip.hipDeviceSynchronize()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, streams[0])
    hip.hipStreamSynchronize(streams[0])
    assert host[0] == 7


def test_Unit_hipStreamBeginCapture_Positive_streamReuse(mod, res):
    expected = [7, 3, 5]
    streams, events = res.streams(3), res.events(4)
    hosts = [np.zeros(1, np.int32) for _ in range(3)]
    devs = [res.malloc(4) for _ in range(3)]
    for d in devs:
        hip.hipMemset(d, 0, 4)
    hip.hipDeviceSynchronize()
    three_stream_fork(mod, res, streams, events, devs[0])
    hip.hipMemcpyAsync(hosts[0], devs[0], 4, hip.hipMemcpyDefault, streams[0])
    graphs = [res.keep(hip.hipStreamEndCapture(streams[0]))]
    for i, count in ((1, 3), (2, 5)):
        hip.hipStreamBeginCapture(streams[i], GLOBAL)
        for _ in range(count):
            inc(mod, streams[i], devs[i])
        hip.hipMemcpyAsync(hosts[i], devs[i], 4, hip.hipMemcpyDefault, streams[i])
        graphs.append(res.keep(hip.hipStreamEndCapture(streams[i])))
    for d in devs:
        hip.hipMemset(d, 0, 4)
    hip.hipDeviceSynchronize()
    for i in range(3):
        hip.hipMemset(devs[i], 0, 4)
        exe = hip.hipGraphInstantiate(graphs[i])
        hip.hipGraphLaunch(exe, streams[i])
        hip.hipStreamSynchronize(streams[i])
        assert hosts[i][0] == expected[i]
        hip.hipGraphExecDestroy(exe)
        hip.hipGraphDestroy(graphs[i])


def test_Unit_hipStreamBeginCapture_Positive_captureComplexGraph(mod, res):
    grid, block = 16, 64                    # upstream: 256 x 256
    k1, k2, k3 = 3, 2, 5
    n = grid * block
    streams, events = res.streams(5), res.events(7)
    a_h, b_h, c_h = np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, np.int32)
    a_d, b_d = res.malloc(n * 4), res.malloc(n * 4)
    calls = []

    def host_cb(data):
        assert data is None
        calls.append(1)

    hip.hipStreamBeginCapture(streams[0], GLOBAL)
    hip.hipEventRecord(events[0], streams[0])
    hip.hipStreamWaitEvent(streams[3], events[0], 0)
    hip.hipStreamWaitEvent(streams[4], events[0], 0)
    hip.hipMemcpyAsync(a_d, a_h, n * 4, hip.hipMemcpyDefault, streams[0])
    hip.hipMemcpyAsync(b_d, b_h, n * 4, hip.hipMemcpyDefault, streams[4])
    hip.hipLaunchHostFunc(streams[3], host_cb, None)
    hip.hipEventRecord(events[1], streams[0])
    hip.hipStreamWaitEvent(streams[1], events[1], 0)
    half2, half1 = a_d + n // 2 * 4, a_d
    launch(mod, "graph_mymul", [half2, k2], streams[0], n=n // 2, block=block)
    launch(mod, "graph_mymul", [half1, k1], streams[1], n=n // 2, block=block)
    hip.hipEventRecord(events[2], streams[1])
    hip.hipStreamWaitEvent(streams[2], events[2], 0)
    launch(mod, "graph_mymul", [half1, k3], streams[1], n=n // 2, block=block)
    hip.hipLaunchHostFunc(streams[2], host_cb, None)
    hip.hipEventRecord(events[6], streams[1])
    hip.hipStreamWaitEvent(streams[0], events[6], 0)
    hip.hipEventRecord(events[5], streams[4])
    hip.hipStreamWaitEvent(streams[0], events[5], 0)
    launch(mod, "graph_myadd", [a_d, b_d], streams[0], n=n, block=block)
    hip.hipEventRecord(events[3], streams[2])
    hip.hipStreamWaitEvent(streams[0], events[3], 0)
    hip.hipEventRecord(events[4], streams[3])
    hip.hipStreamWaitEvent(streams[0], events[4], 0)
    hip.hipMemcpyAsync(c_h, a_d, n * 4, hip.hipMemcpyDefault, streams[0])
    graph = res.keep(hip.hipStreamEndCapture(streams[0]))
    exe = res.instantiate(graph)
    for it in range(LAUNCH_ITERS):
        a_h[:] = it
        b_h[:] = it
        hip.hipGraphLaunch(exe, streams[0])
        hip.hipStreamSynchronize(streams[0])
        assert (c_h[n // 2:] == b_h[n // 2:] + a_h[n // 2:] * k2).all()
        assert (c_h[:n // 2] == b_h[:n // 2] + a_h[:n // 2] * k1 * k3).all()
    assert len(calls) == 2 * LAUNCH_ITERS


def test_Unit_hipStreamBeginCapture_Positive_captureEmptyStreams(mod, res):
    streams, events = res.streams(3), res.events(3)
    hip.hipStreamBeginCapture(streams[0], GLOBAL)
    hip.hipEventRecord(events[0], streams[0])
    hip.hipStreamWaitEvent(streams[1], events[0], 0)
    hip.hipStreamWaitEvent(streams[2], events[0], 0)
    hip.hipEventRecord(events[1], streams[1])
    hip.hipStreamWaitEvent(streams[0], events[1], 0)
    hip.hipEventRecord(events[2], streams[2])
    hip.hipStreamWaitEvent(streams[0], events[2], 0)
    graph = hip.hipStreamEndCapture(streams[0])
    assert len(hip.hipGraphGetNodes(graph)) == 0
    hip.hipGraphDestroy(graph)


_SYNC_SECTIONS = ["creation_before", "sync_multiple", "creation_after", "sync_before", "sync_after"]


@pytest.mark.parametrize("section", _SYNC_SECTIONS)
def test_Unit_hipStreamBeginCapture_StreamSync_OngoingCapture(mod, res, section):
    relaxed = hip.hipStreamCaptureModeRelaxed
    block, v1, v2 = 512, 7, 11
    a_h, b_h = np.full(block, v1, np.int32), np.full(block, v2, np.int32)
    a_d, b_d = res.malloc(block * 4), res.malloc(block * 4)
    stream0 = res.stream()

    def copies(s1, s2=None):
        hip.hipMemcpyAsync(a_d, a_h, block * 4, hip.hipMemcpyDefault, s1)
        hip.hipMemcpyAsync(b_d, b_h, block * 4, hip.hipMemcpyDefault, s2 or s1)
        hip.hipStreamSynchronize(s1)
        if s2 is not None:
            hip.hipStreamSynchronize(s2)

    def captured_add():
        launch(mod, "graph_myadd", [a_d, b_d], stream0, n=block, block=block)

    if section == "creation_before":
        stream1 = res.stream()
        hip.hipStreamBeginCapture(stream0, relaxed)
        copies(stream1)
        captured_add()
        graph = res.keep(hip.hipStreamEndCapture(stream0))
    elif section == "sync_multiple":
        stream1, stream2 = res.stream(), res.stream()
        hip.hipStreamBeginCapture(stream0, relaxed)
        copies(stream1, stream2)
        captured_add()
        graph = res.keep(hip.hipStreamEndCapture(stream0))
    elif section == "creation_after":
        hip.hipStreamBeginCapture(stream0, relaxed)
        stream1 = res.stream()
        copies(stream1)
        captured_add()
        graph = res.keep(hip.hipStreamEndCapture(stream0))
    elif section == "sync_before":
        stream1 = res.stream()
        copies(stream1)
        hip.hipStreamBeginCapture(stream0, relaxed)
        captured_add()
        graph = res.keep(hip.hipStreamEndCapture(stream0))
    else:
        hip.hipStreamBeginCapture(stream0, relaxed)
        captured_add()
        graph = res.keep(hip.hipStreamEndCapture(stream0))
        copies(res.stream())
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream0)
    hip.hipStreamSynchronize(stream0)
    hip.hipMemcpy(a_h, a_d, block * 4, hip.hipMemcpyDeviceToHost)
    assert (a_h == v1 + v2).all()


@pytest.mark.parametrize("section", ["global_single", "threadlocal_single", "global_multi", "threadlocal_multi",
                                     "relaxed_multi"])
def test_Unit_hipStreamBeginCapture_StreamSync_OngoingCapture_MThread(mod, res, section):
    block, v1, v2 = 512, 7, 11
    a_h, b_h = np.full(block, v1, np.int32), np.full(block, v2, np.int32)
    a_d, b_d = res.malloc(block * 4), res.malloc(block * 4)
    error = {"value": None}
    graph = None

    def copies_and_sync(s):
        hip.hipMemcpyAsync(a_d, a_h, block * 4, hip.hipMemcpyDefault, s)
        hip.hipMemcpyAsync(b_d, b_h, block * 4, hip.hipMemcpyDefault, s)
        error["value"] = unchecked(hip.hipStreamSynchronize, s)

    if section in ("global_single", "threadlocal_single"):
        stream = res.streams(2)
        mode = GLOBAL if section == "global_single" else hip.hipStreamCaptureModeThreadLocal
        hip.hipStreamBeginCapture(stream[0], mode)
        copies_and_sync(stream[1])
        assert error["value"] == E.hipErrorStreamCaptureUnsupported
    else:
        mode = {"global_multi": GLOBAL, "threadlocal_multi": hip.hipStreamCaptureModeThreadLocal,
                "relaxed_multi": hip.hipStreamCaptureModeRelaxed}[section]
        out = {}

        def capture_thread():                 # captureStrmThread
            s = res.stream()
            hip.hipStreamBeginCapture(s, mode)
            run_threads(lambda: copies_and_sync(res.stream()))     # strmSyncThread
            unchecked(launch, mod, "graph_myadd", [a_d, b_d], s, block, block)
            if mode == GLOBAL:
                expect_error(E.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, s)
            else:
                out["graph"] = res.keep(hip.hipStreamEndCapture(s))

        run_threads(capture_thread)
        graph = out.get("graph")
        expected = E.hipErrorStreamCaptureUnsupported if mode == GLOBAL else None
        assert error["value"] == expected
    if graph is not None:
        stream = res.stream()
        exe = res.instantiate(graph)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipMemcpy(a_h, a_d, block * 4, hip.hipMemcpyDeviceToHost)
        assert (a_h == v1 + v2).all()
