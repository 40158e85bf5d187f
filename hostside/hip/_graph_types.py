"""The graph model: capture and node-type enums, the HIP parameter objects, the node specs an exec is
built from, and the graph and node objects (``hipGraph_t``, ``hipGraphNode_t``, deep copies of them)."""
from __future__ import annotations

import copy
import enum
import itertools
import threading

import numpy as np

from ._errors import _raise, hipError_t

__all__ = [
    "hipStreamCaptureMode", "hipStreamCaptureModeGlobal", "hipStreamCaptureModeThreadLocal",
    "hipStreamCaptureModeRelaxed", "hipStreamCaptureStatus", "hipStreamCaptureStatusNone",
    "hipStreamCaptureStatusActive", "hipStreamCaptureStatusInvalidated", "hipGraphNodeType",
    "hipEventRecordDefault", "hipEventRecordExternal", "hipEventWaitDefault", "hipEventWaitExternal",
    "hipGraph_t", "hipGraphNode_t", "hipKernelNodeParams", "hipMemcpyNodeParams", "hipMemsetParams",
    "hipHostNodeParams", "KernelSpec", "CopySpec", "FillSpec", "HostSpec", "ChildSpec",
]


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
    hipGraphNodeTypeMemAlloc = 10       # hip_runtime_api.h (8, 9: external semaphores, not in hdemu)
    hipGraphNodeTypeMemFree = 11


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
               _T.hipGraphNodeTypeGraph: "child graph", _T.hipGraphNodeTypeEmpty: "empty",
               _T.hipGraphNodeTypeWaitEvent: "event wait",
               _T.hipGraphNodeTypeEventRecord: "event record", _T.hipGraphNodeTypeMemAlloc: "mem alloc",
               _T.hipGraphNodeTypeMemFree: "mem free"}


# -- parameter objects -------------------------------------------------------------------------------
def _dim3(d, what):
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        d = (int(d),)
    try:
        t = tuple(int(x) for x in d) + (1, 1, 1)
    except (TypeError, ValueError):
        t = None
    if t is None or len(t) > 6 or any(x <= 0 for x in t[:3]):
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be a positive int or up to 3 positive ints, not {d!r}")
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
    """A memset node's fill of ``elementSize``-byte elements (1, 2, 4) of ``value`` at ``dst``: HIP's
    fields, ``height`` rows of ``width`` elements, rows ``pitch`` bytes apart (``pitch`` matters only
    when ``height`` > 1); or, when ``width`` is 0, hdemu's 1-D form: ``size`` bytes."""

    def __init__(self, dst=0, value=0, size=0, elementSize=1, width=0, height=1, pitch=0):
        self.dst, self.value, self.size, self.elementSize = dst, value, size, elementSize
        self.width, self.height, self.pitch = width, height, pitch


class hipHostNodeParams:
    def __init__(self, fn=None, userData=None):
        self.fn, self.userData = fn, userData


# -- node specs (what an exec is built from) ---------------------------------------------------------
class KernelSpec:
    """A kernel node: function, packed kernargs, global grid size, workgroup size, LDS bytes."""

    __slots__ = ("f", "params", "kargs", "grid", "block", "shared", "dims")

    def __init__(self, f, params, kargs, grid, block, shared, dims):
        self.f, self.params, self.kargs = f, params, kargs
        self.grid, self.block, self.shared, self.dims = grid, block, shared, dims


class CopySpec:
    """A 1-D copy node: ``dst``/``src`` are addresses, or u8 numpy views for pageable memory."""

    __slots__ = ("dst", "src", "size", "dk", "sk", "kind", "given")

    def __init__(self, dst, src, size, dk, sk, kind):
        self.dst, self.src, self.size, self.dk, self.sk, self.kind = dst, src, size, dk, sk, kind
        self.given = None               # (dst, src) as the caller passed them, when known


class FillSpec:
    """A memset node: ``rows`` rows of ``size`` bytes of ``width``-byte elements, ``pitch`` bytes apart
    (one row: a 1-D fill; more: one rectangular SDMA packet)."""
    __slots__ = ("dst", "value", "size", "width", "rows", "pitch", "given_pitch")

    def __init__(self, dst, value, size, width, rows=1, pitch=0):
        self.dst, self.value, self.size, self.width = dst, value, size, width
        self.rows, self.pitch = rows, pitch if rows > 1 else size
        self.given_pitch = None         # hipMemsetParams.pitch as given (hipGraphMemsetNodeGetParams)


class HostSpec:
    __slots__ = ("fn", "userData")

    def __init__(self, fn, userData):
        self.fn, self.userData = fn, userData


class ChildSpec:
    """A child graph node: the graph it owns, a copy of the one given when the node was added (as in
    HIP); instantiate inlines its nodes."""

    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph


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
            unit = f" ({c.width}-byte elements)" if c.width > 1 else ""
            return f"{self.id}: memset {c.size} B = {c.value:#x}{unit}"
        if t == _T.hipGraphNodeTypeHost:
            return f"{self.id}: host {getattr(c.fn, '__name__', 'fn')}"
        if t == _T.hipGraphNodeTypeGraph:
            return f"{self.id}: child graph ({len(c.graph.nodes)} nodes)"
        return f"{self.id}: {_TYPE_NAMES.get(t, t.name)}"

    def __repr__(self):
        return f"<hipGraphNode_t {self.label().replace(chr(92) + 'n', ', ')}>"


class hipGraph_t:
    _ids = itertools.count(1)
    device = None                       # the current device at hipGraphCreate (CLR's Graph::device_)

    def __init__(self):
        self.nodes: list[hipGraphNode_t] = []
        self.destroyed = False
        self.gid = next(self._ids)
        self.lock = threading.Lock()
        self.next_id = 0                # node ids stay unique after hipGraphDestroyNode
        self.original = None            # the graph this one is a clone of (hipGraphNodeFindInClone)

    def _add(self, ntype, deps, spec) -> hipGraphNode_t:
        deps = _node_list(deps, "dependencies")
        seen = set()
        for d in deps:
            if d.graph is not self:
                _raise(hipError_t.hipErrorInvalidValue, f"dependency {d!r} belongs to another graph")
            if id(d) in seen:
                _raise(hipError_t.hipErrorInvalidValue, f"dependency {d!r} is listed twice")
            seen.add(id(d))
        with self.lock:
            nid = max(self.next_id, self.nodes[-1].id + 1 if self.nodes else 0)
            self.next_id = nid + 1
            n = hipGraphNode_t(self, nid, ntype, spec)
            n.deps = list(deps)
            for d in deps:
                d.succ.append(n)
            self.nodes.append(n)
        return n

    def __repr__(self):
        return f"<hipGraph_t #{self.gid} nodes={len(self.nodes)}>"


def _dup_spec(n: hipGraphNode_t):
    """A node's parameters for a copy of the node: parameter objects copied, a child graph cloned in
    turn; events and host functions (handles) are shared, as a graph copy in HIP shares them."""
    c = n.spec
    if n.type == _T.hipGraphNodeTypeGraph:
        return ChildSpec(_clone_graph(c.graph))
    if isinstance(c, (KernelSpec, CopySpec, FillSpec, HostSpec)):
        return copy.copy(c)
    return c


#: called as hook(original, copy) after each graph copy (_userobj.copy_refs)
_clone_hooks: list = []


def _clone_graph(g: hipGraph_t) -> hipGraph_t:
    """A deep copy of ``g``: new nodes with the same ids, types and (copied) parameters, and the same
    edges in the same order. Changing one graph afterwards does not change the other."""
    with g.lock:
        c = hipGraph_t()
        m = {n: hipGraphNode_t(c, n.id, n.type, _dup_spec(n)) for n in g.nodes}
        for n in g.nodes:
            m[n].deps = [m[d] for d in n.deps]
            m[n].succ = [m[x] for x in n.succ]
        c.nodes = [m[n] for n in g.nodes]
        c.next_id, c.original, c.device = g.next_id, g, g.device
    for hook in _clone_hooks:           # _userobj: the copy owns references to the graph's user objects
        hook(g, c)
    return c


def _node_list(x, what) -> list:
    if x is None:
        return []
    if isinstance(x, hipGraphNode_t):
        return [x]
    try:
        out = list(x)
    except TypeError:
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be a node or a sequence of nodes, not {x!r}")
    for n in out:
        if not isinstance(n, hipGraphNode_t):
            _raise(hipError_t.hipErrorInvalidValue, f"{what} must hold hipGraphNode_t, not {n!r}")
    return out


def _graph(g) -> hipGraph_t:
    if not isinstance(g, hipGraph_t) or g.destroyed:
        _raise(hipError_t.hipErrorInvalidValue, f"graph must be a live hipGraph_t, not {g!r}")
    return g


def _node(g, n) -> hipGraphNode_t:
    if not isinstance(n, hipGraphNode_t) or n.graph is not g:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a hipGraphNode_t of {g!r}, not {n!r}")
    return n


def _any_node(node) -> hipGraphNode_t:
    """A live node: not destroyed (graph None), nor a node of a destroyed graph (CLR: isNodeValid)."""
    if not isinstance(node, hipGraphNode_t) or node.graph is None or node.graph.destroyed:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a live hipGraphNode_t, not {node!r}")
    return node


def _kernel_node(node) -> hipGraphNode_t:
    if not isinstance(node, hipGraphNode_t) or node.graph is None or node.graph.destroyed or \
            node.type != _T.hipGraphNodeTypeKernel:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a kernel node, not {node!r}")
    return node
