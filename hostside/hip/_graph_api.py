"""Instantiate, launch and update executable graphs (``hipGraphExec_t``).

* **Instantiate** sorts the nodes topologically (inlining child graphs: ``_flatten``), expands them
  into ops, schedules them onto the stream's AQL queue, auxiliary AQL queues, the SDMA queue and the
  host, and pre-builds every packet and kernarg block (``_schedule``, ``_graph_exec``).
* **Launch** copies the pre-built packets into the rings and rings each doorbell once. On a capturing
  stream it adds the exec's graph, as it would run now, as a child graph node to the capture.

Kernel replay: a graph launch while the replay service is configured warns once, runs once, and is
reported as declined with reason ``graph_launch`` (see hipGraphLaunch).
"""
from __future__ import annotations

import heapq
import warnings

from .. import replay
from ._context import _get_stream, _peek_stream, _st
from ._errors import _api, _raise, hipError_t
from ._graph_build import _node_kernel_spec
from ._graph_exec import GraphExec
from ._graph_types import (_T, _TYPE_NAMES, ChildSpec, _graph, hipGraph_t, hipGraphNode_t,
                           hipKernelNodeParams)
from ._schedule import ENode
from ._stream import _event_rearm
from . import _graph_mem_run, _userobj

__all__ = ["hipGraphExec_t", "hipGraphInstantiate", "hipGraphInstantiateWithFlags", "hipGraphLaunch",
           "hipGraphExecDestroy", "hipGraphExecKernelNodeSetParams", "hipGraphNodeSetEnabled",
           "hipGraphNodeGetEnabled", "hipGraphUpload"]


def _replay_configured() -> bool:
    """True when the kernel-replay service is configured in this process: a graph launch then warns
    once and runs the graph once, never replayed (public rocprofiler-sdk behaviour)."""
    return replay.is_configured()


def _report_graph_decline(ex, stream) -> None:
    """One outcome line per graph launch under replay: declined, reason graph_launch."""
    replay.record_graph_launch(stream.device, len(getattr(ex, "order", ()) or ()))


_replay_warned = False


class hipGraphExec_t:
    """An instantiated graph; ``statistics()`` tells how it was scheduled."""

    def __init__(self, impl: GraphExec):
        self.impl = impl

    @property
    def destroyed(self) -> bool:
        return self.impl.destroyed

    def statistics(self):
        return self.impl.statistics()

    def __repr__(self):
        return f"<hipGraphExec_t nodes={len(self.impl.order)} launches={self.impl.launches}>"


def _toposort(g: hipGraph_t) -> list:
    """Kahn's algorithm (ties by node id); a cycle raises hipErrorInvalidValue naming it."""
    indeg = {n: len(n.deps) for n in g.nodes}
    ready = [n for n in g.nodes if not n.deps]
    out = []
    heap = [(n.id, n) for n in ready]
    heapq.heapify(heap)
    while heap:
        _i, n = heapq.heappop(heap)
        out.append(n)
        for s in n.succ:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (s.id, s))
    if len(out) != len(g.nodes):
        left = {n for n in g.nodes if indeg[n] > 0}
        # walk predecessors inside the leftover set until a node repeats: that is a cycle
        n = min(left, key=lambda x: x.id)
        path, seen = [], {}
        while n not in seen:
            seen[n] = len(path)
            path.append(n)
            n = next(d for d in n.deps if d in left)
        cyc = path[seen[n]:][::-1]
        k = cyc.index(min(cyc, key=lambda x: x.id))
        cyc = cyc[k:] + cyc[:k]                     # start at the lowest node id
        names = " -> ".join(f"node {x.id} ({_TYPE_NAMES.get(x.type, '?')})" for x in cyc + [cyc[0]])
        _raise(hipError_t.hipErrorInvalidValue, f"graph has a cycle: {names}")
    return out


def _flatten(g: hipGraph_t, entry: list, out: list) -> list:
    """Append the ENodes of ``g`` to ``out`` in topological order, with child graphs inlined: the
    roots of a child graph depend on what its node depends on, and the dependents of the node on the
    child's leaves (an empty child passes its dependencies through). ``entry``: the ENodes the roots
    of ``g`` depend on. Returns the ENodes that complete ``g``."""
    with g.lock:
        order = _toposort(g)
        done = {}                                   # node -> the ENodes that complete it
        for n in order:
            deps = list(dict.fromkeys(e for d in n.deps for e in done[d])) if n.deps else list(entry)
            if n.type == _T.hipGraphNodeTypeGraph:
                done[n] = _flatten(n.spec.graph, deps, out)
            else:
                en = ENode(n, n.spec)
                if n.type in _graph_mem_run.MEM_TYPES:  # the host's work at launch (_graph_mem_run)
                    en.type = _T.hipGraphNodeTypeEmpty
                en.deps = deps
                out.append(en)
                done[n] = [en]
        if not order:
            return list(entry)
        return list(dict.fromkeys(e for n in order if not n.succ for e in done[n]))


def _child_enodes(g: hipGraph_t, enodes: dict) -> dict:
    """Each child graph node of ``g`` (nested ones too) -> the ENodes its graph was inlined into, in
    the exec's order (as instantiated: later changes to the graphs do not change it)."""
    out = {}

    def walk(graph):
        inner = []
        for n in graph.nodes:
            if n.type == _T.hipGraphNodeTypeGraph:
                out[n] = walk(n.spec.graph)
                inner += out[n]
            else:
                inner.append(enodes[n])
        return inner
    walk(g)
    rank = {en: i for i, en in enumerate(enodes.values())}
    return {n: sorted(v, key=rank.__getitem__) for n, v in out.items()}


@_api
def hipGraphInstantiate(graph, flags: int = 0) -> hipGraphExec_t:
    """Topological sort (child graphs inlined), schedule, pre-built packets and kernarg blocks (see
    ``_schedule``)."""
    g = _graph(graph)
    _graph_mem_run.check_instantiate(g)
    order: list = []
    _flatten(g, [], order)
    enodes = {en.node: en for en in order}
    for en in enodes.values():
        if en.type == _T.hipGraphNodeTypeKernel and en.spec.f.module.co.unloaded:
            _raise(hipError_t.hipErrorInvalidDeviceFunction,
                   f"node {en.node.id}: the module of {en.spec.f.name} is unloaded")
    rec = [en.spec for en in enodes.values() if en.type == _T.hipGraphNodeTypeEventRecord]
    if len({id(e) for e in rec}) != len(rec):
        _raise(hipError_t.hipErrorInvalidValue, "an event may be recorded by at most one node of a graph")
    exe = hipGraphExec_t(GraphExec(_st().rt, g, list(enodes.values()), _event_rearm))
    exe.flags = flags                       # hipGraphExecGetFlags
    exe.impl.children = _child_enodes(g, enodes)    # hipGraphExecChildGraphNodeSetParams
    _userobj.retain_tree(g, exe)            # as CLR's exec owns a clone of the graph: its user objects
    _graph_mem_run.on_instantiate(g, exe, order)
    return exe


@_api
def hipGraphInstantiateWithFlags(graph, flags: int = 0) -> hipGraphExec_t:
    """``flags``: 0 or one of HIP's hipGraphInstantiateFlag* values (AutoFreeOnLaunch 1, Upload 2,
    DeviceLaunch 4, UseNodePriority 8; accepted, they change nothing here); anything else is
    hipErrorInvalidValue, as in CLR."""
    if type(flags) is not int or not 0 <= flags <= 8:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be a hipGraphInstantiateFlag value, not {flags!r}")
    return hipGraphInstantiate(graph, flags)


def _exec(e) -> GraphExec:
    if not isinstance(e, hipGraphExec_t) or e.impl.destroyed:
        _raise(hipError_t.hipErrorInvalidValue, f"graphExec must be a live hipGraphExec_t, not {e!r}")
    return e.impl


@_api
def hipGraphLaunch(graphExec, stream=None) -> None:
    """Launch on ``stream`` after everything earlier on it; later work on the stream waits for the
    whole graph. Host cost: a copy of the pre-built packets and one doorbell per queue."""
    global _replay_warned
    ex = _exec(graphExec)
    s = _get_stream(stream)
    dead = ex.unloaded_function()
    if dead is not None:
        _raise(hipError_t.hipErrorInvalidHandle, f"a kernel node launches {dead}, whose module was unloaded")
    if s.capture is not None:
        s.capture.add_child_graph(s, ChildSpec(_exec_graph(ex)))
        return
    if _replay_configured():
        if not _replay_warned:
            _replay_warned = True
            warnings.warn("kernel replay is configured but graph launches are not replayed: the graph runs once",
                          RuntimeWarning, stacklevel=2)
        _report_graph_decline(ex, s)
    token = _graph_mem_run.before_launch(graphExec, ex, s)
    try:
        ex.launch(s.vgpu)
    except BaseException:
        _graph_mem_run.launch_failed(token)
        raise
    _graph_mem_run.after_launch(token)


@_api
def hipGraphUpload(graphExec, stream=None) -> None:
    """Make ``graphExec`` ready to launch on ``stream``: its packets were built at instantiation, so
    nothing is left to upload; the arguments are checked as hipGraphLaunch checks them."""
    _exec(graphExec)
    _peek_stream(stream)


def _exec_graph(ex: GraphExec) -> hipGraph_t:
    """A new graph of what a launch of ``ex`` runs now: its (flattened) nodes with the parameters of
    the exec (exec updates included); a disabled node becomes an empty node."""
    g = hipGraph_t()
    with ex.lock:
        made = {}
        for en in ex.order:
            if en.enabled:
                n = g._add(en.type, [made[d] for d in en.deps], en.spec)
            else:
                n = g._add(_T.hipGraphNodeTypeEmpty, [made[d] for d in en.deps], None)
            made[en] = n
    return g


@_api
def hipGraphExecDestroy(graphExec) -> None:
    """Waits for the exec's launches in flight, then frees its signals, kernargs and staging, and releases
    its references to the graph's user objects (their destructors may run now, in this thread)."""
    _exec(graphExec).destroy()
    _userobj.release_all(graphExec)
    _graph_mem_run.on_exec_destroy(graphExec)


def _enode(ex, node, types=None):
    en = ex.enode.get(node) if isinstance(node, hipGraphNode_t) else None
    if en is not None and (node.graph is None or node.graph.destroyed):     # as CLR's isNodeValid
        _raise(hipError_t.hipErrorInvalidValue, f"node {node!r} was destroyed (or its graph was)")
    if en is None:
        _raise(hipError_t.hipErrorInvalidValue,
               f"node {node!r} is not a node of the graph this exec was instantiated from")
    if types is not None and en.type not in types:
        _raise(hipError_t.hipErrorInvalidValue,
               f"node {node!r} must be a {' or '.join(_TYPE_NAMES[t] for t in types)} node")
    return en


@_api
def hipGraphExecKernelNodeSetParams(graphExec, node, params: hipKernelNodeParams) -> None:
    """Changes the next launches of this exec only (waits for its launches in flight, then rewrites
    the node's kernarg block and packet); the graph and other execs keep their parameters."""
    ex = _exec(graphExec)
    en = _enode(ex, node, (_T.hipGraphNodeTypeKernel,))
    spec = _node_kernel_spec(params)
    ex.set_kernel(en, spec)


_ENABLE_TYPES = (_T.hipGraphNodeTypeKernel, _T.hipGraphNodeTypeMemcpy, _T.hipGraphNodeTypeMemset)


@_api
def hipGraphNodeSetEnabled(graphExec, node, isEnabled) -> None:
    """A disabled kernel node becomes an empty marker packet (copies and memsets copy 0 bytes), with
    its dependencies kept; takes effect from the next launch."""
    ex = _exec(graphExec)
    ex.set_enabled(_enode(ex, node, _ENABLE_TYPES), bool(isEnabled))


@_api
def hipGraphNodeGetEnabled(graphExec, node) -> bool:
    ex = _exec(graphExec)
    return _enode(ex, node, _ENABLE_TYPES).enabled
