"""HIP graphs: stream capture, explicit construction, instantiate and launch (re-exported by hostside.hip).

* A **graph** (``hipGraph_t``) is nodes plus dependency edges. Nodes: kernel, memcpy (1-D), memset,
  host function, empty, event record, event wait.
* **Stream capture** (``hostside.graph_capture``) turns the work issued on a capturing stream into
  nodes, with fork/join across streams through events, and the capture errors and modes of HIP.
* **Instantiate** (``hipGraphExec_t``) sorts the nodes topologically, expands them into ops, schedules
  them onto the stream's AQL queue, auxiliary AQL queues, the SDMA queue and the host, and pre-builds
  every packet and kernarg block (``hostside.graph_exec``; its module docstring has the rationale).
* **Launch** copies the pre-built packets into the rings and rings each doorbell once.

Kernel replay: a graph launch while the replay service is configured warns once, runs once, and is
reported as declined with reason ``graph_launch`` (see hipGraphLaunch).
"""
from __future__ import annotations

import enum
import heapq
import itertools
import struct
import threading
import warnings

import numpy as np

from . import graph_exec as _gx
from .graph_exec import CopySpec, FillSpec, HostSpec, KernelSpec
from .hsa import HsaError

__all__ = [
    "hipStreamCaptureMode", "hipStreamCaptureModeGlobal", "hipStreamCaptureModeThreadLocal",
    "hipStreamCaptureModeRelaxed", "hipStreamCaptureStatus", "hipStreamCaptureStatusNone",
    "hipStreamCaptureStatusActive", "hipStreamCaptureStatusInvalidated", "hipGraphNodeType",
    "hipEventRecordDefault", "hipEventRecordExternal", "hipEventWaitDefault", "hipEventWaitExternal",
    "hipGraph_t", "hipGraphNode_t", "hipGraphExec_t", "hipKernelNodeParams", "hipMemcpyNodeParams",
    "hipMemsetParams", "hipHostNodeParams",
    "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
    "hipThreadExchangeStreamCaptureMode", "hipEventRecordWithFlags",
    "hipGraphCreate", "hipGraphDestroy", "hipGraphAddKernelNode", "hipGraphAddMemcpyNode",
    "hipGraphAddMemcpyNode1D", "hipGraphAddMemsetNode", "hipGraphAddHostNode", "hipGraphAddEmptyNode",
    "hipGraphAddEventRecordNode", "hipGraphAddEventWaitNode", "hipGraphAddDependencies",
    "hipGraphRemoveDependencies", "hipGraphGetNodes", "hipGraphGetRootNodes", "hipGraphGetEdges",
    "hipGraphNodeGetType", "hipGraphNodeGetDependencies", "hipGraphNodeGetDependentNodes",
    "hipGraphKernelNodeGetParams", "hipGraphKernelNodeSetParams", "hipGraphInstantiate",
    "hipGraphInstantiateWithFlags", "hipGraphLaunch", "hipGraphExecDestroy",
    "hipGraphExecKernelNodeSetParams", "hipGraphNodeSetEnabled", "hipGraphNodeGetEnabled",
    "hipGraphDebugDotPrint",
]


def _replay_configured() -> bool:
    """True when the kernel-replay service is configured in this process: a graph launch then warns
    once and runs the graph once, never replayed (public rocprofiler-sdk behaviour)."""
    from . import replay
    return replay.is_configured()


def _report_graph_decline(ex, stream) -> None:
    """One outcome line per graph launch under replay: declined, reason graph_launch."""
    from . import replay
    replay.record_graph_launch(stream.device, len(getattr(ex, "order", ()) or ()))


_replay_warned = False

_hip = None


def _H():
    """hostside.hip, imported late: it imports this module at its end."""
    global _hip
    if _hip is None:
        from . import hip
        _hip = hip
    return _hip


def _err(name: str, msg: str):
    h = _H()
    h._raise(h.hipError_t[name], msg)


def _api(fn):
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HsaError as exc:
            raise _H()._from_hsa(exc) from None
        except Exception as exc:
            h = _H()
            if isinstance(exc, h.HipError):
                h._set_last(exc.error)
            raise
    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


# -- enums -----------------------------------------------------------------------------------------
class hipStreamCaptureMode(enum.IntEnum):
    hipStreamCaptureModeGlobal = 0
    hipStreamCaptureModeThreadLocal = 1
    hipStreamCaptureModeRelaxed = 2


class hipStreamCaptureStatus(enum.IntEnum):
    hipStreamCaptureStatusNone = 0
    hipStreamCaptureStatusActive = 1
    hipStreamCaptureStatusInvalidated = 2


class hipGraphNodeType(enum.IntEnum):
    hipGraphNodeTypeKernel = 0
    hipGraphNodeTypeMemcpy = 1
    hipGraphNodeTypeMemset = 2
    hipGraphNodeTypeHost = 3
    hipGraphNodeTypeGraph = 4
    hipGraphNodeTypeEmpty = 5
    hipGraphNodeTypeWaitEvent = 6
    hipGraphNodeTypeEventRecord = 7


hipStreamCaptureModeGlobal = hipStreamCaptureMode.hipStreamCaptureModeGlobal
hipStreamCaptureModeThreadLocal = hipStreamCaptureMode.hipStreamCaptureModeThreadLocal
hipStreamCaptureModeRelaxed = hipStreamCaptureMode.hipStreamCaptureModeRelaxed
hipStreamCaptureStatusNone = hipStreamCaptureStatus.hipStreamCaptureStatusNone
hipStreamCaptureStatusActive = hipStreamCaptureStatus.hipStreamCaptureStatusActive
hipStreamCaptureStatusInvalidated = hipStreamCaptureStatus.hipStreamCaptureStatusInvalidated
hipEventRecordDefault, hipEventRecordExternal = 0, 1
hipEventWaitDefault, hipEventWaitExternal = 0, 1

_T = hipGraphNodeType
_TYPE_NAMES = {_T.hipGraphNodeTypeKernel: "kernel", _T.hipGraphNodeTypeMemcpy: "memcpy",
               _T.hipGraphNodeTypeMemset: "memset", _T.hipGraphNodeTypeHost: "host",
               _T.hipGraphNodeTypeEmpty: "empty", _T.hipGraphNodeTypeWaitEvent: "event wait",
               _T.hipGraphNodeTypeEventRecord: "event record"}


# -- parameter objects -------------------------------------------------------------------------------
def _dim3(d, what):
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        d = (int(d),)
    try:
        t = tuple(int(x) for x in d) + (1, 1, 1)
    except (TypeError, ValueError):
        t = None
    if t is None or len(t) > 6 or any(x <= 0 for x in t[:3]):
        _err("hipErrorInvalidValue", f"{what} must be a positive int or up to 3 positive ints, not {d!r}")
    return t[:3]


class hipKernelNodeParams:
    """Like hipKernelNodeParams: ``gridDim`` counts blocks, ``kernelParams`` is a sequence of values."""

    def __init__(self, func=None, gridDim=(1, 1, 1), blockDim=(1, 1, 1), sharedMemBytes=0,
                 kernelParams=None, extra=None):
        self.func, self.gridDim, self.blockDim = func, gridDim, blockDim
        self.sharedMemBytes, self.kernelParams, self.extra = sharedMemBytes, kernelParams, extra

    def __repr__(self):
        return (f"hipKernelNodeParams(func={self.func!r}, gridDim={self.gridDim}, blockDim={self.blockDim}, "
                f"sharedMemBytes={self.sharedMemBytes}, kernelParams={self.kernelParams!r})")


class hipMemcpyNodeParams:
    """A 1-D copy: ``size`` bytes from ``src`` to ``dst`` (device/pinned pointers or host arrays)."""

    def __init__(self, dst=None, src=None, size=0, kind=4):
        self.dst, self.src, self.size, self.kind = dst, src, size, kind


class hipMemsetParams:
    """A 1-D fill: ``size`` bytes at ``dst`` with ``value`` as ``elementSize``-byte elements (1, 2, 4)."""

    def __init__(self, dst=0, value=0, size=0, elementSize=1):
        self.dst, self.value, self.size, self.elementSize = dst, value, size, elementSize


class hipHostNodeParams:
    def __init__(self, fn=None, userData=None):
        self.fn, self.userData = fn, userData


def _kernel_spec(f, params, grid_blocks, block, shared) -> KernelSpec:
    h = _H()
    if type(f) is not h.hipFunction_t:
        _err("hipErrorInvalidDeviceFunction", f"func must be a hipFunction_t, not {f!r}")
    if f.module.co.unloaded:
        _err("hipErrorInvalidDeviceFunction", f"the module of {f.name} is unloaded")
    g = _dim3(grid_blocks, "gridDim")
    b = _dim3(block, "blockDim")
    if not isinstance(shared, (int, np.integer)) or shared < 0:
        _err("hipErrorInvalidValue", f"sharedMemBytes must be a non-negative int, not {shared!r}")
    sig = f.sig
    params = tuple(params) if params is not None else ()
    if len(params) != len(sig.args):
        _err("hipErrorInvalidValue", f"{f.name} takes {len(sig.args)} arguments ({sig.text}), not {len(params)}")
    params = tuple(h._pack_value(v, a[2], a[0]) for v, a in zip(params, sig.args))
    grid = (g[0] * b[0], g[1] * b[1], g[2] * b[2])
    return _spec_from_launch(f, params, grid, b, int(shared))


def _spec_from_launch(f, params, grid, block, shared, dims=None) -> KernelSpec:
    try:
        kargs = f.sig.struct.pack(*params) if f.sig.size else b""
    except struct.error as exc:
        _err("hipErrorInvalidValue", f"{f.name}({f.sig.text}): bad argument: {exc}")
    if dims is None:
        dims = 3 if grid[2] > 1 else (2 if grid[1] > 1 else 1)
    return KernelSpec(f, tuple(params), kargs, tuple(grid), tuple(block), shared, dims)


def _copy_spec(dst, src, size, kind) -> CopySpec:
    h = _H()
    if not isinstance(size, (int, np.integer)) or size <= 0:
        _err("hipErrorInvalidValue", f"size must be a positive int, not {size!r}")
    try:
        kind = h.hipMemcpyKind(kind)
    except ValueError:
        _err("hipErrorInvalidMemcpyDirection", f"kind must be a hipMemcpyKind, not {kind!r}")
    dk, d = h._classify(dst, size, "dst")
    sk, s = h._classify(src, size, "src")
    if kind != h.hipMemcpyKind.hipMemcpyDefault:
        okd, oks = h._KIND_OK[kind]
        if dk not in okd or sk not in oks:
            _err("hipErrorInvalidMemcpyDirection", f"{kind.name} cannot copy from {sk} memory to {dk} memory")
    if dk == "pageable" and not d.flags.writeable:
        _err("hipErrorInvalidValue", "dst host buffer is read-only")
    return CopySpec(d, s, int(size), dk, sk, kind)


def _fill_spec(dst, value, size, width=1) -> FillSpec:
    h = _H()
    if width not in (1, 2, 4):
        _err("hipErrorInvalidValue", f"elementSize must be 1, 2 or 4, not {width!r}")
    if not isinstance(value, (int, np.integer)):
        _err("hipErrorInvalidValue", f"value must be an int, not {value!r}")
    if not isinstance(size, (int, np.integer)) or size <= 0 or size % width:
        _err("hipErrorInvalidValue", f"size must be a positive multiple of elementSize {width}, not {size!r}")
    dk, d = h._classify(dst, int(size), "dst")
    if dk == "pageable":
        _err("hipErrorInvalidValue", "a memset node needs a device or pinned host pointer")
    return FillSpec(d, int(value) & ((1 << (8 * width)) - 1), int(size), width)


# -- graphs ------------------------------------------------------------------------------------------
class hipGraphNode_t:
    __slots__ = ("graph", "id", "type", "spec", "deps", "succ", "__weakref__")

    def __init__(self, graph, nid, ntype, spec):
        self.graph, self.id, self.type, self.spec = graph, nid, hipGraphNodeType(ntype), spec
        self.deps: list[hipGraphNode_t] = []
        self.succ: list[hipGraphNode_t] = []

    def label(self) -> str:
        t, c = self.type, self.spec
        if t == _T.hipGraphNodeTypeKernel:
            return f"{self.id}: kernel {c.f.name}\\ngrid {'x'.join(map(str, c.grid))} block {'x'.join(map(str, c.block))}"
        if t == _T.hipGraphNodeTypeMemcpy:
            return f"{self.id}: memcpy {c.size} B\\n{c.sk} -> {c.dk}"
        if t == _T.hipGraphNodeTypeMemset:
            return f"{self.id}: memset {c.size} B = {c.value:#x}"
        if t == _T.hipGraphNodeTypeHost:
            return f"{self.id}: host {getattr(c.fn, '__name__', 'fn')}"
        return f"{self.id}: {_TYPE_NAMES.get(t, t.name)}"

    def __repr__(self):
        return f"<hipGraphNode_t {self.label().replace(chr(92) + 'n', ', ')}>"


class hipGraph_t:
    _ids = itertools.count(1)

    def __init__(self):
        self.nodes: list[hipGraphNode_t] = []
        self.destroyed = False
        self.gid = next(self._ids)
        self.lock = threading.Lock()

    def _add(self, ntype, deps, spec) -> hipGraphNode_t:
        deps = _node_list(deps, "dependencies")
        seen = set()
        for d in deps:
            if d.graph is not self:
                _err("hipErrorInvalidValue", f"dependency {d!r} belongs to another graph")
            if id(d) in seen:
                _err("hipErrorInvalidValue", f"dependency {d!r} is listed twice")
            seen.add(id(d))
        with self.lock:
            n = hipGraphNode_t(self, len(self.nodes), ntype, spec)
            n.deps = list(deps)
            for d in deps:
                d.succ.append(n)
            self.nodes.append(n)
        return n

    def __repr__(self):
        return f"<hipGraph_t #{self.gid} nodes={len(self.nodes)}>"


def _node_list(x, what) -> list:
    if x is None:
        return []
    if isinstance(x, hipGraphNode_t):
        return [x]
    try:
        out = list(x)
    except TypeError:
        _err("hipErrorInvalidValue", f"{what} must be a node or a sequence of nodes, not {x!r}")
    for n in out:
        if not isinstance(n, hipGraphNode_t):
            _err("hipErrorInvalidValue", f"{what} must hold hipGraphNode_t, not {n!r}")
    return out


def _graph(g) -> hipGraph_t:
    if not isinstance(g, hipGraph_t) or g.destroyed:
        _err("hipErrorInvalidValue", f"graph must be a live hipGraph_t, not {g!r}")
    return g


def _node(g, n) -> hipGraphNode_t:
    if not isinstance(n, hipGraphNode_t) or n.graph is not g:
        _err("hipErrorInvalidValue", f"node must be a hipGraphNode_t of {g!r}, not {n!r}")
    return n


@_api
def hipGraphCreate(flags: int = 0) -> hipGraph_t:
    if flags:
        _err("hipErrorInvalidValue", f"flags must be 0, not {flags!r}")
    return hipGraph_t()


@_api
def hipGraphDestroy(graph) -> None:
    """Execs instantiated from the graph stay valid (they own copies of what they need)."""
    _graph(graph).destroyed = True


@_api
def hipGraphAddKernelNode(graph, dependencies, params: hipKernelNodeParams) -> hipGraphNode_t:
    g = _graph(graph)
    if not isinstance(params, hipKernelNodeParams):
        _err("hipErrorInvalidValue", f"params must be a hipKernelNodeParams, not {params!r}")
    if params.extra is not None:
        _err("hipErrorNotSupported", "the extra argument is not supported; pass kernelParams")
    spec = _kernel_spec(params.func, params.kernelParams, params.gridDim, params.blockDim, params.sharedMemBytes)
    return g._add(_T.hipGraphNodeTypeKernel, dependencies, spec)


@_api
def hipGraphAddMemcpyNode(graph, dependencies, params: hipMemcpyNodeParams) -> hipGraphNode_t:
    g = _graph(graph)
    if not isinstance(params, hipMemcpyNodeParams):
        _err("hipErrorInvalidValue", f"params must be a hipMemcpyNodeParams, not {params!r}")
    return g._add(_T.hipGraphNodeTypeMemcpy, dependencies,
                  _copy_spec(params.dst, params.src, params.size, params.kind))


@_api
def hipGraphAddMemcpyNode1D(graph, dependencies, dst, src, count: int, kind) -> hipGraphNode_t:
    return hipGraphAddMemcpyNode(graph, dependencies, hipMemcpyNodeParams(dst, src, count, kind))


@_api
def hipGraphAddMemsetNode(graph, dependencies, params: hipMemsetParams) -> hipGraphNode_t:
    g = _graph(graph)
    if not isinstance(params, hipMemsetParams):
        _err("hipErrorInvalidValue", f"params must be a hipMemsetParams, not {params!r}")
    return g._add(_T.hipGraphNodeTypeMemset, dependencies,
                  _fill_spec(params.dst, params.value, params.size, params.elementSize))


@_api
def hipGraphAddHostNode(graph, dependencies, params: hipHostNodeParams) -> hipGraphNode_t:
    """``fn(userData)`` runs on the runtime's async-handler thread once the dependencies are done."""
    g = _graph(graph)
    if not isinstance(params, hipHostNodeParams) or not callable(params.fn):
        _err("hipErrorInvalidValue", f"params must be a hipHostNodeParams with a callable fn, not {params!r}")
    return g._add(_T.hipGraphNodeTypeHost, dependencies, HostSpec(params.fn, params.userData))


@_api
def hipGraphAddEmptyNode(graph, dependencies) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeEmpty, dependencies, None)


@_api
def hipGraphAddEventRecordNode(graph, dependencies, event) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeEventRecord, dependencies, _H()._event(event))


@_api
def hipGraphAddEventWaitNode(graph, dependencies, event) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeWaitEvent, dependencies, _H()._event(event))


def _edges(g, from_, to):
    a, b = _node_list(from_, "from"), _node_list(to, "to")
    if len(a) != len(b):
        _err("hipErrorInvalidValue", f"from and to must have the same length, not {len(a)} and {len(b)}")
    return [(_node(g, x), _node(g, y)) for x, y in zip(a, b)]


@_api
def hipGraphAddDependencies(graph, from_, to) -> None:
    """Add edges from[i] -> to[i] (nodes or equal-length sequences of nodes)."""
    g = _graph(graph)
    pairs = _edges(g, from_, to)
    with g.lock:
        for x, y in pairs:
            if x is y:
                _err("hipErrorInvalidValue", f"a node cannot depend on itself: {x!r}")
            if x in y.deps:
                _err("hipErrorInvalidValue", f"edge {x.id} -> {y.id} already exists")
        for x, y in pairs:
            y.deps.append(x)
            x.succ.append(y)


@_api
def hipGraphRemoveDependencies(graph, from_, to) -> None:
    g = _graph(graph)
    pairs = _edges(g, from_, to)
    with g.lock:
        for x, y in pairs:
            if x not in y.deps:
                _err("hipErrorInvalidValue", f"there is no edge {x.id} -> {y.id}")
        for x, y in pairs:
            y.deps.remove(x)
            x.succ.remove(y)


@_api
def hipGraphGetNodes(graph) -> list:
    return list(_graph(graph).nodes)


@_api
def hipGraphGetRootNodes(graph) -> list:
    return [n for n in _graph(graph).nodes if not n.deps]


@_api
def hipGraphGetEdges(graph) -> tuple[list, list]:
    g = _graph(graph)
    pairs = [(d, n) for n in g.nodes for d in n.deps]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@_api
def hipGraphNodeGetType(node) -> hipGraphNodeType:
    return _any_node(node).type


def _any_node(node) -> hipGraphNode_t:
    if not isinstance(node, hipGraphNode_t):
        _err("hipErrorInvalidValue", f"node must be a hipGraphNode_t, not {node!r}")
    return node


@_api
def hipGraphNodeGetDependencies(node) -> list:
    return list(_any_node(node).deps)


@_api
def hipGraphNodeGetDependentNodes(node) -> list:
    return list(_any_node(node).succ)


def _kernel_node(node) -> hipGraphNode_t:
    if not isinstance(node, hipGraphNode_t) or node.type != _T.hipGraphNodeTypeKernel:
        _err("hipErrorInvalidValue", f"node must be a kernel node, not {node!r}")
    return node


@_api
def hipGraphKernelNodeGetParams(node) -> hipKernelNodeParams:
    c = _kernel_node(node).spec
    return hipKernelNodeParams(c.f, tuple(g // b for g, b in zip(c.grid, c.block)), c.block, c.shared,
                               list(c.params))


@_api
def hipGraphKernelNodeSetParams(node, params: hipKernelNodeParams) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = _kernel_node(node)
    n.spec = _kernel_spec(params.func, params.kernelParams, params.gridDim, params.blockDim,
                          params.sharedMemBytes)


@_api
def hipGraphDebugDotPrint(graph, path: str, flags: int = 0) -> None:
    """Write the graph in Graphviz dot: one box per node (id, type, parameters), one arrow per edge."""
    g = _graph(graph)
    lines = [f'digraph "hipGraph_{g.gid}" {{', "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    for n in g.nodes:
        shape = "ellipse" if n.type in (_T.hipGraphNodeTypeEmpty, _T.hipGraphNodeTypeEventRecord,
                                        _T.hipGraphNodeTypeWaitEvent) else "box"
        lines.append(f'  n{n.id} [label="{n.label()}", shape={shape}];')
    for n in g.nodes:
        for d in n.deps:
            lines.append(f"  n{d.id} -> n{n.id};")
    lines.append("}")
    try:
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as exc:
        _err("hipErrorInvalidValue", f"cannot write {path!r}: {exc}")


# -- instantiate and launch ---------------------------------------------------------------------------
class hipGraphExec_t:
    """An instantiated graph; ``statistics()`` tells how it was scheduled."""

    def __init__(self, impl: _gx.GraphExec):
        self.impl = impl

    @property
    def destroyed(self) -> bool:
        return self.impl.destroyed

    def statistics(self) -> dict:
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
        _err("hipErrorInvalidValue", f"graph has a cycle: {names}")
    return out


@_api
def hipGraphInstantiate(graph, flags: int = 0) -> hipGraphExec_t:
    """Topological sort, schedule, pre-built packets and kernarg blocks (see hostside.graph_exec)."""
    g = _graph(graph)
    with g.lock:
        order = _toposort(g)
        enodes = {}
        for n in order:
            en = _gx.ENode(n, n.spec)
            en.deps = [enodes[d] for d in n.deps]
            enodes[n] = en
    for en in enodes.values():
        if en.type == _T.hipGraphNodeTypeKernel and en.spec.f.module.co.unloaded:
            _err("hipErrorInvalidDeviceFunction", f"node {en.node.id}: the module of {en.spec.f.name} is unloaded")
    rec = [en.spec for en in enodes.values() if en.type == _T.hipGraphNodeTypeEventRecord]
    if len({id(e) for e in rec}) != len(rec):
        _err("hipErrorInvalidValue", "an event may be recorded by at most one node of a graph")
    h = _H()
    return hipGraphExec_t(_gx.GraphExec(h._st().rt, g, list(enodes.values()), h._event_rearm))


@_api
def hipGraphInstantiateWithFlags(graph, flags: int = 0) -> hipGraphExec_t:
    return hipGraphInstantiate(graph, flags)


def _exec(e) -> _gx.GraphExec:
    if not isinstance(e, hipGraphExec_t) or e.impl.destroyed:
        _err("hipErrorInvalidValue", f"graphExec must be a live hipGraphExec_t, not {e!r}")
    return e.impl


@_api
def hipGraphLaunch(graphExec, stream=None) -> None:
    """Launch on ``stream`` after everything earlier on it; later work on the stream waits for the
    whole graph. Host cost: a copy of the pre-built packets and one doorbell per queue."""
    global _replay_warned
    ex = _exec(graphExec)
    s = _H()._stream(stream)
    if s.capture is not None:
        _err("hipErrorStreamCaptureUnsupported",
             "hipGraphLaunch into a capturing stream (child graph nodes) is not supported")
    if _replay_configured():
        if not _replay_warned:
            _replay_warned = True
            warnings.warn("kernel replay is configured but graph launches are not replayed: the graph runs once",
                          RuntimeWarning, stacklevel=2)
        _report_graph_decline(ex, s)
    ex.launch(s.vgpu)


@_api
def hipGraphExecDestroy(graphExec) -> None:
    """Waits for the exec's launches in flight, then frees its signals, kernargs and staging."""
    _exec(graphExec).destroy()


def _enode(ex, node, types=None):
    en = ex.enode.get(node) if isinstance(node, hipGraphNode_t) else None
    if en is None:
        _err("hipErrorInvalidValue", f"node {node!r} is not a node of the graph this exec was instantiated from")
    if types is not None and en.type not in types:
        _err("hipErrorInvalidValue", f"node {node!r} must be a {' or '.join(_TYPE_NAMES[t] for t in types)} node")
    return en


@_api
def hipGraphExecKernelNodeSetParams(graphExec, node, params: hipKernelNodeParams) -> None:
    """Changes the next launches of this exec only (waits for its launches in flight, then rewrites
    the node's kernarg block and packet); the graph and other execs keep their parameters."""
    ex = _exec(graphExec)
    en = _enode(ex, node, (_T.hipGraphNodeTypeKernel,))
    if not isinstance(params, hipKernelNodeParams):
        _err("hipErrorInvalidValue", f"params must be a hipKernelNodeParams, not {params!r}")
    spec = _kernel_spec(params.func, params.kernelParams, params.gridDim, params.blockDim, params.sharedMemBytes)
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


# -- stream capture (hostside.graph_capture) -----------------------------------------------------------
from .graph_capture import (  # noqa: E402  (graph_capture uses the helpers above)
    _Capture, capture_wait_event, check_unsafe, hipEventRecordWithFlags, hipStreamBeginCapture,
    hipStreamEndCapture, hipStreamGetCaptureInfo, hipStreamIsCapturing, hipThreadExchangeStreamCaptureMode)
