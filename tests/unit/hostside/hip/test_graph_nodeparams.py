"""Graph and exec node parameter calls (_graph_nodeparams, _graph_update): bad input for every argument,
exec setters change the exec but not the graph (and graph setters the graph but not existing execs), a
setter on an exec with launches in flight, hipGraphExecUpdate's success and each failure kind."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import wait_until

pytestmark = pytest.mark.timeout(60)
E = hip.hipError_t
R = hip.hipGraphExecUpdateResult
N = 256
NB = N * 4


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 16, "engines": 1}, "upstream.py")


class Res:
    def __init__(self):
        self.graphs, self.execs, self.dev, self.events, self.streams = [], [], [], [], []

    def graph(self):
        g = hip.hipGraphCreate()
        self.graphs.append(g)
        return g

    def exe(self, g):
        e = hip.hipGraphInstantiate(g)
        self.execs.append(e)
        return e

    def malloc(self, n=NB):
        p = hip.hipMalloc(n)
        self.dev.append(p)
        return p

    def event(self):
        e = hip.hipEventCreate()
        self.events.append(e)
        return e

    def stream(self):
        s = hip.hipStreamCreate()
        self.streams.append(s)
        return s


@pytest.fixture
def res(mod):
    r = Res()
    try:
        yield r
    finally:
        hip.hipDeviceSynchronize()
        for e in r.execs:
            hip.hipGraphExecDestroy(e)
        for g in r.graphs:
            hip.hipGraphDestroy(g)
        for e in r.events:
            hip.hipEventDestroy(e)
        for s in r.streams:
            hip.hipStreamDestroy(s)
        for p in r.dev:
            hip.hipFree(p)
        hip.hipGetLastError()


def _err(fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    return ei.value.error


def _run(exe, s):
    hip.hipGraphLaunch(exe, s)
    hip.hipStreamSynchronize(s)


# -- graph-level getters and setters ------------------------------------------------------------------
def test_graph_setters_bad_input(res):
    g = res.graph()
    d = res.malloc()
    calls = []
    host = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(calls.append, 1))
    ms = hip.hipGraphAddMemsetNode(g, None, hip.hipMemsetParams(d, 0, NB, 4))
    cp = hip.hipGraphAddMemcpyNode1D(g, None, np.zeros(N, np.int32), d, NB, hip.hipMemcpyDeviceToHost)
    ev = res.event()
    rec = hip.hipGraphAddEventRecordNode(g, None, ev)
    wait = hip.hipGraphAddEventWaitNode(g, None, ev)
    empty = hip.hipGraphAddEmptyNode(g, None)
    IV = E.hipErrorInvalidValue
    # node: None, wrong type, destroyed
    for get, ok in [(hip.hipGraphHostNodeGetParams, host), (hip.hipGraphMemsetNodeGetParams, ms),
                    (hip.hipGraphMemcpyNodeGetParams, cp), (hip.hipGraphEventRecordNodeGetEvent, rec),
                    (hip.hipGraphEventWaitNodeGetEvent, wait)]:
        assert _err(get, None) == IV and _err(get, empty) == IV
        get(ok)
    # params
    assert _err(hip.hipGraphHostNodeSetParams, host, None) == IV
    assert _err(hip.hipGraphHostNodeSetParams, host, hip.hipHostNodeParams(None)) == IV
    assert _err(hip.hipGraphHostNodeSetParams, ms, hip.hipHostNodeParams(print)) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, None) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, hip.hipMemsetParams(0, 0, NB, 4)) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, hip.hipMemsetParams(d, 0, 0, 3, width=4)) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, hip.hipMemsetParams(d, 0, 0, 4, width=N + 1)) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, hip.hipMemsetParams(d, 0, 0, 4, width=8, height=0)) == IV
    assert _err(hip.hipGraphMemsetNodeSetParams, ms, hip.hipMemsetParams(d, 0, 0, 4, width=8, height=2,
                                                                          pitch=16)) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams, cp, None) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams, cp, hip.hipMemcpyNodeParams(None, d, NB, 2)) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams1D, cp, d, d, NB, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams1D, cp, d, None, NB, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams1D, cp, res.malloc(), d, 0, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphMemcpyNodeSetParams1D, host, res.malloc(), d, NB, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphEventRecordNodeSetEvent, rec, None) == IV
    assert _err(hip.hipGraphEventRecordNodeSetEvent, wait, ev) == IV
    assert _err(hip.hipGraphEventWaitNodeSetEvent, wait, None) == IV
    assert _err(hip.hipGraphEventWaitNodeSetEvent, rec, ev) == IV
    assert _err(hip.hipGraphEventWaitNodeSetEvent, wait, "event") == E.hipErrorInvalidResourceHandle
    hip.hipGraphDestroyNode(host)
    assert _err(hip.hipGraphHostNodeGetParams, host) == IV


def test_graph_getters_read_back_what_was_set(res):
    g = res.graph()
    d = res.malloc()
    h = np.zeros(N, np.int32)
    host = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(print, "x"))
    p = hip.hipGraphHostNodeGetParams(host)
    assert p.fn is print and p.userData == "x"
    ms = hip.hipGraphAddMemsetNode(g, None, hip.hipMemsetParams(d, 7, 0, 4, width=N, height=1))
    p = hip.hipGraphMemsetNodeGetParams(ms)
    assert (p.dst, p.value, p.elementSize, p.width, p.height, p.pitch) == (d, 7, 4, N, 1, 0)
    hip.hipGraphMemsetNodeSetParams(ms, hip.hipMemsetParams(d, 5, 0, 2, width=8, height=4, pitch=64))
    p = hip.hipGraphMemsetNodeGetParams(ms)
    assert (p.value, p.elementSize, p.width, p.height, p.pitch) == (5, 2, 8, 4, 64)
    cp = hip.hipGraphAddMemcpyNode1D(g, None, h, d, NB, hip.hipMemcpyDeviceToHost)
    p = hip.hipGraphMemcpyNodeGetParams(cp)
    assert p.dst is h and p.src == d and p.size == NB and p.kind == hip.hipMemcpyDeviceToHost
    e1, e2 = res.event(), res.event()
    rec = hip.hipGraphAddEventRecordNode(g, None, e1)
    hip.hipGraphEventRecordNodeSetEvent(rec, e2)
    assert hip.hipGraphEventRecordNodeGetEvent(rec) is e2


# -- graph vs exec -------------------------------------------------------------------------------------
def test_exec_setters_change_the_exec_not_the_graph_and_vice_versa(res):
    s = res.stream()
    g = res.graph()
    a, b = res.malloc(), res.malloc()
    out_a, out_b = np.zeros(N, np.int32), np.zeros(N, np.int32)
    ms = hip.hipGraphAddMemsetNode(g, None, hip.hipMemsetParams(a, 1, NB, 4))
    cp = hip.hipGraphAddMemcpyNode1D(g, [ms], out_a, a, NB, hip.hipMemcpyDeviceToHost)
    seen = []
    host = hip.hipGraphAddHostNode(g, [cp], hip.hipHostNodeParams(seen.append, "graph"))
    exe = res.exe(g)
    hip.hipGraphExecMemsetNodeSetParams(exe, ms, hip.hipMemsetParams(b, 2, NB, 4))
    hip.hipGraphExecMemcpyNodeSetParams1D(exe, cp, out_b, b, NB, hip.hipMemcpyDeviceToHost)
    hip.hipGraphExecHostNodeSetParams(exe, host, hip.hipHostNodeParams(seen.append, "exec"))
    _run(exe, s)
    assert (out_b == 2).all() and (out_a == 0).all() and seen == ["exec"]
    # the graph kept its parameters: a new exec runs them
    assert hip.hipGraphHostNodeGetParams(host).userData == "graph"
    assert hip.hipGraphMemsetNodeGetParams(ms).dst == a
    _run(res.exe(g), s)
    assert (out_a == 1).all() and seen == ["exec", "graph"]
    # a graph setter does not reach the existing exec
    hip.hipGraphHostNodeSetParams(host, hip.hipHostNodeParams(seen.append, "graph2"))
    hip.hipGraphMemsetNodeSetParams(ms, hip.hipMemsetParams(a, 9, NB, 4))
    out_b[:] = 0
    _run(exe, s)
    assert seen[-1] == "exec" and (out_b == 2).all()


def test_exec_memcpy_setter_between_memory_kinds_rebuilds(res):
    """A device->device copy node of an exec made a pinned->device (host) copy, and back: the node
    becomes other ops, so the exec is rebuilt; launches before and after are right."""
    s = res.stream()
    g = res.graph()
    src, dst = res.malloc(), res.malloc()
    hip.hipMemcpy(src, np.arange(N, dtype=np.int32), NB, hip.hipMemcpyHostToDevice)
    cp = hip.hipGraphAddMemcpyNode1D(g, None, dst, src, NB, hip.hipMemcpyDefault)
    out = np.zeros(N, np.int32)
    hip.hipGraphAddMemcpyNode1D(g, [cp], out, dst, NB, hip.hipMemcpyDeviceToHost)
    exe = res.exe(g)
    _run(exe, s)
    assert (out == np.arange(N)).all()
    host_src = np.full(N, 42, np.int32)
    hip.hipGraphExecMemcpyNodeSetParams(exe, cp, hip.hipMemcpyNodeParams(dst, host_src, NB, hip.hipMemcpyDefault))
    for _ in range(3):
        _run(exe, s)
        assert (out == 42).all()
    hip.hipGraphExecMemcpyNodeSetParams1D(exe, cp, dst, src, NB, hip.hipMemcpyDefault)
    _run(exe, s)
    assert (out == np.arange(N)).all()


def test_exec_setters_bad_input(res, mod):
    g = res.graph()
    d, d2 = res.malloc(), res.malloc()
    host = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(print))
    ms = hip.hipGraphAddMemsetNode(g, None, hip.hipMemsetParams(d, 0, 0, 4, width=8, height=4, pitch=64))
    cp = hip.hipGraphAddMemcpyNode1D(g, None, d2, d, NB, hip.hipMemcpyDeviceToDevice)
    ev = res.event()
    rec = hip.hipGraphAddEventRecordNode(g, None, ev)
    wait = hip.hipGraphAddEventWaitNode(g, None, ev)
    child = res.graph()
    hip.hipGraphAddEmptyNode(child, None)
    ch = hip.hipGraphAddChildGraphNode(g, None, child)
    exe = res.exe(g)
    later = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(print))
    IV = E.hipErrorInvalidValue
    hp = hip.hipHostNodeParams(print)
    assert _err(hip.hipGraphExecHostNodeSetParams, None, host, hp) == IV
    assert _err(hip.hipGraphExecHostNodeSetParams, exe, None, hp) == IV
    assert _err(hip.hipGraphExecHostNodeSetParams, exe, host, None) == IV
    assert _err(hip.hipGraphExecHostNodeSetParams, exe, later, hp) == IV        # not in the exec
    assert _err(hip.hipGraphExecHostNodeSetParams, exe, ms, hp) == IV           # wrong type
    mp = hip.hipMemsetParams(d, 1, 0, 4, width=8, height=4, pitch=64)
    assert _err(hip.hipGraphExecMemsetNodeSetParams, None, ms, mp) == IV
    assert _err(hip.hipGraphExecMemsetNodeSetParams, exe, None, mp) == IV
    assert _err(hip.hipGraphExecMemsetNodeSetParams, exe, ms, None) == IV
    assert _err(hip.hipGraphExecMemsetNodeSetParams, exe, ms, hip.hipMemsetParams(0, 1, 0, 4, width=8)) == IV
    assert _err(hip.hipGraphExecMemsetNodeSetParams, exe, ms,                   # 2-D: same width, height
                hip.hipMemsetParams(d, 1, 0, 4, width=8, height=3, pitch=64)) == IV
    hip.hipGraphExecMemsetNodeSetParams(exe, ms, mp)
    cpp = hip.hipMemcpyNodeParams(d2, d, NB, hip.hipMemcpyDeviceToDevice)
    assert _err(hip.hipGraphExecMemcpyNodeSetParams, None, cp, cpp) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams, exe, None, cpp) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams, exe, cp, None) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams, exe, cp,                   # another kind
                hip.hipMemcpyNodeParams(d2, d, NB, hip.hipMemcpyDefault)) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams1D, exe, cp, d2, d, NB, hip.hipMemcpyDefault) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams1D, exe, cp, d, d, NB, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams1D, exe, cp, d2, d, 0, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams1D, None, cp, d2, d, NB, hip.hipMemcpyDeviceToDevice) == IV
    assert _err(hip.hipGraphExecMemcpyNodeSetParams1D, exe, host, d2, d, NB, hip.hipMemcpyDeviceToDevice) == IV
    ev2 = res.event()
    for fn, node, other in [(hip.hipGraphExecEventRecordNodeSetEvent, rec, wait),
                            (hip.hipGraphExecEventWaitNodeSetEvent, wait, rec)]:
        assert _err(fn, None, node, ev2) == IV
        assert _err(fn, exe, None, ev2) == IV
        assert _err(fn, exe, node, None) == IV
        assert _err(fn, exe, other, ev2) == IV
        fn(exe, node, ev2)
    c2 = res.graph()
    hip.hipGraphAddEmptyNode(c2, None)
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, None, ch, c2) == IV
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, exe, None, c2) == IV
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, exe, ch, None) == IV
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, exe, host, c2) == IV
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, exe, ch, g) == E.hipErrorUnknown
    hip.hipGraphAddEmptyNode(c2, None)
    assert _err(hip.hipGraphExecChildGraphNodeSetParams, exe, ch, c2) == E.hipErrorUnknown
    hip.hipGraphExecDestroy(res.execs.pop())
    assert _err(hip.hipGraphExecHostNodeSetParams, exe, host, hp) == IV        # destroyed exec


def test_exec_event_record_setter_refuses_an_event_recorded_twice(res):
    g = res.graph()
    e1, e2 = res.event(), res.event()
    r1 = hip.hipGraphAddEventRecordNode(g, None, e1)
    hip.hipGraphAddEventRecordNode(g, [r1], e2)
    exe = res.exe(g)
    assert _err(hip.hipGraphExecEventRecordNodeSetEvent, exe, r1, e2) == E.hipErrorInvalidValue


def test_exec_event_record_setter_records_the_new_event(res, mod):
    s = res.stream()
    g = res.graph()
    e1, e2 = res.event(), res.event()
    rec = hip.hipGraphAddEventRecordNode(g, None, e1)
    exe = res.exe(g)
    hip.hipGraphExecEventRecordNodeSetEvent(exe, rec, e2)
    _run(exe, s)
    hip.hipEventSynchronize(e2)
    assert hip.hipGraphEventRecordNodeGetEvent(rec) is e1
    assert _err(hip.hipEventElapsedTime, e1, e2) == E.hipErrorInvalidHandle   # e1 never recorded


def test_child_graph_setter_changes_the_exec_only(res):
    s = res.stream()
    a, b = res.malloc(), res.malloc()
    child = res.graph()
    hip.hipGraphAddMemsetNode(child, None, hip.hipMemsetParams(a, 3, NB, 4))
    g = res.graph()
    ch = hip.hipGraphAddChildGraphNode(g, None, child)
    out_a, out_b = np.zeros(N, np.int32), np.zeros(N, np.int32)
    hip.hipGraphAddMemcpyNode1D(g, [ch], out_a, a, NB, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddMemcpyNode1D(g, [ch], out_b, b, NB, hip.hipMemcpyDeviceToHost)
    exe = res.exe(g)
    hip.hipMemset(a, 0, NB)
    hip.hipMemset(b, 0, NB)
    new = res.graph()
    hip.hipGraphAddMemsetNode(new, None, hip.hipMemsetParams(b, 4, NB, 4))
    hip.hipGraphExecChildGraphNodeSetParams(exe, ch, new)
    _run(exe, s)
    assert (out_b == 4).all() and (out_a == 0).all()
    inner = hip.hipGraphGetNodes(hip.hipGraphChildGraphNodeGetGraph(ch))[0]
    assert hip.hipGraphMemsetNodeGetParams(inner).dst == a


# -- launches in flight --------------------------------------------------------------------------------
def _lock_held(exe) -> bool:
    """True while another thread holds the exec's lock (a setter waiting for the launches in flight)."""
    if exe.impl.lock.acquire(blocking=False):
        exe.impl.lock.release()
        return False
    return True


def _set_while_in_flight(mod, s, exe, setter):
    """Queue a launch of ``exe`` behind a closed gate, call ``setter()`` in a thread, open the gate once
    the setter waits (it holds the exec's lock), and return when the setter is done."""
    flag_p = hip.hipHostMalloc(4)
    flag = hip.host_array(flag_p, np.uint32, 1)
    flag[0] = 0
    errors = []
    t = None
    try:
        hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "gate"), 1, 1, 1, 1, 1, 1, 0, s, [flag_p, 30.0])
        hip.hipGraphLaunch(exe, s)

        def body():
            try:
                setter()
            except BaseException as exc:    # noqa: BLE001
                errors.append(exc)
        t = threading.Thread(target=body)
        t.start()
        wait_until(lambda: _lock_held(exe) or not t.is_alive(), what="the setter to wait for the launch")
        assert t.is_alive(), "the setter returned while a launch was in flight"
        flag[0] = 1
        t.join(60)
        assert not t.is_alive() and not errors, errors
    finally:
        flag[0] = 1
        if t is not None:
            t.join(60)
        hip.hipDeviceSynchronize()
        hip.hipHostFree(flag_p)


def test_setter_waits_for_launches_in_flight(res, mod):
    """A launch queued behind a gate still runs the old host function; the setter returns once that
    launch is done, and the next launch runs the new one."""
    s = res.stream()
    g = res.graph()
    seen = []
    host = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(seen.append, "old"))
    exe = res.exe(g)
    _set_while_in_flight(mod, s, exe, lambda: hip.hipGraphExecHostNodeSetParams(
        exe, host, hip.hipHostNodeParams(seen.append, "new")))
    assert seen == ["old"]                  # the launch in flight finished (with the old function) first
    _run(exe, s)
    assert seen == ["old", "new"]


def test_rebuilding_setter_and_update_wait_for_launches_in_flight(res, mod):
    """A copy moved from device memory to a pageable array (the exec is rebuilt) while a launch is in
    flight: that launch copies the old source, the next the new one; then hipGraphExecUpdate does the
    same with the graph's parameters."""
    s = res.stream()
    src, dst = res.malloc(), res.malloc()
    hip.hipMemcpy(src, np.full(N, 1, np.int32), NB, hip.hipMemcpyHostToDevice)
    g = res.graph()
    cp = hip.hipGraphAddMemcpyNode1D(g, None, dst, src, NB, hip.hipMemcpyDefault)
    out = np.zeros(N, np.int32)
    hip.hipGraphAddMemcpyNode1D(g, [cp], out, dst, NB, hip.hipMemcpyDeviceToHost)
    exe = res.exe(g)
    pageable = np.full(N, 2, np.int32)
    _set_while_in_flight(mod, s, exe, lambda: hip.hipGraphExecMemcpyNodeSetParams1D(
        exe, cp, dst, pageable, NB, hip.hipMemcpyDefault))
    assert (out == 1).all()
    _run(exe, s)
    assert (out == 2).all()
    _set_while_in_flight(mod, s, exe, lambda: hip.hipGraphExecUpdate(exe, g))
    assert (out == 2).all()
    _run(exe, s)
    assert (out == 1).all()


def test_exec_update_refuses_a_kernel_of_an_unloaded_module(res, mod):
    other = hip.hipModuleLoad(kernel_file("upstream.py"))
    try:
        d = res.malloc()
        g1, g2 = res.graph(), res.graph()
        hip.hipGraphAddKernelNode(g1, None, hip.hipKernelNodeParams(hip.hipModuleGetFunction(mod, "set_value"),
                                                                    1, 64, 0, [d, 1, 64]))
        k2 = hip.hipGraphAddKernelNode(g2, None, hip.hipKernelNodeParams(
            hip.hipModuleGetFunction(other, "set_value"), 1, 64, 0, [d, 2, 64]))
        exe = res.exe(g1)
    finally:
        hip.hipModuleUnload(other)
    _update_fails(exe, g2, R.hipGraphExecUpdateErrorUnsupportedFunctionChange, k2)


# -- hipGraphExecUpdate --------------------------------------------------------------------------------
def _chain(res, mod, kernel, a, b, c, out):
    g = res.graph()
    ca = hip.hipGraphAddMemcpyNode1D(g, None, a, np.arange(N, dtype=np.int32) * 3, NB, hip.hipMemcpyHostToDevice)
    cb = hip.hipGraphAddMemcpyNode1D(g, None, b, np.arange(N, dtype=np.int32), NB, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(g, [ca, cb], hip.hipKernelNodeParams(hip.hipModuleGetFunction(mod, kernel),
                                                                       N // 64, 64, 0, [a, b, c, N]))
    hip.hipGraphAddMemcpyNode1D(g, [k], out, c, NB, hip.hipMemcpyDeviceToHost)
    return g


def test_exec_update_success_takes_the_new_parameters(res, mod):
    s = res.stream()
    a, b, c = res.malloc(), res.malloc(), res.malloc()
    out1, out2 = np.zeros(N, np.int32), np.zeros(N, np.int32)
    g1 = _chain(res, mod, "vectorADD_i32", a, b, c, out1)
    exe = res.exe(g1)
    _run(exe, s)
    assert (out1 == np.arange(N) * 4).all()
    g2 = _chain(res, mod, "graph_vector_sub_i32", a, b, c, out2)
    assert hip.hipGraphExecUpdate(exe, g2) == (None, hip.hipGraphExecUpdateSuccess)
    out1[:] = 0
    _run(exe, s)
    assert (out2 == np.arange(N) * 2).all() and (out1 == 0).all()
    _run(res.exe(g1), s)                    # the graphs are unchanged
    assert (out1 == np.arange(N) * 4).all()


def _update_fails(exe, g, result, node="any"):
    with pytest.raises(hip.HipError) as ei:
        hip.hipGraphExecUpdate(exe, g)
    assert ei.value.error == E.hipErrorGraphExecUpdateFailure
    assert ei.value.updateResult_out == result
    if node != "any":
        assert ei.value.hErrorNode_out is node
    return ei.value


def test_exec_update_failures(res, mod):
    d, d2 = res.malloc(), res.malloc()
    h = np.zeros(N, np.int32)
    g = res.graph()
    a = hip.hipGraphAddMemcpyNode1D(g, None, d, h, NB, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemsetNode(g, [a], hip.hipMemsetParams(d2, 0, NB, 4))
    exe = res.exe(g)
    assert _err(hip.hipGraphExecUpdate, None, g) == E.hipErrorInvalidValue
    assert _err(hip.hipGraphExecUpdate, exe, None) == E.hipErrorInvalidValue
    # node count
    g1 = res.graph()
    hip.hipGraphAddMemcpyNode1D(g1, None, d, h, NB, hip.hipMemcpyHostToDevice)
    _update_fails(exe, g1, R.hipGraphExecUpdateErrorTopologyChanged, None)
    # node type
    g2 = res.graph()
    a2 = hip.hipGraphAddMemcpyNode1D(g2, None, d, h, NB, hip.hipMemcpyHostToDevice)
    host = hip.hipGraphAddHostNode(g2, [a2], hip.hipHostNodeParams(print))
    _update_fails(exe, g2, R.hipGraphExecUpdateErrorNodeTypeChanged, host)
    # memcpy kind
    g3 = res.graph()
    a3 = hip.hipGraphAddMemcpyNode1D(g3, None, d, h, NB, hip.hipMemcpyDefault)
    hip.hipGraphAddMemsetNode(g3, [a3], hip.hipMemsetParams(d2, 0, NB, 4))
    _update_fails(exe, g3, R.hipGraphExecUpdateErrorParametersChanged, a3)
    # dependencies
    g4 = res.graph()
    hip.hipGraphAddMemcpyNode1D(g4, None, d, h, NB, hip.hipMemcpyHostToDevice)
    m4 = hip.hipGraphAddMemsetNode(g4, None, hip.hipMemsetParams(d2, 0, NB, 4))
    _update_fails(exe, g4, R.hipGraphExecUpdateErrorTopologyChanged, m4)
    # another device
    hip.hipSetDevice(1)
    try:
        g5 = res.graph()
    finally:
        hip.hipSetDevice(0)
    a5 = hip.hipGraphAddMemcpyNode1D(g5, None, d, h, NB, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemsetNode(g5, [a5], hip.hipMemsetParams(d2, 0, NB, 4))
    _update_fails(exe, g5, R.hipGraphExecUpdateErrorUnsupportedFunctionChange, a5)
    # an event recorded by two nodes
    e = res.event()
    ge = res.graph()
    r1 = hip.hipGraphAddEventRecordNode(ge, None, e)
    hip.hipGraphAddEventRecordNode(ge, [r1], res.event())
    exe_e = res.exe(ge)
    ge2 = res.graph()
    r2 = hip.hipGraphAddEventRecordNode(ge2, None, e)
    hip.hipGraphAddEventRecordNode(ge2, [r2], e)
    _update_fails(exe_e, ge2, R.hipGraphExecUpdateErrorNotSupported, None)
    # a failed update changed nothing: the exec still copies into d and fills d2
    s = res.stream()
    h[:] = 5
    hip.hipMemset(d2, 0xff, NB)
    _run(exe, s)
    back = np.zeros(N, np.int32)
    hip.hipMemcpy(back, d, NB, hip.hipMemcpyDeviceToHost)
    assert (back == 5).all()
    hip.hipMemcpy(back, d2, NB, hip.hipMemcpyDeviceToHost)
    assert (back == 0).all()


def test_exec_update_with_child_graph_and_host_nodes(res, mod):
    s = res.stream()
    seen = []
    child = res.graph()
    hip.hipGraphAddHostNode(child, None, hip.hipHostNodeParams(seen.append, "old"))
    g = res.graph()
    hip.hipGraphAddChildGraphNode(g, None, child)
    exe = res.exe(g)
    c2 = res.graph()
    hip.hipGraphAddHostNode(c2, None, hip.hipHostNodeParams(seen.append, "new"))
    g2 = res.graph()
    hip.hipGraphAddChildGraphNode(g2, None, c2)
    hip.hipGraphExecUpdate(exe, g2)
    _run(exe, s)
    assert seen == ["new"]


def test_memcpy_params_give_back_a_sliced_host_array_as_passed(res):
    """GetParams of a copy from a slice of a host array gives that slice (not its base array, which
    moved the copy to byte 0 when the parameters were set back: review finding)."""
    s = res.stream()
    g = res.graph()
    dst = res.malloc()
    whole = np.arange(2 * N, dtype=np.int32)
    part = whole[N:]                                   # bytes NB.. of ``whole``
    cp = hip.hipGraphAddMemcpyNode1D(g, None, dst, part, NB, hip.hipMemcpyHostToDevice)
    p = hip.hipGraphMemcpyNodeGetParams(cp)
    assert p.src is part and p.dst == dst
    hip.hipGraphMemcpyNodeSetParams(cp, p)             # read, set back: the same copy
    exe = res.exe(g)
    _run(exe, s)
    out = np.zeros(N, np.int32)
    hip.hipMemcpy(out, dst, NB, hip.hipMemcpyDeviceToHost)
    assert (out == np.arange(N, 2 * N)).all()


def test_the_nodes_of_a_destroyed_graph_are_refused(res):
    """After hipGraphDestroy its nodes are not valid nodes (CLR: isNodeValid): every getter and setter
    refuses them with hipErrorInvalidValue (they were still accepted: review finding)."""
    g = hip.hipGraphCreate()
    calls = []
    host = hip.hipGraphAddHostNode(g, None, hip.hipHostNodeParams(calls.append, 1))
    fill = hip.hipGraphAddMemsetNode(g, None, hip.hipMemsetParams(res.malloc(), 0, NB, 4))
    hip.hipGraphDestroy(g)
    IV = hip.hipError_t.hipErrorInvalidValue
    assert _err(hip.hipGraphHostNodeGetParams, host) == IV
    assert _err(hip.hipGraphHostNodeSetParams, host, hip.hipHostNodeParams(calls.append, 2)) == IV
    assert _err(hip.hipGraphMemsetNodeGetParams, fill) == IV
    assert _err(hip.hipGraphNodeGetType, fill) == IV


def test_an_exec_whose_rebuild_failed_is_refused_at_launch_and_can_be_destroyed(res, monkeypatch):
    """A setter that must rebuild the exec and fails half way (out of signals or kernarg memory) leaves
    no replica naming freed signals behind: the exec refuses every later launch with an error, and
    hipGraphExecDestroy still works (review finding: the old plan stayed, its replicas released)."""
    from hostside.hsa import HsaError
    from shm_layout import layouts as L
    s = res.stream()
    g = res.graph()
    src, dst = res.malloc(), res.malloc()
    cp = hip.hipGraphAddMemcpyNode1D(g, None, dst, src, NB, hip.hipMemcpyDefault)
    exe = hip.hipGraphInstantiate(g)
    _run(exe, s)

    def no_room(*_a, **_k):
        raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, "no signal left (injected)")
    monkeypatch.setattr(type(exe.impl), "_build", no_room)
    host_src = np.full(N, 42, np.int32)                # pinned -> device: other ops, a rebuild
    with pytest.raises(hip.HipError):
        hip.hipGraphExecMemcpyNodeSetParams(exe, cp, hip.hipMemcpyNodeParams(dst, host_src, NB, hip.hipMemcpyDefault))
    monkeypatch.undo()
    with pytest.raises(hip.HipError, match="can only be destroyed"):
        hip.hipGraphLaunch(exe, s)
    hip.hipStreamSynchronize(s)
    hip.hipGraphExecDestroy(exe)
