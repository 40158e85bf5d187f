"""Explicit graph construction: the node specs built from HIP arguments (shared with stream capture)
and the hipGraph* calls that create graphs, add and remove nodes and edges, read them back and print
them."""
from __future__ import annotations

import os
import struct

import numpy as np

from ._context import _current_device
from ._errors import _api, _raise, hipError_t
from ._graph_types import (_T, ChildSpec, CopySpec, FillSpec, HostSpec, KernelSpec, _any_node, _clone_graph, _dim3,
                           _graph, _kernel_node, _node, _node_list, hipGraph_t, hipGraphNode_t, hipGraphNodeType,
                           hipHostNodeParams, hipKernelNodeParams, hipMemcpyNodeParams, hipMemsetParams)
from ._memory import _classify, _kind_allows, hipMemcpyKind
from ._module import _extra_params, _pack_value, hipFunction_t
from ._stream import _event
from . import _graph_mem_run, _userobj

__all__ = ["hipGraphCreate", "hipGraphDestroy", "hipGraphAddKernelNode", "hipGraphAddMemcpyNode",
           "hipGraphAddMemcpyNode1D", "hipGraphAddMemsetNode", "hipGraphAddHostNode", "hipGraphAddEmptyNode",
           "hipGraphAddEventRecordNode", "hipGraphAddEventWaitNode", "hipGraphAddDependencies",
           "hipGraphRemoveDependencies", "hipGraphGetNodes", "hipGraphGetRootNodes", "hipGraphGetEdges",
           "hipGraphNodeGetType", "hipGraphNodeGetDependencies", "hipGraphNodeGetDependentNodes",
           "hipGraphKernelNodeGetParams", "hipGraphKernelNodeSetParams", "hipGraphDebugDotPrint",
           "hipGraphClone", "hipGraphAddChildGraphNode", "hipGraphChildGraphNodeGetGraph"]


# -- node specs --------------------------------------------------------------------------------------
def _node_kernel_spec(p) -> KernelSpec:
    """The KernelSpec of a ``hipKernelNodeParams`` (its arguments from ``kernelParams`` or, as a
    launch's, from an ``extra`` list: HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END)."""
    if not isinstance(p, hipKernelNodeParams):
        _raise(hipError_t.hipErrorInvalidValue, f"params must be a hipKernelNodeParams, not {p!r}")
    return _kernel_spec(p.func, p.kernelParams, p.gridDim, p.blockDim, p.sharedMemBytes, p.extra)


def _kernel_spec(f, params, grid_blocks, block, shared, extra=None) -> KernelSpec:
    if type(f) is not hipFunction_t:
        _raise(hipError_t.hipErrorInvalidDeviceFunction, f"func must be a hipFunction_t, not {f!r}")
    if f.module.co.unloaded:
        _raise(hipError_t.hipErrorInvalidDeviceFunction, f"the module of {f.name} is unloaded")
    g = _dim3(grid_blocks, "gridDim")
    b = _dim3(block, "blockDim")
    if not isinstance(shared, (int, np.integer)) or shared < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sharedMemBytes must be a non-negative int, not {shared!r}")
    sig = f.sig
    if extra is not None:
        if params is not None:
            _raise(hipError_t.hipErrorInvalidValue, "pass kernelParams or extra, not both")
        params = _extra_params(f, extra)
    params = tuple(params) if params is not None else ()
    if len(params) != len(sig.args):
        _raise(hipError_t.hipErrorInvalidValue,
               f"{f.name} takes {len(sig.args)} arguments ({sig.text}), not {len(params)}")
    params = tuple(_pack_value(v, a[2], a[0]) for v, a in zip(params, sig.args))
    grid = (g[0] * b[0], g[1] * b[1], g[2] * b[2])
    return _spec_from_launch(f, params, grid, b, int(shared))


def _spec_from_launch(f, params, grid, block, shared, dims=None) -> KernelSpec:
    try:
        kargs = f.sig.struct.pack(*params) if f.sig.size else b""
    except struct.error as exc:
        _raise(hipError_t.hipErrorInvalidValue, f"{f.name}({f.sig.text}): bad argument: {exc}", exc)
    if dims is None:
        dims = 3 if grid[2] > 1 else (2 if grid[1] > 1 else 1)
    return KernelSpec(f, tuple(params), kargs, tuple(grid), tuple(block), shared, dims)


def _copy_spec(dst, src, size, kind) -> CopySpec:
    if not isinstance(size, (int, np.integer)) or size <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a positive int, not {size!r}")
    try:
        kind = hipMemcpyKind(kind)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"kind must be a hipMemcpyKind, not {kind!r}")
    dk, d = _classify(dst, size, "dst")
    sk, s = _classify(src, size, "src")
    if kind != hipMemcpyKind.hipMemcpyDefault and not _kind_allows(kind, dk, d, sk, s):
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"{kind.name} cannot copy from {sk} memory to {dk} memory")
    if dk == "pageable" and not d.flags.writeable:
        _raise(hipError_t.hipErrorInvalidValue, "dst host buffer is read-only")
    spec = CopySpec(d, s, int(size), dk, sk, kind)
    spec.given = (dst, src)             # as passed: hipGraphMemcpyNodeGetParams gives them back
    return spec


def _fill_spec(dst, value, size, width=1, rows=1, pitch=0) -> FillSpec:
    """``rows`` rows of ``size`` bytes (``width``-byte elements), ``pitch`` bytes apart when ``rows`` > 1."""
    if width not in (1, 2, 4):
        _raise(hipError_t.hipErrorInvalidValue, f"elementSize must be 1, 2 or 4, not {width!r}")
    if not isinstance(value, (int, np.integer)):
        _raise(hipError_t.hipErrorInvalidValue, f"value must be an int, not {value!r}")
    if not isinstance(size, (int, np.integer)) or size <= 0 or size % width:
        _raise(hipError_t.hipErrorInvalidValue,
               f"size must be a positive multiple of elementSize {width}, not {size!r}")
    if not isinstance(rows, (int, np.integer)) or isinstance(rows, bool) or rows <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"height must be a positive int, not {rows!r}")
    if rows > 1 and (not isinstance(pitch, (int, np.integer)) or isinstance(pitch, bool) or pitch < size
                     or pitch >= 1 << 32):
        _raise(hipError_t.hipErrorInvalidValue, f"pitch must be an int of at least the row's {size} bytes "
                                                f"(and under 2**32), not {pitch!r}")
    rows, pitch = int(rows), int(pitch) if rows > 1 else int(size)
    dk, d = _classify(dst, (rows - 1) * pitch + int(size), "dst")
    if dk == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, "a memset node needs a device or pinned host pointer")
    return FillSpec(d, int(value) & ((1 << (8 * width)) - 1), int(size), width, rows, pitch)


# -- graphs and nodes --------------------------------------------------------------------------------
@_api
def hipGraphCreate(flags: int = 0) -> hipGraph_t:
    if flags:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0, not {flags!r}")
    g = hipGraph_t()
    g.device = _current_device()        # hipGraphExecUpdate compares it (as CLR's device_)
    return g


@_api
def hipGraphDestroy(graph) -> None:
    """Execs instantiated from the graph stay valid (they own copies of what they need). The references
    the graph owns to user objects are released (their destructors may run now, in this thread)."""
    _graph(graph).destroyed = True
    _userobj.release_all(graph)
    _graph_mem_run.on_graph_destroy(graph)


@_api
def hipGraphAddKernelNode(graph, dependencies, params: hipKernelNodeParams) -> hipGraphNode_t:
    g = _graph(graph)
    spec = _node_kernel_spec(params)
    return g._add(_T.hipGraphNodeTypeKernel, dependencies, spec)


@_api
def hipGraphAddMemcpyNode(graph, dependencies, params: hipMemcpyNodeParams) -> hipGraphNode_t:
    g = _graph(graph)
    if not isinstance(params, hipMemcpyNodeParams):
        _raise(hipError_t.hipErrorInvalidValue, f"params must be a hipMemcpyNodeParams, not {params!r}")
    return g._add(_T.hipGraphNodeTypeMemcpy, dependencies,
                  _copy_spec(params.dst, params.src, params.size, params.kind))


@_api
def hipGraphAddMemcpyNode1D(graph, dependencies, dst, src, count: int, kind) -> hipGraphNode_t:
    return hipGraphAddMemcpyNode(graph, dependencies, hipMemcpyNodeParams(dst, src, count, kind))


@_api
def hipGraphAddMemsetNode(graph, dependencies, params: hipMemsetParams) -> hipGraphNode_t:
    g = _graph(graph)
    if not isinstance(params, hipMemsetParams):
        _raise(hipError_t.hipErrorInvalidValue, f"params must be a hipMemsetParams, not {params!r}")
    es = params.elementSize
    if params.width:                     # HIP's form: height rows of width elements, pitch bytes apart
        if not isinstance(params.width, (int, np.integer)) or isinstance(params.width, bool) or params.width < 0:
            _raise(hipError_t.hipErrorInvalidValue, f"width must be a non-negative int, not {params.width!r}")
        spec = _fill_spec(params.dst, params.value, int(params.width) * es if es in (1, 2, 4) else 0, es,
                          params.height, params.pitch)
    else:
        spec = _fill_spec(params.dst, params.value, params.size, es)
    spec.given_pitch = params.pitch     # read back by hipGraphMemsetNodeGetParams
    return g._add(_T.hipGraphNodeTypeMemset, dependencies, spec)


@_api
def hipGraphAddHostNode(graph, dependencies, params: hipHostNodeParams) -> hipGraphNode_t:
    """``fn(userData)`` runs on the runtime's async-handler thread once the dependencies are done."""
    g = _graph(graph)
    if not isinstance(params, hipHostNodeParams) or not callable(params.fn):
        _raise(hipError_t.hipErrorInvalidValue,
               f"params must be a hipHostNodeParams with a callable fn, not {params!r}")
    return g._add(_T.hipGraphNodeTypeHost, dependencies, HostSpec(params.fn, params.userData))


@_api
def hipGraphAddEmptyNode(graph, dependencies) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeEmpty, dependencies, None)


@_api
def hipGraphAddEventRecordNode(graph, dependencies, event) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeEventRecord, dependencies, _node_event(event))


@_api
def hipGraphAddEventWaitNode(graph, dependencies, event) -> hipGraphNode_t:
    return _graph(graph)._add(_T.hipGraphNodeTypeWaitEvent, dependencies, _node_event(event))


def _node_event(event):
    """An event node's event: no event at all is hipErrorInvalidValue (as CLR's hip_graph.cpp)."""
    if event is None or (type(event) is int and event == 0):
        _raise(hipError_t.hipErrorInvalidValue, "event must be a hipEvent_t, not None")
    return _event(event)


def _edges(g, from_, to):
    a, b = _node_list(from_, "from"), _node_list(to, "to")
    if len(a) != len(b):
        _raise(hipError_t.hipErrorInvalidValue,
               f"from and to must have the same length, not {len(a)} and {len(b)}")
    return [(_node(g, x), _node(g, y)) for x, y in zip(a, b)]


@_api
def hipGraphClone(graph) -> hipGraph_t:
    """A deep copy of ``graph`` (nodes, parameters, edges, child graphs); the two are independent. A
    graph with memory nodes of its own is hipErrorNotSupported, as in CLR."""
    g = _graph(graph)
    if _graph_mem_run.has_mem_nodes(g):
        _raise(hipError_t.hipErrorNotSupported, "a graph with memory nodes cannot be cloned")
    return _clone_graph(g)


@_api
def hipGraphAddChildGraphNode(graph, dependencies, childGraph) -> hipGraphNode_t:
    """A node that runs ``childGraph`` as a unit: every node of the child after the dependencies,
    and the node's dependents after the whole child. The child is copied now (as HIP does): changing
    ``childGraph`` afterwards does not change the node; hipGraphChildGraphNodeGetGraph gives the copy."""
    g = _graph(graph)
    child = _graph(childGraph)
    return g._add(_T.hipGraphNodeTypeGraph, dependencies, ChildSpec(_clone_graph(child)))


@_api
def hipGraphChildGraphNodeGetGraph(node) -> hipGraph_t:
    """The graph a child graph node owns (not a copy: changing it changes the node, for graphs
    instantiated afterwards)."""
    n = _any_node(node)
    if n.type != _T.hipGraphNodeTypeGraph:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a child graph node, not {n!r}")
    return n.spec.graph


@_api
def hipGraphAddDependencies(graph, from_, to) -> None:
    """Add edges from[i] -> to[i] (nodes or equal-length sequences of nodes)."""
    g = _graph(graph)
    pairs = _edges(g, from_, to)
    with g.lock:
        for x, y in pairs:
            if x is y:
                _raise(hipError_t.hipErrorInvalidValue, f"a node cannot depend on itself: {x!r}")
            if x in y.deps:
                _raise(hipError_t.hipErrorInvalidValue, f"edge {x.id} -> {y.id} already exists")
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
                _raise(hipError_t.hipErrorInvalidValue, f"there is no edge {x.id} -> {y.id}")
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


@_api
def hipGraphNodeGetDependencies(node) -> list:
    return list(_any_node(node).deps)


@_api
def hipGraphNodeGetDependentNodes(node) -> list:
    return list(_any_node(node).succ)


@_api
def hipGraphKernelNodeGetParams(node) -> hipKernelNodeParams:
    c = _kernel_node(node).spec
    return hipKernelNodeParams(c.f, tuple(g // b for g, b in zip(c.grid, c.block)), c.block, c.shared,
                               list(c.params))


@_api
def hipGraphKernelNodeSetParams(node, params: hipKernelNodeParams) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = _kernel_node(node)
    n.spec = _node_kernel_spec(params)


@_api
def hipGraphDebugDotPrint(graph, path: str, flags: int = 0) -> None:
    """Write the graph in Graphviz dot: one shape per node labelled with its id, type and parameters (a
    box; an ellipse for empty, event-record and event-wait nodes), one arrow per edge. A missing path
    is hipErrorInvalidValue, a file that cannot be written hipErrorOperatingSystem (as CLR)."""
    g = _graph(graph)
    if not isinstance(path, (str, os.PathLike)):
        _raise(hipError_t.hipErrorInvalidValue, f"path must be a file name, not {path!r}")
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
        _raise(hipError_t.hipErrorOperatingSystem, f"cannot write {path!r}: {exc}", exc)
