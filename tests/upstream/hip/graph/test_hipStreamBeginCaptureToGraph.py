"""hipStreamBeginCaptureToGraph: capturing into empty and populated graphs (after given nodes), twice
into one graph, into a clone and into a child graph node's graph, fork and join, stream flags and
priorities, threads, the unjoined check, the argument checks."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams, launch, run_threads

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamBeginCaptureToGraph.cc"

E = hip.hipError_t
N = 4096                                # upstream: 1 << 20
NB = N * 4
GLOBAL = hip.hipStreamCaptureModeGlobal
VERIFY = pytest.mark.parametrize("verify_after_sync", [False, True], ids=["after_exec_destroy", "after_sync"])


def _arrays(*, reverse=False):
    a = np.arange(N, dtype=np.int32) if reverse else 2 * np.arange(N, dtype=np.int32)
    b = (N - 1 - np.arange(N)).astype(np.int32) if reverse else a + 1
    return a, b


def _sub(mod, a_d, b_d, c_d, stream):
    launch(mod, "graph_vector_sub_i32", [a_d, b_d, c_d, N], stream, n=N, block=64)


def _add(mod, a_d, b_d, c_d, stream):
    launch(mod, "vectorADD_i32", [a_d, b_d, c_d, N], stream, n=N, block=64)


def _capture_and_launch(mod, res, a_d, b_d, c_d, a_h, b_h, c_h, mode, s1, s2, graph, verify_after_sync,
                        verify_more=lambda: True):
    """CaptureStreamAndLaunchGraph: fork s2 off s1, C = A - B, into ``graph``; launch once."""
    e = res.event()
    hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, mode)
    hip.hipEventRecord(e, s1)
    hip.hipStreamWaitEvent(s2, e, 0)
    hip.hipMemsetAsync(c_d, 0, NB, s1)
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
    hip.hipMemcpyAsync(b_d, b_h, NB, hip.hipMemcpyHostToDevice, s2)
    hip.hipEventRecord(e, s2)
    hip.hipStreamWaitEvent(s1, e, 0)
    _sub(mod, a_d, b_d, c_d, s1)
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, s1)
    assert hip.hipStreamEndCapture(s1) is graph
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, s1)
    hip.hipStreamSynchronize(s1)
    ok = True
    if verify_after_sync:
        ok = verify_more() and (c_h == a_h - b_h).all()
    hip.hipGraphExecDestroy(exe)
    if not verify_after_sync:
        ok = verify_more() and (c_h == a_h - b_h).all()
    return ok


def _dev(res, n):
    return [res.malloc(NB) for _ in range(n)]


@VERIFY
@pytest.mark.parametrize("mode", [GLOBAL, hip.hipStreamCaptureModeThreadLocal, hip.hipStreamCaptureModeRelaxed],
                         ids=["global", "local", "relaxed"])
def test_Unit_hipStreamBeginCaptureToGraph_BasicFunctional(mod, res, mode, verify_after_sync):
    a_h, b_h = _arrays()
    c_h = np.zeros(N, np.int32)
    s1, s2 = res.streams(2)
    assert _capture_and_launch(mod, res, *_dev(res, 3), a_h, b_h, c_h, mode, s1, s2, res.graph(), verify_after_sync)


def _vec_add_graph(mod, res, graph, a_d, b_d, c_d, a_h, b_h, c_h):
    """memcpy A, memcpy B -> vectorADD -> memcpy C back, added by hand."""
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NB, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, NB, hip.hipMemcpyHostToDevice)
    m3 = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, NB, hip.hipMemcpyDeviceToHost)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, N], N // 64, 64))
    hip.hipGraphAddDependencies(graph, [m1, m2, k], [k, k, m3])
    return m1, m2


@VERIFY
def test_Unit_hipStreamBeginCaptureToGraph_CaptureIndepGraph(mod, res, verify_after_sync):
    a1_h, b1_h = _arrays()
    a2_h, b2_h = _arrays()
    c1_h, c2_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a1, b1, c1, a2, b2, c2 = _dev(res, 6)
    graph = res.graph()
    _vec_add_graph(mod, res, graph, a2, b2, c2, a2_h, b2_h, c2_h)
    s1, s2 = res.streams(2)
    assert _capture_and_launch(mod, res, a1, b1, c1, a1_h, b1_h, c1_h, GLOBAL, s1, s2, graph, verify_after_sync,
                               lambda: (c2_h == a2_h + b2_h).all())


def test_Unit_hipStreamBeginCaptureToGraph_CaptureDepGraph(mod, res):
    a_h, b_h = _arrays()
    c1_h, c2_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c1_d, c2_d = _dev(res, 4)
    stream = res.stream()
    graph = res.graph()
    deps = _vec_add_graph(mod, res, graph, a_d, b_d, c1_d, a_h, b_h, c1_h)
    hip.hipStreamBeginCaptureToGraph(stream, graph, list(deps), None, GLOBAL)
    _sub(mod, a_d, b_d, c2_d, stream)
    hip.hipMemcpyAsync(c2_h, c2_d, NB, hip.hipMemcpyDeviceToHost, stream)
    hip.hipStreamEndCapture(stream)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (c1_h == a_h + b_h).all()
    assert (c2_h == a_h - b_h).all()


def test_Unit_hipStreamBeginCaptureToGraph_ComplexGraph(mod, res):
    a_h, b_h = _arrays()
    c_h, d_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c_d, d_d = _dev(res, 4)
    s1, s2, s3, s4 = res.streams(4)
    e1, e2, e3, e4 = res.events(4)
    graph = res.graph()
    hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, GLOBAL)
    hip.hipEventRecord(e1, s1)
    for s in (s2, s3, s4):
        hip.hipStreamWaitEvent(s, e1, 0)
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
    hip.hipMemcpyAsync(b_d, b_h, NB, hip.hipMemcpyHostToDevice, s2)
    hip.hipMemsetAsync(c_d, 0, NB, s3)
    hip.hipMemsetAsync(d_d, 0, NB, s4)
    hip.hipEventRecord(e1, s1)
    hip.hipEventRecord(e2, s2)
    hip.hipEventRecord(e3, s3)
    hip.hipStreamWaitEvent(s1, e2, 0)
    hip.hipStreamWaitEvent(s1, e3, 0)
    _add(mod, a_d, b_d, c_d, s1)
    hip.hipStreamWaitEvent(s4, e2, 0)
    hip.hipStreamWaitEvent(s4, e1, 0)
    _sub(mod, a_d, b_d, d_d, s4)
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, s1)
    hip.hipMemcpyAsync(d_h, d_d, NB, hip.hipMemcpyDeviceToHost, s4)
    hip.hipEventRecord(e4, s4)
    hip.hipStreamWaitEvent(s1, e4, 0)
    hip.hipStreamEndCapture(s1)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, s1)
    hip.hipStreamSynchronize(s1)
    assert (c_h == a_h + b_h).all()
    assert (d_h == a_h - b_h).all()


def _capture_add(mod, s1, s2, e1, e2, a_d, b_d, c_d, a_h, b_h, c_h):
    hip.hipEventRecord(e1, s1)
    hip.hipStreamWaitEvent(s2, e1, 0)
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
    hip.hipMemcpyAsync(b_d, b_h, NB, hip.hipMemcpyHostToDevice, s2)
    hip.hipEventRecord(e2, s2)
    hip.hipStreamWaitEvent(s1, e2, 0)
    _add(mod, a_d, b_d, c_d, s1)
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, s1)
    return hip.hipStreamEndCapture(s1)


def _capture_sub_after_roots(mod, res, graph, s1, a_d, b_d, d_d, d_h):
    hip.hipStreamBeginCaptureToGraph(s1, graph, hip.hipGraphGetRootNodes(graph), None, GLOBAL)
    _sub(mod, a_d, b_d, d_d, s1)
    hip.hipMemcpyAsync(d_h, d_d, NB, hip.hipMemcpyDeviceToHost, s1)
    assert hip.hipStreamEndCapture(s1) is graph
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, s1)
    hip.hipStreamSynchronize(s1)


@pytest.mark.parametrize("use_same_api", [True, False])
def test_Unit_hipStreamBeginCaptureToGraph_CaptureTwice(mod, res, use_same_api):
    a_h, b_h = _arrays()
    c_h, d_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c_d, d_d = _dev(res, 4)
    s1, s2 = res.streams(2)
    e1, e2 = res.events(2)
    if use_same_api:
        graph = res.graph()
        hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, GLOBAL)
    else:
        hip.hipStreamBeginCapture(s1, GLOBAL)
    graph = res.keep(_capture_add(mod, s1, s2, e1, e2, a_d, b_d, c_d, a_h, b_h, c_h))
    _capture_sub_after_roots(mod, res, graph, s1, a_d, b_d, d_d, d_h)
    assert (c_h == a_h + b_h).all()
    assert (d_h == a_h - b_h).all()


def test_Unit_hipStreamBeginCaptureToGraph_ModifyCloneGraph(mod, res):
    a_h, b_h = _arrays()
    c_h, d_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c_d, d_d = _dev(res, 4)
    s1, s2 = res.streams(2)
    e1, e2 = res.events(2)
    graph = res.graph()
    hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, GLOBAL)
    _capture_add(mod, s1, s2, e1, e2, a_d, b_d, c_d, a_h, b_h, c_h)
    clone = res.keep(hip.hipGraphClone(graph))
    _capture_sub_after_roots(mod, res, clone, s1, a_d, b_d, d_d, d_h)
    assert (c_h == a_h + b_h).all()
    assert (d_h == a_h - b_h).all()


def _child_setup(mod, res, a_d, b_d, c_d, a_h, b_h, c_h):
    graph, child = res.graph(), res.graph()
    m1 = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NB, hip.hipMemcpyHostToDevice)
    m2 = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, NB, hip.hipMemcpyHostToDevice)
    m3 = hip.hipGraphAddMemcpyNode1D(child, None, c_h, c_d, NB, hip.hipMemcpyDeviceToHost)
    k = hip.hipGraphAddKernelNode(child, None, kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, N], N // 64, 64))
    hip.hipGraphAddDependencies(child, k, m3)
    node = hip.hipGraphAddChildGraphNode(graph, [m1, m2], child)
    return graph, [m1, m2], node


def _launch_check(res, graph, stream, a_h, b_h, c_h, d_h):
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    assert (c_h == a_h + b_h).all()
    assert (d_h == a_h - b_h).all()


def test_Unit_hipStreamBeginCaptureToGraph_CaptureChildpGraph(mod, res):
    a_h, b_h = _arrays(reverse=True)
    c_h, d_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c_d, d_d = _dev(res, 4)
    stream = res.stream()
    graph, deps, _node = _child_setup(mod, res, a_d, b_d, c_d, a_h, b_h, c_h)
    hip.hipStreamBeginCaptureToGraph(stream, graph, deps, None, GLOBAL)
    _sub(mod, a_d, b_d, d_d, stream)
    hip.hipMemcpyAsync(d_h, d_d, NB, hip.hipMemcpyDeviceToHost, stream)
    hip.hipStreamEndCapture(stream)
    _launch_check(res, graph, stream, a_h, b_h, c_h, d_h)


def test_Unit_hipStreamBeginCaptureToGraph_ModifyChildpGraph(mod, res):
    a_h, b_h = _arrays(reverse=True)
    c_h, d_h = np.zeros(N, np.int32), np.zeros(N, np.int32)
    a_d, b_d, c_d, d_d = _dev(res, 4)
    stream = res.stream()
    graph, _deps, node = _child_setup(mod, res, a_d, b_d, c_d, a_h, b_h, c_h)
    owned = hip.hipGraphChildGraphNodeGetGraph(node)
    hip.hipStreamBeginCaptureToGraph(stream, owned, None, None, GLOBAL)
    _sub(mod, a_d, b_d, d_d, stream)
    hip.hipMemcpyAsync(d_h, d_d, NB, hip.hipMemcpyDeviceToHost, stream)
    assert hip.hipStreamEndCapture(stream) is owned
    _launch_check(res, graph, stream, a_h, b_h, c_h, d_h)


@pytest.mark.parametrize("section", ["null_graph", "invalid_mode", "already_capturing"])
def test_Unit_hipStreamBeginCaptureToGraph_Negative(mod, res, section):
    # "Null dependencies" (nullptr with a count of 1) has no Python form (a list carries its length)
    stream = res.stream()
    graph = res.graph()
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipStreamBeginCaptureToGraph, stream, None, None, None, GLOBAL)
    elif section == "invalid_mode":
        expect_error(E.hipErrorInvalidValue, hip.hipStreamBeginCaptureToGraph, stream, graph, None, None, -1)
    else:
        hip.hipStreamBeginCapture(stream, GLOBAL)
        expect_error(E.hipErrorIllegalState, hip.hipStreamBeginCaptureToGraph, stream, graph, None, None, GLOBAL)
        res.keep(hip.hipStreamEndCapture(stream))


def _fork_join_empty(res, s1, s2, e, graph):
    hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, GLOBAL)
    assert hip.hipStreamIsCapturing(s1) == hip.hipStreamCaptureStatusActive
    hip.hipEventRecord(e, s1)
    hip.hipStreamWaitEvent(s2, e, 0)


def test_Unit_hipStreamBeginCaptureToGraph_StateTesting(mod, res):
    s1, s2 = res.streams(2)
    e = res.event()
    graph = res.graph()
    assert hip.hipStreamIsCapturing(s1) == hip.hipStreamCaptureStatusNone
    _fork_join_empty(res, s1, s2, e, graph)
    assert hip.hipStreamIsCapturing(s2) == hip.hipStreamCaptureStatusActive
    hip.hipEventRecord(e, s2)
    hip.hipStreamWaitEvent(s1, e, 0)
    hip.hipStreamEndCapture(s1)
    assert hip.hipStreamIsCapturing(s1) == hip.hipStreamCaptureStatusNone


def test_Unit_hipStreamBeginCaptureToGraph_GetCaptureInfo(mod, res):
    s1, s2 = res.streams(2)
    e = res.event()
    graph = res.graph()
    assert hip.hipStreamGetCaptureInfo(s1)[0] == hip.hipStreamCaptureStatusNone
    _fork_join_empty(res, s1, s2, e, graph)
    status1, id1 = hip.hipStreamGetCaptureInfo(s1)
    status2, id2 = hip.hipStreamGetCaptureInfo(s2)
    assert status1 == status2 == hip.hipStreamCaptureStatusActive
    hip.hipEventRecord(e, s2)
    hip.hipStreamWaitEvent(s1, e, 0)
    hip.hipStreamEndCapture(s1)
    assert hip.hipStreamGetCaptureInfo(s1)[0] == hip.hipStreamCaptureStatusNone
    assert id1 == id2


@pytest.mark.parametrize("section", ["forked_stream_idle", "forked_stream_not_joined"])
def test_Unit_hipStreamBeginCaptureToGraph_EndingWhileCaptureInProgress(mod, res, section):
    s1, s2 = res.streams(2)
    graph = res.graph()
    a_d, b_d, c_d = _dev(res, 3)
    a_h = np.zeros(N, np.int32)
    e1, e2 = res.events(2)
    hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, GLOBAL)
    if section == "forked_stream_idle":
        hip.hipEventRecord(e1, s1)
        hip.hipStreamWaitEvent(s2, e1, 0)
        hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
        assert hip.hipStreamEndCapture(s1) is graph
    else:
        hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
        hip.hipEventRecord(e1, s1)
        hip.hipStreamWaitEvent(s2, e1, 0)
        hip.hipMemcpyAsync(b_d, a_h, NB, hip.hipMemcpyHostToDevice, s2)
        hip.hipEventRecord(e2, s2)
        hip.hipStreamWaitEvent(s1, e2, 0)
        hip.hipMemcpyAsync(c_d, a_h, NB, hip.hipMemcpyHostToDevice, s2)
        expect_error(E.hipErrorStreamCaptureUnjoined, hip.hipStreamEndCapture, s1)


@VERIFY
@pytest.mark.parametrize("flag", ["defFlag", "sameFlag", "diffFlag", "diffPrio"])
def test_Unit_hipStreamBeginCaptureToGraph_MultipleFlags(mod, res, flag, verify_after_sync):
    a_h, b_h = _arrays()
    c_h = np.zeros(N, np.int32)
    if flag == "sameFlag":
        s1, s2 = res.stream_with_flags(hip.hipStreamNonBlocking), res.stream_with_flags(hip.hipStreamNonBlocking)
    elif flag == "diffFlag":
        s1, s2 = res.stream_with_flags(hip.hipStreamNonBlocking), res.stream_with_flags(hip.hipStreamDefault)
    elif flag == "diffPrio":
        lo, hi = hip.hipDeviceGetStreamPriorityRange()
        s1, s2 = res.stream_with_priority(lo), res.stream_with_priority(hi)
    else:
        s1, s2 = res.stream_with_flags(hip.hipStreamDefault), res.stream_with_flags(hip.hipStreamDefault)
    assert _capture_and_launch(mod, res, *_dev(res, 3), a_h, b_h, c_h, GLOBAL, s1, s2, res.graph(),
                               verify_after_sync)


def test_Unit_hipStreamBeginCaptureToGraph_CapturePartialInThreads(mod, res):
    a_h, b_h = _arrays(reverse=True)
    c_h = np.zeros(N, np.int32)
    a_d, b_d, c_d = _dev(res, 3)
    s1, s2 = res.streams(2)
    e = res.event()
    graph = res.graph()

    def start():
        hip.hipStreamBeginCaptureToGraph(s1, graph, None, None, hip.hipStreamCaptureModeRelaxed)
        hip.hipEventRecord(e, s1)
        hip.hipStreamWaitEvent(s2, e, 0)
        hip.hipMemsetAsync(c_d, 0, NB, s1)
        hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, s1)
        hip.hipMemcpyAsync(b_d, b_h, NB, hip.hipMemcpyHostToDevice, s2)
        hip.hipEventRecord(e, s2)
        hip.hipStreamWaitEvent(s1, e, 0)

    def end():
        _sub(mod, a_d, b_d, c_d, s1)
        hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, s1)
        hip.hipStreamEndCapture(s1)

    run_threads(start)
    run_threads(end)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, s1)
    hip.hipStreamSynchronize(s1)
    assert (c_h == a_h - b_h).all()


@VERIFY
def test_Unit_hipStreamBeginCaptureToGraph_IndepGraphsThreads(mod, res, verify_after_sync):
    s1, s2, s3, s4 = res.streams(4)
    g1, g2 = res.graph(), res.graph()
    dev = [_dev(res, 3), _dev(res, 3)]
    results = []

    def body(k, sa, sb, g):
        a_h, b_h = _arrays()
        c_h = np.zeros(N, np.int32)
        results.append(_capture_and_launch(mod, res, *dev[k], a_h, b_h, c_h, hip.hipStreamCaptureModeRelaxed,
                                           sa, sb, g, verify_after_sync))

    run_threads(lambda: body(0, s1, s2, g1), lambda: body(1, s3, s4, g2))
    assert results == [True, True]
