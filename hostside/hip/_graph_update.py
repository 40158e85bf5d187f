"""Changing an instantiated graph (``hipGraphExec_t``) without re-instantiating it: the exec node
setters (host, memset, memcpy, event and child graph nodes) and ``hipGraphExecUpdate``, with CLR's
error codes (hip_graph.cpp).

Each change is made to the exec's own copy of the node (its ENode), never to the graph, and takes
effect from the next launch: the exec first waits for its launches in flight (as
``hipGraphExecKernelNodeSetParams``), then re-renders the packets of the nodes changed. A change that
alters what a node becomes (a copy between other kinds of memory: an SDMA copy instead of a staged or
host copy, or another staging size) rebuilds the exec's plans, replicas and kernarg blocks in place.
"""
from __future__ import annotations

import copy
import enum

from ._errors import HipError, _api, _raise, hipError_t
from ._graph_api import _enode, _exec, _flatten
from ._graph_nodeparams import host_spec, memcpy1d_args, memcpy1d_spec, memcpy_spec, memset_spec
from ._graph_build import _node_event
from ._graph_types import _T, _any_node, _graph, hipGraph_t, hipMemcpyNodeParams
from ._memory import _device_of, hipMemcpyKind
from ._schedule import _expand

__all__ = ["hipGraphExecUpdateResult", "hipGraphExecUpdateSuccess", "hipGraphExecUpdateError",
           "hipGraphExecUpdateErrorTopologyChanged", "hipGraphExecUpdateErrorNodeTypeChanged",
           "hipGraphExecUpdateErrorFunctionChanged", "hipGraphExecUpdateErrorParametersChanged",
           "hipGraphExecUpdateErrorNotSupported", "hipGraphExecUpdateErrorUnsupportedFunctionChange",
           "hipGraphExecHostNodeSetParams", "hipGraphExecMemsetNodeSetParams", "hipGraphExecMemcpyNodeSetParams",
           "hipGraphExecMemcpyNodeSetParams1D", "hipGraphExecEventRecordNodeSetEvent",
           "hipGraphExecEventWaitNodeSetEvent", "hipGraphExecChildGraphNodeSetParams", "hipGraphExecUpdate"]


class hipGraphExecUpdateResult(enum.IntEnum):
    hipGraphExecUpdateSuccess = 0
    hipGraphExecUpdateError = 1
    hipGraphExecUpdateErrorTopologyChanged = 2
    hipGraphExecUpdateErrorNodeTypeChanged = 3
    hipGraphExecUpdateErrorFunctionChanged = 4
    hipGraphExecUpdateErrorParametersChanged = 5
    hipGraphExecUpdateErrorNotSupported = 6
    hipGraphExecUpdateErrorUnsupportedFunctionChange = 7


_R = hipGraphExecUpdateResult
hipGraphExecUpdateSuccess = _R.hipGraphExecUpdateSuccess
hipGraphExecUpdateError = _R.hipGraphExecUpdateError
hipGraphExecUpdateErrorTopologyChanged = _R.hipGraphExecUpdateErrorTopologyChanged
hipGraphExecUpdateErrorNodeTypeChanged = _R.hipGraphExecUpdateErrorNodeTypeChanged
hipGraphExecUpdateErrorFunctionChanged = _R.hipGraphExecUpdateErrorFunctionChanged
hipGraphExecUpdateErrorParametersChanged = _R.hipGraphExecUpdateErrorParametersChanged
hipGraphExecUpdateErrorNotSupported = _R.hipGraphExecUpdateErrorNotSupported
hipGraphExecUpdateErrorUnsupportedFunctionChange = _R.hipGraphExecUpdateErrorUnsupportedFunctionChange

_COPIED = (_T.hipGraphNodeTypeKernel, _T.hipGraphNodeTypeMemcpy, _T.hipGraphNodeTypeMemset,
           _T.hipGraphNodeTypeHost)
_EVENTS = (_T.hipGraphNodeTypeEventRecord, _T.hipGraphNodeTypeWaitEvent)


# -- applying new specs to an exec ---------------------------------------------------------------------
def _rebuild(ex) -> None:
    """Build the exec's plans, replicas, staging and kernarg blocks again from its ENodes (their specs,
    enabled flags and dependencies as they are now). The caller holds ``ex.lock`` and has waited for
    the launches in flight; nothing outside the exec names its signals (the tail marker's signal is the
    stream's own), so the old replicas can go."""
    for p in ex.plans.values():
        for r in p.replicas:
            r.release()
    ex.plans = {}
    for en in ex.order:
        if en.own_karg:
            ex.rt.free(en.own_karg)
            en.own_karg = 0
        en.karg = en.karg_cap = 0
        en.stage_size = en.stage_off = 0
        en.stage_in = False
    if ex.karg_base:
        ex.rt.free(ex.karg_base)
        ex.karg_base = 0
    try:
        ex._build(ex.rt, ex.order)
    except BaseException:
        # the old replicas are gone and the new ones are not whole: the exec cannot be launched any
        # more (a launch is an error naming why), only destroyed
        ex.plans, ex.full = {}, None
        raise


def _set_ops(ex, en) -> bool:
    """Re-expand ``en`` after its spec changed; patch the ops of the existing plans when the node still
    becomes the same ops (same kinds, same staging). False: the exec must be rebuilt."""
    kinds, stage = [k for k, _ in en.ops], (en.stage_size, en.stage_in)
    en.stage_size, en.stage_in = 0, False
    en.ops = _expand(en, ex.rt)
    if [k for k, _ in en.ops] != kinds or (en.stage_size, en.stage_in) != stage:
        return False
    for p in ex.plans.values():
        mine = [op for op in p.ops if op.en is en]
        for op, (_kind, action) in zip(mine, en.ops):
            op.action = action
    return True


def apply_specs(ex, changes) -> None:
    """Give the exec's ENodes new specs: ``changes`` is [(ENode, spec)], each spec of its node's type
    (an event for event nodes). Waits for the exec's launches in flight first: launches made after
    this call see the new specs, those made before the old ones."""
    with ex.lock:
        ex.wait_idle()
        rebuild = False
        touched = []
        for en, spec in changes:
            t = en.type
            if t == _T.hipGraphNodeTypeKernel:
                ex.set_kernel(en, spec)           # kernarg block and packet (grows the block if needed)
            elif t in (_T.hipGraphNodeTypeMemcpy, _T.hipGraphNodeTypeHost):
                en.spec = spec
                if not _set_ops(ex, en):
                    rebuild = True
                touched.append(en)
            elif t in (_T.hipGraphNodeTypeMemset,) + _EVENTS:
                en.spec = spec
                touched.append(en)
        if rebuild:
            _rebuild(ex)
            return
        if any(en.type in _EVENTS for en in touched):
            ex.events = sorted({id(e.spec): e.spec for e in ex.ev_nodes}.values(), key=id)
        for en in touched:
            if en.type in _EVENTS:
                ex.bound[en] = en.spec.signal
            ex._rerender(en)


def _exec_node(graphExec, node, ntype):
    """(GraphExec, ENode) of a node of the graph ``graphExec`` was instantiated from."""
    ex = _exec(graphExec)
    _any_node(node)
    return ex, _enode(ex, node, (ntype,))


# -- exec node setters ---------------------------------------------------------------------------------
@_api
def hipGraphExecHostNodeSetParams(hGraphExec, node, params) -> None:
    """The exec's host node runs ``params.fn(params.userData)`` from the next launch on (the graph keeps
    its own parameters)."""
    spec = host_spec(params)
    ex, en = _exec_node(hGraphExec, node, _T.hipGraphNodeTypeHost)
    apply_specs(ex, [(en, spec)])


@_api
def hipGraphExecMemsetNodeSetParams(hGraphExec, node, params) -> None:
    """As CLR: a 2-D fill (height > 1) must keep the node's width in bytes and height; a 1-D one may
    change its size. The graph keeps its own parameters."""
    ex = _exec(hGraphExec)
    _any_node(node)
    spec = memset_spec(params)
    en = _enode(ex, node, (_T.hipGraphNodeTypeMemset,))
    old = en.spec
    if _device_of(spec.dst) != _device_of(old.dst):
        _raise(hipError_t.hipErrorInvalidValue, "an exec's memset node cannot move to memory of another device")
    if spec.rows > 1 and (spec.size != old.size or spec.rows != old.rows):
        _raise(hipError_t.hipErrorInvalidValue,
               f"a 2-D memset of an exec must keep its {old.size}-byte width and {old.rows} rows, "
               f"not {spec.size} and {spec.rows}")
    apply_specs(ex, [(en, spec)])


def _same_kind(en, kind) -> None:
    """As CLR, before the copy itself is checked: another kind is hipErrorInvalidValue."""
    try:
        k = hipMemcpyKind(kind)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"kind must be a hipMemcpyKind, not {kind!r}")
    if k != en.spec.kind:
        _raise(hipError_t.hipErrorInvalidValue,
               f"the copy kind of an exec's memcpy node cannot change ({en.spec.kind.name} -> {k.name})")


@_api
def hipGraphExecMemcpyNodeSetParams(hGraphExec, node, params) -> None:
    """The copy kind must stay the one the node was instantiated with (hipErrorInvalidValue, as CLR)."""
    ex = _exec(hGraphExec)
    _any_node(node)
    en = _enode(ex, node, (_T.hipGraphNodeTypeMemcpy,))
    if isinstance(params, hipMemcpyNodeParams):
        _same_kind(en, params.kind)
    apply_specs(ex, [(en, memcpy_spec(params))])


@_api
def hipGraphExecMemcpyNodeSetParams1D(hGraphExec, node, dst, src, count: int, kind) -> None:
    """The copy kind must stay the one the node was instantiated with (hipErrorInvalidValue, as CLR)."""
    ex = _exec(hGraphExec)
    _any_node(node)
    memcpy1d_args(dst, src, count)
    en = _enode(ex, node, (_T.hipGraphNodeTypeMemcpy,))
    _same_kind(en, kind)
    apply_specs(ex, [(en, memcpy1d_spec(dst, src, count, kind))])


def _event_node_set(hGraphExec, node, event, ntype) -> None:
    ex = _exec(hGraphExec)
    n = _any_node(node)
    if n.type != ntype:
        what = "event record" if ntype == _T.hipGraphNodeTypeEventRecord else "event wait"
        _raise(hipError_t.hipErrorInvalidValue, f"node must be an {what} node, not {n!r}")
    ev = _node_event(event)
    en = _enode(ex, node, (ntype,))
    if ntype == _T.hipGraphNodeTypeEventRecord and any(o is not en and o.spec is ev for o in ex.evrec):
        _raise(hipError_t.hipErrorInvalidValue, "an event may be recorded by at most one node of an exec")
    apply_specs(ex, [(en, ev)])


@_api
def hipGraphExecEventRecordNodeSetEvent(hGraphExec, hNode, event) -> None:
    """From the next launch on, the exec's node records ``event`` (the graph's node keeps its event)."""
    _event_node_set(hGraphExec, hNode, event, _T.hipGraphNodeTypeEventRecord)


@_api
def hipGraphExecEventWaitNodeSetEvent(hGraphExec, hNode, event) -> None:
    """From the next launch on, the exec's node waits for ``event`` (the graph's node keeps its event)."""
    _event_node_set(hGraphExec, hNode, event, _T.hipGraphNodeTypeWaitEvent)


def _flat(g: hipGraph_t) -> list:
    out: list = []
    _flatten(g, [], out)
    return out


def _new_spec(en):
    """The spec an exec node takes from the node ``en`` of another graph (a copy; events are shared)."""
    return copy.copy(en.spec) if en.type in _COPIED else en.spec


@_api
def hipGraphExecChildGraphNodeSetParams(hGraphExec, node, childGraph) -> None:
    """The exec's copy of the child graph node ``node`` takes the parameters of ``childGraph``'s nodes.
    As CLR: ``childGraph`` must have the topology of the node's graph (as many nodes, of the same types,
    in topological order; child graphs inlined here), else hipErrorUnknown; the graph that holds
    ``node`` itself is hipErrorUnknown; no exec, node or graph is hipErrorInvalidValue."""
    ex = _exec(hGraphExec)
    n = _any_node(node)
    if childGraph is None:
        _raise(hipError_t.hipErrorInvalidValue, "childGraph must be a hipGraph_t, not None")
    cg = _graph(childGraph)
    if n.type != _T.hipGraphNodeTypeGraph:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a child graph node, not {n!r}")
    if cg is n.graph:
        _raise(hipError_t.hipErrorUnknown, "childGraph is the graph that holds node")
    new = _flat(cg)
    cur = _flat(n.spec.graph)
    if len(new) != len(cur) or any(a.type != b.type for a, b in zip(new, cur)):
        _raise(hipError_t.hipErrorUnknown, f"{cg!r} does not have the topology of the node's graph")
    mine = getattr(ex, "children", {}).get(n)
    if mine is None:
        _raise(hipError_t.hipErrorInvalidValue,
               f"node {n!r} is not a node of the graph this exec was instantiated from")
    if len(mine) != len(new) or any(a.type != b.type for a, b in zip(mine, new)):
        _raise(hipError_t.hipErrorUnknown, f"{cg!r} does not have the topology the exec's child graph has")
    _check_events(ex, {en: b for en, b in zip(mine, new) if en.type == _T.hipGraphNodeTypeEventRecord},
                  lambda msg: _raise(hipError_t.hipErrorInvalidValue, msg))
    apply_specs(ex, [(en, _new_spec(b)) for en, b in zip(mine, new)])


def _check_events(ex, records: dict, fail) -> None:
    """Records {exec ENode: new ENode}: after the change, no event may be recorded by two nodes."""
    events = [records[en].spec if en in records else en.spec for en in ex.evrec]
    if len({id(e) for e in events}) != len(events):
        fail("an event may be recorded by at most one node of an exec")


# -- hipGraphExecUpdate --------------------------------------------------------------------------------
def _fail(result, node, msg):
    try:
        _raise(hipError_t.hipErrorGraphExecUpdateFailure, f"{result.name}: {msg}")
    except HipError as exc:
        exc.hErrorNode_out, exc.updateResult_out = node, result
        raise


@_api
def hipGraphExecUpdate(hGraphExec, hGraph) -> tuple:
    """Give ``hGraphExec`` the node parameters of ``hGraph`` when it has the exec's topology; returns
    ``(hErrorNode_out, updateResult_out)``, ``(None, hipGraphExecUpdateSuccess)``. The nodes are matched
    in topological order (child graphs inlined). A failure raises hipErrorGraphExecUpdateFailure and
    changes nothing; the HipError carries ``hErrorNode_out`` (the node of ``hGraph``, or None) and
    ``updateResult_out``, as CLR sets them:

    * another node count: ErrorTopologyChanged, no node;
    * another node type: ErrorNodeTypeChanged;
    * a graph created on another device (not for host and empty nodes): ErrorUnsupportedFunctionChange;
    * another memcpy kind: ErrorParametersChanged;
    * other dependencies: ErrorTopologyChanged (CLR compares their number only; hdemu the nodes);
    * a kernel of an unloaded module: ErrorUnsupportedFunctionChange; an event recorded by two nodes:
      ErrorNotSupported.

    No exec or graph is hipErrorInvalidValue. Like the exec setters, the update waits for the exec's
    launches in flight and takes effect from the next launch; the graph is not changed."""
    if hGraphExec is None or hGraph is None:
        _raise(hipError_t.hipErrorInvalidValue, "hGraphExec and hGraph must be given")
    ex = _exec(hGraphExec)
    g = _graph(hGraph)
    new = _flat(g)
    old = ex.order
    if len(new) != len(old):
        _fail(_R.hipGraphExecUpdateErrorTopologyChanged, None,
              f"{g!r} has {len(new)} nodes (inlined), the exec {len(old)}")
    pos_new = {en: i for i, en in enumerate(new)}
    pos_old = {en: i for i, en in enumerate(old)}
    dev_old = getattr(ex.graph, "device", None)
    for a, b in zip(old, new):
        if a.type != b.type:
            _fail(_R.hipGraphExecUpdateErrorNodeTypeChanged, b.node,
                  f"node {b.node.id} is a {b.type.name}, the exec's a {a.type.name}")
        dev = b.node.graph.device if b.node.graph is not None else None
        if a.type not in (_T.hipGraphNodeTypeHost, _T.hipGraphNodeTypeEmpty) and \
                None not in (dev, dev_old) and dev != dev_old:
            _fail(_R.hipGraphExecUpdateErrorUnsupportedFunctionChange, b.node,
                  f"node {b.node.id} belongs to a graph of device {dev}, the exec to device {dev_old}")
        if a.type == _T.hipGraphNodeTypeMemcpy and a.spec.kind != b.spec.kind:
            _fail(_R.hipGraphExecUpdateErrorParametersChanged, b.node,
                  f"node {b.node.id} copies {b.spec.kind.name}, the exec's {a.spec.kind.name}")
        if sorted(pos_new[d] for d in b.deps) != sorted(pos_old[d] for d in a.deps):
            _fail(_R.hipGraphExecUpdateErrorTopologyChanged, b.node,
                  f"node {b.node.id} has other dependencies than the exec's node")
        if a.type == _T.hipGraphNodeTypeKernel and b.spec.f.module.co.unloaded:
            _fail(_R.hipGraphExecUpdateErrorUnsupportedFunctionChange, b.node,
                  f"node {b.node.id}: the module of {b.spec.f.name} is unloaded")
    recs = {a: b for a, b in zip(old, new) if a.type == _T.hipGraphNodeTypeEventRecord}
    _check_events(ex, recs, lambda msg: _fail(_R.hipGraphExecUpdateErrorNotSupported, None, msg))
    apply_specs(ex, [(a, _new_spec(b)) for a, b in zip(old, new)])
    return None, hipGraphExecUpdateSuccess
