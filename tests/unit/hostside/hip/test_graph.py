"""HIP graphs: stream capture, explicit construction, instantiate, launch, exec updates, errors."""
import random
import threading

import numpy as np
import pytest

from hostside import hip
from hostside import hsa
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import wait_until

KFILE = kernel_file("basic.py")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 32, "engines": 2, "signals": 4096})


def fn(mod, name):
    return hip.hipModuleGetFunction(mod, name)


def launch(f, n, stream, args, block=64):
    hip.hipModuleLaunchKernel(f, (n + block - 1) // block, 1, 1, block, 1, 1, 0, stream, args)


def kparams(f, args, n=1, block=1):
    return hip.hipKernelNodeParams(f, ((n + block - 1) // block, 1, 1), (block, 1, 1), 0, args)


def read(ptr, dtype, count):
    out = np.empty(count, dtype)
    hip.hipMemcpy(out, ptr, out.nbytes, hip.hipMemcpyDeviceToHost)
    return out


# -- capture and replay ---------------------------------------------------------------------------
def test_captured_sequence_launched_100_times_matches_eager(mod, stream, dmem):
    """Kernels, copies of every kind and memsets: 100 graph launches == 100 eager issues."""
    n = 1000
    inc, vadd = fn(mod, "inc"), fn(mod, "vadd")
    src = np.arange(n, dtype=np.float32)

    def make():
        b = {"acc": dmem(4 * n), "cnt": dmem(4 * n), "a": dmem(4 * n), "c": dmem(4 * n), "m": dmem(4 * n),
             "pin": dmem(4 * n, host=True), "page": np.zeros(n, np.int32)}
        for k in ("acc", "cnt", "a", "c", "m"):
            hip.hipMemset(b[k], 0, 4 * n)
        return b

    def sequence(s, b):
        hip.hipMemcpyAsync(b["a"], src, 4 * n, hip.hipMemcpyHostToDevice, s)       # pageable H2D
        launch(inc, n, s, [b["acc"], n])
        launch(inc, n, s, [b["acc"], n])
        hip.hipMemcpyAsync(b["cnt"], b["acc"], 4 * n, hip.hipMemcpyDeviceToDevice, s)
        launch(inc, n, s, [b["cnt"], n])
        hip.hipMemsetAsync(b["m"], 7, 4 * n, s)
        launch(inc, n, s, [b["m"], n // 2])
        launch(vadd, n, s, [b["a"], b["a"], b["c"], n])
        hip.hipMemcpyAsync(b["pin"], b["cnt"], 4 * n, hip.hipMemcpyDeviceToHost, s)   # D2H pinned
        hip.hipMemcpyAsync(b["page"], b["acc"], 4 * n, hip.hipMemcpyDeviceToHost, s)  # D2H pageable

    eager, graph = make(), make()
    for _ in range(100):
        sequence(stream, eager)
    hip.hipStreamSynchronize(stream)

    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusActive
    sequence(stream, graph)
    g = hip.hipStreamEndCapture(stream)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    nodes = hip.hipGraphGetNodes(g)
    assert [hip.hipGraphNodeGetType(x).name[len("hipGraphNodeType"):] for x in nodes] == \
        ["Memcpy", "Kernel", "Kernel", "Memcpy", "Kernel", "Memset", "Kernel", "Kernel", "Memcpy", "Memcpy"]
    assert all(hip.hipGraphNodeGetDependencies(x) == [nodes[i]] for i, x in enumerate(nodes[1:]))
    ex = hip.hipGraphInstantiate(g)
    for _ in range(100):
        hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert ex.statistics().launches == 100
    for k in ("acc", "cnt", "a", "c", "m"):
        assert np.array_equal(read(graph[k], np.int32, n), read(eager[k], np.int32, n)), k
    assert np.array_equal(hip.host_array(graph["pin"], np.int32, n), hip.host_array(eager["pin"], np.int32, n))
    assert np.array_equal(graph["page"], eager["page"])
    assert graph["page"][0] == 200 and read(graph["cnt"], np.int32, 1)[0] == 201
    hip.hipGraphExecDestroy(ex)
    hip.hipGraphDestroy(g)


def test_launches_queue_back_to_back_on_several_streams(mod, dmem):
    """No sync between launches: replicas of the signal set let launches queue; counts are exact."""
    n = 256
    inc = fn(mod, "inc")
    d = dmem(4 * n)
    hip.hipMemset(d, 0, 4 * n)
    g = hip.hipGraphCreate()
    prev = []
    for _ in range(5):
        prev = [hip.hipGraphAddKernelNode(g, prev, kparams(inc, [d, n], n, 64))]
    ex = hip.hipGraphInstantiate(g)
    streams = [hip.hipStreamCreate() for _ in range(2)]
    ev = hip.hipEventCreate()
    for i in range(40):
        s = streams[i % 2]
        if i:
            hip.hipStreamWaitEvent(s, ev)        # the two streams take turns: no race on d
        hip.hipGraphLaunch(ex, s)
        hip.hipEventRecord(ev, s)
    for s in streams:
        hip.hipStreamSynchronize(s)
    assert (read(d, np.int32, n) == 200).all()
    assert ex.statistics().replicas >= 1
    hip.hipGraphExecDestroy(ex)
    hip.hipEventDestroy(ev)
    for s in streams:
        hip.hipStreamDestroy(s)


def test_launch_respects_stream_order(mod, stream, dmem):
    """The graph starts after earlier work on the stream (a slow kernel, then a copy) and later work
    (an SDMA copy and a kernel) waits for the graph's last node."""
    n = 64
    inc, sleep = fn(mod, "inc"), fn(mod, "sleep")
    a, b, c = dmem(4 * n), dmem(4 * n), dmem(4 * n)
    g = hip.hipGraphCreate()
    k1 = hip.hipGraphAddKernelNode(g, [], kparams(inc, [a, n], n, 64))
    hip.hipGraphAddMemcpyNode(g, [k1], hip.hipMemcpyNodeParams(b, a, 4 * n, hip.hipMemcpyDeviceToDevice))
    ex = hip.hipGraphInstantiate(g)
    for _ in range(3):
        hip.hipMemsetAsync(a, 0, 4 * n, stream)
        hip.hipModuleLaunchKernel(sleep, 1, 1, 1, 1, 1, 1, 0, stream, [0.05])
        hip.hipMemsetAsync(a, 0, 4 * n, stream)          # SDMA right before the graph
        hip.hipGraphLaunch(ex, stream)
        hip.hipMemcpyAsync(c, b, 4 * n, hip.hipMemcpyDeviceToDevice, stream)   # SDMA right after
        launch(inc, n, stream, [c, n])
        hip.hipStreamSynchronize(stream)
        assert (read(c, np.int32, n) == 2).all()
    hip.hipGraphExecDestroy(ex)


# -- dependencies ---------------------------------------------------------------------------------
def _span_graph(mod, out, edges, secs):
    span = fn(mod, "span")
    g = hip.hipGraphCreate()
    nodes = []
    for i, t in enumerate(secs):
        deps = [nodes[a] for a, b in edges if b == i]
        nodes.append(hip.hipGraphAddKernelNode(g, deps, kparams(span, [out, i, t])))
    return g, nodes


def _spans(out, k):
    v = hip.host_array(out, np.uint64, 2 * k).astype(np.int64)
    return v[0::2], v[1::2]


@pytest.mark.parametrize("slow", ["B", "C"])
def test_diamond_honours_its_edges(mod, stream, dmem, slow):
    out = dmem(8 * 8, host=True)
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]               # A -> B, A -> C, B -> D, C -> D
    secs = [0.0, 0.15 if slow == "B" else 0.02, 0.15 if slow == "C" else 0.02, 0.0]
    g, nodes = _span_graph(mod, out, edges, secs)
    ex = hip.hipGraphInstantiate(g)
    for _ in range(3):
        hip.host_array(out, np.uint64, 8)[:] = 0
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 4)
        for a, b in edges:
            assert start[b] >= end[a], f"edge {a}->{b} violated"
    hip.hipGraphExecDestroy(ex)


def test_independent_branches_overlap_and_removing_an_edge_lets_them(mod, stream, dmem):
    """B and C of a diamond run on two lanes; with the edge C -> D removed, D may start before C ends.
    Held, not timed: B and C meet (each sets its flag and waits for the other's: neither ends unless
    both run at once); then C waits for a flag only the test sets, once D has ended."""
    out = dmem(8 * 8, host=True)
    flags = dmem(4 * 4, host=True)
    fl = hip.host_array(flags, np.uint32, 4)
    span, meet = fn(mod, "span"), fn(mod, "span_meet")
    # A -> B, A -> C, B -> D, C -> D; B sets flag 0 and waits for 1, C sets 1 and waits for 0 (then 2)
    g = hip.hipGraphCreate()
    a = hip.hipGraphAddKernelNode(g, [], kparams(span, [out, 0, 0.0]))
    b = hip.hipGraphAddKernelNode(g, [a], kparams(meet, [out, 1, flags, 0, 1, 30.0]))
    c = hip.hipGraphAddKernelNode(g, [a], kparams(meet, [out, 2, flags, 1, 0, 30.0]))
    d = hip.hipGraphAddKernelNode(g, [b, c], kparams(span, [out, 3, 0.0]))
    ex = hip.hipGraphInstantiate(g)
    if ex.statistics().aql_lanes < 2:
        pytest.fail("a diamond should be scheduled on two AQL lanes")
    # the branch lane's queue (what the launch creates): on the stream's engine B and C could not meet
    if stream.vgpu.aux_queue(0).engine == stream.vgpu.queue.engine:
        hip.hipGraphExecDestroy(ex)
        pytest.skip("the auxiliary queue landed on the stream's engine: no overlap possible")
    try:
        fl[:] = 0
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 4)
        assert start[2] < end[1] and start[1] < end[2], "B and C should overlap"
        assert start[3] >= max(end[1], end[2])
        hip.hipGraphExecDestroy(ex)
        ex = None
        hip.hipGraphRemoveDependencies(g, c, d)
        hip.hipGraphKernelNodeSetParams(c, kparams(meet, [out, 2, flags, 1, 2, 30.0]))   # C: held by flag 2
        ex = hip.hipGraphInstantiate(g)
        fl[:] = 0
        hip.host_array(out, np.uint64, 8)[:] = 0
        hip.hipGraphLaunch(ex, stream)
        ends = hip.host_array(out, np.uint64, 8)[1::2]
        wait_until(lambda: ends[3] != 0, 20.0, "D to end while C is held")
        assert ends[2] == 0, "C ended while the test held it"
        fl[2] = 1
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 4)
        assert start[3] >= end[1] and start[3] < end[2], "without C -> D, D runs while C does"
    finally:
        fl[:] = 1                      # never leave a kernel waiting (the stream synchronises first)
        hip.hipStreamSynchronize(stream)
        if ex is not None:
            hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(g)


def test_random_dags_honour_every_edge(mod, stream, dmem):
    rng = random.Random(5)
    out = dmem(8 * 2 * 40, host=True)
    for trial in range(6):
        k = rng.randint(8, 30)
        edges = [(a, b) for b in range(k) for a in range(b) if rng.random() < 3.0 / k]
        secs = [rng.choice([0.0, 0.0, 0.002, 0.01]) for _ in range(k)]
        g, nodes = _span_graph(mod, out, edges, secs)
        order = list(range(k))
        rng.shuffle(order)                       # add some empty nodes as junctions too
        e1 = hip.hipGraphAddEmptyNode(g, [nodes[i] for i in order[:3]])
        last = hip.hipGraphAddKernelNode(g, [e1], kparams(fn(mod, "span"), [out, k, 0.0]))
        ex = hip.hipGraphInstantiate(g)
        for _ in range(2):
            hip.host_array(out, np.uint64, 2 * (k + 1))[:] = 0
            hip.hipGraphLaunch(ex, stream)
            hip.hipStreamSynchronize(stream)
            start, end = _spans(out, k + 1)
            assert (start > 0).all()
            for a, b in edges:
                assert start[b] >= end[a], f"trial {trial}: edge {a}->{b} violated"
            for i in order[:3]:
                assert start[k] >= end[i]
        assert last in hip.hipGraphGetNodes(g)
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(g)


def test_copies_memsets_and_kernels_across_engines(mod, stream, dmem):
    """Data flow through SDMA nodes with several dependencies on kernels on different lanes."""
    n = 512
    inc = fn(mod, "inc")
    a, b, c, d = (dmem(4 * n) for _ in range(4))
    g = hip.hipGraphCreate()
    ma = hip.hipGraphAddMemsetNode(g, [], hip.hipMemsetParams(a, 0, 4 * n))
    mb = hip.hipGraphAddMemsetNode(g, [], hip.hipMemsetParams(b, 0, 4 * n))
    ka = [hip.hipGraphAddKernelNode(g, [ma], kparams(inc, [a, n], n, 64))]
    kb = [hip.hipGraphAddKernelNode(g, [mb], kparams(inc, [b, n], n, 64))]
    for _ in range(3):
        ka.append(hip.hipGraphAddKernelNode(g, [ka[-1]], kparams(inc, [a, n], n, 64)))
    for _ in range(5):
        kb.append(hip.hipGraphAddKernelNode(g, [kb[-1]], kparams(inc, [b, n], n, 64)))
    # c <- a needs the a-chain and the b-chain (so that d below sees both)
    ca = hip.hipGraphAddMemcpyNode(g, [ka[-1], kb[-1]], hip.hipMemcpyNodeParams(c, a, 2 * n, hip.hipMemcpyDeviceToDevice))
    cb = hip.hipGraphAddMemcpyNode1D(g, [kb[-1], ka[-1]], c + 2 * n, b + 2 * n, 2 * n, hip.hipMemcpyDeviceToDevice)
    k = hip.hipGraphAddKernelNode(g, [ca, cb], kparams(inc, [c, n], n, 64))
    hip.hipGraphAddMemcpyNode(g, [k], hip.hipMemcpyNodeParams(d, c, 4 * n, hip.hipMemcpyDeviceToDevice))
    ex = hip.hipGraphInstantiate(g)
    for _ in range(5):
        hip.hipMemsetAsync(d, 0xFF, 4 * n, stream)
        hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    got = read(d, np.int32, n)
    assert (got[:n // 2] == 5).all() and (got[n // 2:] == 7).all()
    hip.hipGraphExecDestroy(ex)


def test_graph_with_more_packets_than_the_ring(mod, stream, dmem):
    d = dmem(4)
    hip.hipMemset(d, 0, 4)
    g = hip.hipGraphCreate()
    inc = fn(mod, "inc")
    prev = []
    for _ in range(1500):                 # the stream's queue holds 1024 packets
        prev = [hip.hipGraphAddKernelNode(g, prev, kparams(inc, [d, 1]))]
    ex = hip.hipGraphInstantiate(g)
    for _ in range(2):
        hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert read(d, np.int32, 1)[0] == 3000
    hip.hipGraphExecDestroy(ex)


def test_host_nodes_events_and_pageable_copies(mod, stream, dmem):
    n = 100
    inc = fn(mod, "inc")
    d = dmem(4 * n)
    pin = dmem(4 * n, host=True)
    page_in = np.arange(n, dtype=np.int32)
    page_out = np.zeros(n, np.int32)
    seen = []
    g = hip.hipGraphCreate()
    c1 = hip.hipGraphAddMemcpyNode(g, [], hip.hipMemcpyNodeParams(d, page_in, 4 * n, hip.hipMemcpyHostToDevice))
    k = hip.hipGraphAddKernelNode(g, [c1], kparams(inc, [d, n], n, 64))
    c2 = hip.hipGraphAddMemcpyNode(g, [k], hip.hipMemcpyNodeParams(page_out, d, 4 * n, hip.hipMemcpyDeviceToHost))
    h = hip.hipGraphAddHostNode(g, [c2], hip.hipHostNodeParams(lambda arg: seen.append(page_out.copy()), None))
    c3 = hip.hipGraphAddMemcpyNode(g, [h], hip.hipMemcpyNodeParams(pin, page_out, 4 * n, hip.hipMemcpyHostToHost))
    ev = hip.hipEventCreate()
    hip.hipGraphAddEventRecordNode(g, [c3], ev)
    ex = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(ex, stream)
    hip.hipEventSynchronize(ev)
    assert np.array_equal(hip.host_array(pin, np.int32, n), page_in + 1)
    hip.hipStreamSynchronize(stream)
    assert len(seen) == 1 and np.array_equal(seen[0], page_in + 1)
    page_in += 10                          # read again at the next launch
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert np.array_equal(page_out, page_in + 1) and len(seen) == 2
    # an event-wait node: the graph waits for an event recorded on another stream
    other = hip.hipStreamCreate()
    ev2 = hip.hipEventCreate()
    out = dmem(8 * 4, host=True)
    g2 = hip.hipGraphCreate()
    w = hip.hipGraphAddEventWaitNode(g2, [], ev2)
    hip.hipGraphAddKernelNode(g2, [w], kparams(fn(mod, "span"), [out, 1, 0.0]))
    ex2 = hip.hipGraphInstantiate(g2)
    hip.hipModuleLaunchKernel(fn(mod, "span"), 1, 1, 1, 1, 1, 1, 0, other, [out, 0, 0.1])
    hip.hipEventRecord(ev2, other)
    hip.hipGraphLaunch(ex2, stream)
    hip.hipStreamSynchronize(stream)
    start, end = _spans(out, 2)
    assert start[1] >= end[0]
    for e in (ex, ex2):
        hip.hipGraphExecDestroy(e)
    hip.hipEventDestroy(ev)
    hip.hipEventDestroy(ev2)
    hip.hipStreamDestroy(other)


# -- exec updates ---------------------------------------------------------------------------------
def test_exec_kernel_node_update_changes_next_launch_only(mod, stream, dmem):
    n = 128
    inc, axpy = fn(mod, "inc"), fn(mod, "axpy")
    a, b = dmem(4 * n), dmem(4 * n)
    hip.hipMemset(a, 0, 4 * n)
    hip.hipMemset(b, 0, 4 * n)
    g = hip.hipGraphCreate()
    k0 = hip.hipGraphAddKernelNode(g, [], kparams(inc, [a, n], n, 64))
    k1 = hip.hipGraphAddKernelNode(g, [k0], kparams(inc, [a, n], n, 64))
    ex = hip.hipGraphInstantiate(g)
    for _ in range(4):
        hip.hipGraphLaunch(ex, stream)            # in flight while the update comes
    hip.hipGraphExecKernelNodeSetParams(ex, k1, kparams(inc, [b, n], n, 64))
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert (read(a, np.int32, n) == 9).all() and (read(b, np.int32, n) == 1).all()
    assert hip.hipGraphKernelNodeGetParams(k1).kernelParams == [a, n]     # the graph is unchanged
    ex2 = hip.hipGraphInstantiate(g)                                       # so is a new exec
    hip.hipGraphLaunch(ex2, stream)
    hip.hipStreamSynchronize(stream)
    assert (read(a, np.int32, n) == 11).all() and (read(b, np.int32, n) == 1).all()
    # a different kernel with a bigger kernarg block
    y, x = dmem(4 * n), dmem(4 * n)
    hip.hipMemcpy(x, np.ones(n, np.float32), 4 * n, hip.hipMemcpyHostToDevice)
    hip.hipMemset(y, 0, 4 * n)
    hip.hipGraphExecKernelNodeSetParams(ex, k0, kparams(axpy, [y, x, 2.5, n], n, 64))
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert np.allclose(read(y, np.float32, n), 2.5) and (read(a, np.int32, n) == 11).all()
    assert (read(b, np.int32, n) == 2).all()
    with pytest.raises(hip.HipError, match="hipErrorInvalidValue.*takes 2 arguments"):
        hip.hipGraphExecKernelNodeSetParams(ex, k1, kparams(inc, [b]))
    for e in (ex, ex2):
        hip.hipGraphExecDestroy(e)


def test_disabled_nodes_do_nothing(mod, stream, dmem):
    n = 64
    inc = fn(mod, "inc")
    a, b, c = dmem(4 * n), dmem(4 * n), dmem(4 * n)
    for p in (a, b, c):
        hip.hipMemset(p, 0, 4 * n)
    g = hip.hipGraphCreate()
    k0 = hip.hipGraphAddKernelNode(g, [], kparams(inc, [a, n], n, 64))
    k1 = hip.hipGraphAddKernelNode(g, [k0], kparams(inc, [a, n], n, 64))
    ms = hip.hipGraphAddMemsetNode(g, [k1], hip.hipMemsetParams(b, 3, 4 * n))
    cp = hip.hipGraphAddMemcpyNode(g, [ms], hip.hipMemcpyNodeParams(c, a, 4 * n, hip.hipMemcpyDeviceToDevice))
    ex = hip.hipGraphInstantiate(g)
    hip.hipGraphNodeSetEnabled(ex, k1, False)
    hip.hipGraphNodeSetEnabled(ex, ms, False)
    assert hip.hipGraphNodeGetEnabled(ex, k1) is False
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert (read(a, np.int32, n) == 1).all() and (read(b, np.int32, n) == 0).all()
    assert (read(c, np.int32, n) == 1).all()
    hip.hipGraphNodeSetEnabled(ex, cp, False)
    hip.hipGraphNodeSetEnabled(ex, k1, True)
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert (read(a, np.int32, n) == 3).all() and (read(c, np.int32, n) == 1).all()
    with pytest.raises(hip.HipError, match="hipErrorInvalidValue"):
        hip.hipGraphNodeSetEnabled(ex, hip.hipGraphAddEmptyNode(g, []), False)   # not in the exec
    hip.hipGraphExecDestroy(ex)


# -- construction errors, dot ---------------------------------------------------------------------
def test_cycles_are_refused_naming_the_cycle(mod):
    g = hip.hipGraphCreate()
    a = hip.hipGraphAddEmptyNode(g, [])
    b = hip.hipGraphAddEmptyNode(g, [a])
    c = hip.hipGraphAddEmptyNode(g, [b])
    hip.hipGraphAddEmptyNode(g, [a])
    hip.hipGraphAddDependencies(g, c, a)
    with pytest.raises(hip.HipError, match=r"hipErrorInvalidValue: graph has a cycle: node 0 .*-> node 1 .*-> "
                                           r"node 2 .*-> node 0"):
        hip.hipGraphInstantiate(g)
    with pytest.raises(hip.HipError, match="cannot depend on itself"):
        hip.hipGraphAddDependencies(g, a, a)
    with pytest.raises(hip.HipError, match="already exists"):
        hip.hipGraphAddDependencies(g, [a], [b])
    hip.hipGraphRemoveDependencies(g, c, a)
    hip.hipGraphExecDestroy(hip.hipGraphInstantiate(g))
    g2 = hip.hipGraphCreate()
    with pytest.raises(hip.HipError, match="another graph"):
        hip.hipGraphAddEmptyNode(g2, [a])


def test_dot_print_has_nodes_and_edges(mod, tmp_path, dmem):
    d = dmem(256)
    g = hip.hipGraphCreate()
    k = hip.hipGraphAddKernelNode(g, [], kparams(fn(mod, "inc"), [d, 64], 64, 64))
    m = hip.hipGraphAddMemsetNode(g, [k], hip.hipMemsetParams(d, 1, 256))
    e = hip.hipGraphAddEmptyNode(g, [k, m])
    path = tmp_path / "g.dot"
    hip.hipGraphDebugDotPrint(g, str(path))
    text = path.read_text()
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert 'n0 [label="0: kernel inc' in text and "memset 256 B" in text and "2: empty" in text
    for a, b in [(k, m), (k, e), (m, e)]:
        assert f"n{a.id} -> n{b.id};" in text
    assert hip.hipGraphGetEdges(g) == ([k, k, m], [m, e, e])
    assert hip.hipGraphGetRootNodes(g) == [k]


# -- capture: multi-stream, errors ----------------------------------------------------------------
def test_fork_join_capture_across_streams(mod, stream, dmem):
    n = 64
    inc, span = fn(mod, "inc"), fn(mod, "span")
    x, y = dmem(4 * n), dmem(4 * n)
    out = dmem(8 * 8, host=True)
    hip.hipMemset(x, 0, 4 * n)
    hip.hipMemset(y, 0, 4 * n)
    side = hip.hipStreamCreate()
    e0, e1 = hip.hipEventCreate(), hip.hipEventCreate()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 0, 0.0])
    hip.hipEventRecord(e0, stream)
    hip.hipStreamWaitEvent(side, e0)                  # side joins the capture
    assert hip.hipStreamIsCapturing(side) == hip.hipStreamCaptureStatusActive
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, side, [out, 1, 0.1])
    launch(inc, n, side, [y, n])
    hip.hipEventRecord(e1, side)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 2, 0.02])
    launch(inc, n, stream, [x, n])
    hip.hipStreamWaitEvent(stream, e1)                # join
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 3, 0.0])
    g = hip.hipStreamEndCapture(stream)
    assert hip.hipStreamIsCapturing(side) == hip.hipStreamCaptureStatusNone
    nodes = hip.hipGraphGetNodes(g)
    assert len(nodes) == 6
    assert set(hip.hipGraphNodeGetDependencies(nodes[5])) == {nodes[2], nodes[4]}
    ex = hip.hipGraphInstantiate(g)
    for _ in range(3):
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 4)
        assert start[1] >= end[0] and start[2] >= end[0] and start[3] >= max(end[1], end[2])
    assert (read(x, np.int32, n) == 3).all() and (read(y, np.int32, n) == 3).all()
    hip.hipGraphExecDestroy(ex)
    for e in (e0, e1):
        hip.hipEventDestroy(e)
    hip.hipStreamDestroy(side)


@pytest.mark.parametrize("call", ["hipStreamSynchronize", "hipStreamQuery", "hipDeviceSynchronize",
                                  "hipMemcpy", "hipMalloc"])
def test_illegal_call_during_capture_invalidates_it(mod, stream, dmem, call):
    d = dmem(256)
    inc = fn(mod, "inc")
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    launch(inc, 64, stream, [d, 64])
    with pytest.raises(hip.HipError) as ei:
        if call == "hipStreamSynchronize":
            hip.hipStreamSynchronize(stream)
        elif call == "hipStreamQuery":
            hip.hipStreamQuery(stream)
        elif call == "hipDeviceSynchronize":
            hip.hipDeviceSynchronize()
        elif call == "hipMemcpy":
            hip.hipMemcpy(np.zeros(64, np.uint8), d, 64, hip.hipMemcpyDeviceToHost)
        else:
            hip.hipMalloc(64)
    # a synchronous copy runs on the legacy null stream, ordered with the capturing (blocking) stream
    want = "hipErrorStreamCaptureImplicit" if call == "hipMemcpy" else "hipErrorStreamCaptureUnsupported"
    assert ei.value.name == want
    assert hip.hipGetLastError() == hip.hipError_t[want]
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusInvalidated
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureInvalidated"):
        launch(inc, 64, stream, [d, 64])
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureInvalidated"):
        hip.hipStreamEndCapture(stream)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    launch(inc, 64, stream, [d, 64])                 # the stream works eagerly again
    hip.hipStreamSynchronize(stream)


def test_capture_modes_and_other_errors(mod, stream, dmem):
    d = dmem(256)
    # Relaxed: potentially unsafe calls are allowed; so are they from a thread in Relaxed mode
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeRelaxed)
    p = hip.hipMalloc(64)
    hip.hipFree(p)
    hip.hipMemsetAsync(d, 1, 256, stream)
    g = hip.hipStreamEndCapture(stream)
    assert len(hip.hipGraphGetNodes(g)) == 1
    # ThreadLocal: another thread's unsafe calls are fine, this thread's are not
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeThreadLocal)
    errs = []

    def other():
        try:
            hip.hipFree(hip.hipMalloc(64))
        except hip.HipError as exc:
            errs.append(exc)
    t = threading.Thread(target=other)
    t.start()
    t.join(30)
    assert errs == []
    old = hip.hipThreadExchangeStreamCaptureMode(hip.hipStreamCaptureModeRelaxed)
    assert old == hip.hipStreamCaptureModeGlobal
    hip.hipFree(hip.hipMalloc(64))                  # this thread is relaxed now
    hip.hipThreadExchangeStreamCaptureMode(old)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureUnsupported"):
        hip.hipMalloc(64)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureInvalidated"):
        hip.hipStreamEndCapture(stream)
    # begin twice, end without begin, null stream, end on a forked stream
    with pytest.raises(hip.HipError, match="hipErrorIllegalState"):
        hip.hipStreamEndCapture(stream)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureUnsupported"):
        hip.hipStreamBeginCapture(None)
    hip.hipStreamBeginCapture(stream)
    with pytest.raises(hip.HipError, match="hipErrorIllegalState"):
        hip.hipStreamBeginCapture(stream)
    ev = hip.hipEventCreate()
    hip.hipEventRecord(ev, stream)
    with pytest.raises(hip.HipError, match="hipErrorCapturedEvent"):
        hip.hipEventQuery(ev)
    side = hip.hipStreamCreate()
    hip.hipStreamWaitEvent(side, ev)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureUnmatched"):
        hip.hipStreamEndCapture(side)
    g = hip.hipStreamEndCapture(stream)               # side did nothing: nothing to join
    assert hip.hipGraphGetNodes(g) == []
    assert hip.hipEventQuery(ev) == hip.hipError_t.hipSuccess
    # an event recorded outside the capture cannot be waited on inside it (without External)
    hip.hipEventRecord(ev, side)
    hip.hipStreamBeginCapture(stream)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureIsolation"):
        hip.hipStreamWaitEvent(stream, ev)
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureInvalidated"):
        hip.hipStreamEndCapture(stream)
    hip.hipStreamBeginCapture(stream)
    hip.hipStreamWaitEvent(stream, ev, hip.hipEventWaitExternal)
    g = hip.hipStreamEndCapture(stream)
    assert [x.type for x in hip.hipGraphGetNodes(g)] == [hip.hipGraphNodeType.hipGraphNodeTypeWaitEvent]
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(side)


def test_unjoined_fork_is_refused(mod, stream, dmem):
    d = dmem(256)
    inc = fn(mod, "inc")
    side = hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    launch(inc, 64, stream, [d, 64])
    hip.hipEventRecord(ev, stream)
    hip.hipStreamWaitEvent(side, ev)
    launch(inc, 64, side, [d, 64])                  # never joined back
    launch(inc, 64, stream, [d, 64])
    with pytest.raises(hip.HipError, match="hipErrorStreamCaptureUnjoined"):
        hip.hipStreamEndCapture(stream)
    assert hip.hipStreamIsCapturing(side) == hip.hipStreamCaptureStatusNone
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusNone
    launch(inc, 64, side, [d, 64])                  # both streams are usable again
    hip.hipStreamSynchronize(side)
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(side)


def test_eager_stream_wait_event(mod, dmem):
    out = dmem(8 * 4, host=True)
    span = fn(mod, "span")
    a, b = hip.hipStreamCreate(), hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, a, [out, 0, 0.1])
    hip.hipEventRecord(ev, a)
    hip.hipStreamWaitEvent(b, ev)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, b, [out, 1, 0.0])
    hip.hipStreamSynchronize(b)
    start, end = _spans(out, 2)
    assert start[1] >= end[0]
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(a)
    hip.hipStreamDestroy(b)


def test_replay_hook_warns_once_and_runs_once(mod, stream, dmem, monkeypatch):
    from hostside.hip import _graph_api as graph
    assert graph._replay_configured() is False
    d = dmem(4)
    hip.hipMemset(d, 0, 4)
    g = hip.hipGraphCreate()
    hip.hipGraphAddKernelNode(g, [], kparams(fn(mod, "inc"), [d, 1]))
    ex = hip.hipGraphInstantiate(g)
    monkeypatch.setattr(graph, "_replay_configured", lambda: True)
    monkeypatch.setattr(graph, "_replay_warned", False)
    with pytest.warns(RuntimeWarning, match="runs once"):
        hip.hipGraphLaunch(ex, stream)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert read(d, np.int32, 1)[0] == 2
    hip.hipGraphExecDestroy(ex)


def test_external_event_record_node_and_launch_inside_capture(mod, stream, dmem):
    out = dmem(8 * 4, host=True)
    span = fn(mod, "span")
    ev = hip.hipEventCreate()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 0, 0.05])
    hip.hipEventRecordWithFlags(ev, stream, hip.hipEventRecordExternal)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 1, 0.0])
    g = hip.hipStreamEndCapture(stream)
    assert [x.type.name for x in hip.hipGraphGetNodes(g)] == \
        ["hipGraphNodeTypeKernel", "hipGraphNodeTypeEventRecord", "hipGraphNodeTypeKernel"]
    ex = hip.hipGraphInstantiate(g)
    other = hip.hipStreamCreate()
    for _ in range(3):
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamWaitEvent(other, ev)            # other waits for the node, not the whole graph
        hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, other, [out, 2, 0.0])
        hip.hipStreamSynchronize(other)
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 3)
        assert start[2] >= end[0]
    hip.hipStreamBeginCapture(other)
    hip.hipGraphLaunch(ex, other)                   # into a capture: the graph becomes a child node
    g2 = hip.hipStreamEndCapture(other)
    assert [hip.hipGraphNodeGetType(n) for n in hip.hipGraphGetNodes(g2)] == [hip.hipGraphNodeType.hipGraphNodeTypeGraph]
    hip.hipGraphDestroy(g2)
    hip.hipGraphExecDestroy(ex)
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(other)


def test_event_rerecorded_while_a_wait_is_pending(mod, dmem):
    """A waiter keeps waiting for the record it was given: re-recording the event (on the waiting
    stream itself, behind the wait) must neither deadlock nor release the waiter early."""
    out = dmem(8 * 4, host=True)
    span = fn(mod, "span")
    a, b = hip.hipStreamCreate(), hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    for _ in range(3):
        hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, a, [out, 0, 0.05])
        hip.hipEventRecord(ev, a)
        hip.hipStreamWaitEvent(b, ev)
        hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, b, [out, 1, 0.0])
        hip.hipEventRecord(ev, b)                   # re-record while b's barrier may be parked
        hip.hipEventRecord(ev, b)                   # twice on one stream
        hip.hipEventSynchronize(ev)
        hip.hipStreamSynchronize(a)
        start, end = _spans(out, 2)
        assert start[1] >= end[0]
    hip.hipEventDestroy(ev)
    hip.hipStreamDestroy(a)
    hip.hipStreamDestroy(b)


def test_one_lane_when_the_stream_gets_no_branch_queue(mod, dmem, monkeypatch):
    """No free queue slot for a second lane: the same graph runs on the stream's queue alone."""
    s = hip.hipStreamCreate()
    from hostside.hsa import HsaError

    def no_queue(i):
        raise HsaError(0x1008, "no free queue slot")
    monkeypatch.setattr(s.vgpu, "aux_queue", no_queue)
    out = dmem(8 * 8, host=True)
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    g, nodes = _span_graph(mod, out, edges, [0.0, 0.05, 0.02, 0.0])
    ex = hip.hipGraphInstantiate(g)
    assert ex.statistics().aql_lanes == 2
    for _ in range(2):
        hip.hipGraphLaunch(ex, s)
        hip.hipStreamSynchronize(s)
        start, end = _spans(out, 4)
        assert all(start[b] >= end[a] for a, b in edges)
    assert list(ex.impl.plans) == [2, 1]
    hip.hipGraphExecDestroy(ex)
    monkeypatch.undo()
    hip.hipStreamDestroy(s)


def test_graph_upload_checks_its_arguments_and_the_launch_after_it_runs(mod, stream, dmem):
    """hipGraphUpload: the packets exist since instantiation, so it only checks the exec and the
    stream; a launch after it runs the graph as one without it."""
    x = dmem(4)
    hip.hipMemset(x, 0, 4)
    hip.hipDeviceSynchronize()
    g = hip.hipGraphCreate(0)
    hip.hipGraphAddKernelNode(g, [], kparams(fn(mod, "inc"), [x, 1]))
    ex = hip.hipGraphInstantiate(g)
    hip.hipGraphUpload(ex, stream)
    hip.hipGraphUpload(ex, None)
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert read(x, np.int32, 1)[0] == 1
    for bad in (None, g, 0):
        with pytest.raises(hip.HipError) as ei:
            hip.hipGraphUpload(bad, stream)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    with pytest.raises(hip.HipError):
        hip.hipGraphUpload(ex, 0xDEAD0)
    hip.hipGraphExecDestroy(ex)
    with pytest.raises(hip.HipError) as ei:
        hip.hipGraphUpload(ex, stream)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    hip.hipGraphDestroy(g)
