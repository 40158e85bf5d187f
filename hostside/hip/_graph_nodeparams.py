"""Reading and changing the parameters of a graph's nodes (not of an exec: see ``_graph_update``):
host, memset, memcpy and event nodes, with CLR's error codes (hip_graph.cpp).

A setter replaces the node's spec, as ``hipGraphKernelNodeSetParams`` does: execs instantiated before
keep their own copy; graphs instantiated afterwards (and clones made afterwards) get the new one.
The spec builders (``host_spec``, ``memset_spec``, ``memcpy_spec``, ``memcpy1d_spec``) are shared with
the exec setters."""
from __future__ import annotations

import numpy as np

from ._errors import _api, _raise, hipError_t
from ._graph_build import _copy_spec, _fill_spec, _node_event
from ._graph_types import (_T, _TYPE_NAMES, HostSpec, _any_node, hipGraphNode_t, hipHostNodeParams,
                           hipMemcpyNodeParams, hipMemsetParams)

__all__ = ["hipGraphHostNodeGetParams", "hipGraphHostNodeSetParams", "hipGraphMemsetNodeGetParams",
           "hipGraphMemsetNodeSetParams", "hipGraphMemcpyNodeGetParams", "hipGraphMemcpyNodeSetParams",
           "hipGraphMemcpyNodeSetParams1D", "hipGraphEventRecordNodeGetEvent", "hipGraphEventRecordNodeSetEvent",
           "hipGraphEventWaitNodeGetEvent", "hipGraphEventWaitNodeSetEvent"]


def typed_node(node, ntype) -> hipGraphNode_t:
    """A live node of type ``ntype``; anything else is hipErrorInvalidValue (CLR: isNodeValid, and the
    type check its event calls make; hdemu makes it for every node type)."""
    n = _any_node(node)
    if n.type != ntype:
        _raise(hipError_t.hipErrorInvalidValue, f"node must be a {_TYPE_NAMES[ntype]} node, not {n!r}")
    return n


# -- spec builders (graph and exec setters) ------------------------------------------------------------
def host_spec(params) -> HostSpec:
    if not isinstance(params, hipHostNodeParams) or not callable(params.fn):
        _raise(hipError_t.hipErrorInvalidValue,
               f"params must be a hipHostNodeParams with a callable fn, not {params!r}")
    return HostSpec(params.fn, params.userData)


def _int(v, what, minimum=0):
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < minimum:
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be an int of at least {minimum}, not {v!r}")
    return int(v)


def memset_spec(params):
    """The FillSpec of a hipMemsetParams: HIP's form (``width`` elements, ``height`` rows ``pitch``
    bytes apart) or hdemu's 1-D form (``width`` 0, ``size`` bytes). No params, no dst, a bad element
    size, a zero width or height, a pitch under the row or a fill beyond the allocation is
    hipErrorInvalidValue (as CLR's ihipGraphMemsetParams_validate)."""
    if not isinstance(params, hipMemsetParams):
        _raise(hipError_t.hipErrorInvalidValue, f"params must be a hipMemsetParams, not {params!r}")
    p = params
    if p.dst is None or (isinstance(p.dst, (int, np.integer)) and p.dst == 0):
        _raise(hipError_t.hipErrorInvalidValue, "params.dst must be a pointer, not null")
    es = p.elementSize
    if es not in (1, 2, 4) or isinstance(es, bool):
        _raise(hipError_t.hipErrorInvalidValue, f"elementSize must be 1, 2 or 4, not {es!r}")
    if p.width:
        width = _int(p.width, "width", 1)
        height = _int(p.height, "height", 1)
        pitch = _int(p.pitch, "pitch") if height > 1 else 0
        spec = _fill_spec(p.dst, p.value, width * es, es, height, pitch)
    else:
        if not p.size:
            _raise(hipError_t.hipErrorInvalidValue, "width must be positive (or size, in hdemu's 1-D form)")
        spec = _fill_spec(p.dst, p.value, p.size, es)
    spec.given_pitch = p.pitch
    return spec


def memset_params(c) -> hipMemsetParams:
    """A memset node's parameters in HIP's form, the pitch as it was given (CLR keeps the struct)."""
    pitch = c.given_pitch if c.given_pitch is not None else (c.pitch if c.rows > 1 else 0)
    return hipMemsetParams(c.dst, c.value, c.size * c.rows, c.width, c.size // c.width, c.rows, pitch)


def _null(p) -> bool:
    return p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, bool) and p == 0)


def memcpy_spec(params):
    if not isinstance(params, hipMemcpyNodeParams):
        _raise(hipError_t.hipErrorInvalidValue, f"params must be a hipMemcpyNodeParams, not {params!r}")
    if _null(params.dst) or _null(params.src):
        _raise(hipError_t.hipErrorInvalidValue, "params.dst and params.src must be given")
    return _copy_spec(params.dst, params.src, params.size, params.kind)


def memcpy1d_args(dst, src, count) -> None:
    """CLR's first checks in hipGraph(Exec)MemcpyNodeSetParams1D: no dst or src, a count of 0, or
    src == dst is hipErrorInvalidValue."""
    if _null(dst) or _null(src):
        _raise(hipError_t.hipErrorInvalidValue, "dst and src must be given")
    if isinstance(count, (int, np.integer)) and not isinstance(count, bool) and count == 0:
        _raise(hipError_t.hipErrorInvalidValue, "count must be positive, not 0")
    if dst is src or (isinstance(dst, (int, np.integer)) and isinstance(src, (int, np.integer)) and dst == src):
        _raise(hipError_t.hipErrorInvalidValue, "src and dst must differ")


def memcpy1d_spec(dst, src, count, kind):
    """``memcpy1d_args``, then the copy checked as hipGraphAddMemcpyNode1D checks it."""
    memcpy1d_args(dst, src, count)
    return _copy_spec(dst, src, count, kind)


def memcpy_params(c) -> hipMemcpyNodeParams:
    """A copy node's parameters: its pointers and host buffers as they were passed (a slice of an
    array stays that slice: setting the parameters back copies the same bytes); the node's own u8
    views of pageable memory when that is not known (a captured copy)."""
    dst, src = c.given if c.given is not None else (c.dst, c.src)
    return hipMemcpyNodeParams(dst, src, c.size, c.kind)


# -- host nodes ------------------------------------------------------------------------------------------
@_api
def hipGraphHostNodeGetParams(node) -> hipHostNodeParams:
    c = typed_node(node, _T.hipGraphNodeTypeHost).spec
    return hipHostNodeParams(c.fn, c.userData)


@_api
def hipGraphHostNodeSetParams(node, params: hipHostNodeParams) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    spec = host_spec(params)
    typed_node(node, _T.hipGraphNodeTypeHost).spec = spec


# -- memset nodes ----------------------------------------------------------------------------------------
@_api
def hipGraphMemsetNodeGetParams(node) -> hipMemsetParams:
    return memset_params(typed_node(node, _T.hipGraphNodeTypeMemset).spec)


@_api
def hipGraphMemsetNodeSetParams(node, params: hipMemsetParams) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = typed_node(node, _T.hipGraphNodeTypeMemset)
    n.spec = memset_spec(params)


# -- memcpy nodes ----------------------------------------------------------------------------------------
@_api
def hipGraphMemcpyNodeGetParams(node) -> hipMemcpyNodeParams:
    """The node's copy as a hipMemcpyNodeParams (hdemu's 1-D form of HIP's hipMemcpy3DParms)."""
    return memcpy_params(typed_node(node, _T.hipGraphNodeTypeMemcpy).spec)


@_api
def hipGraphMemcpyNodeSetParams(node, params: hipMemcpyNodeParams) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = typed_node(node, _T.hipGraphNodeTypeMemcpy)
    n.spec = memcpy_spec(params)


@_api
def hipGraphMemcpyNodeSetParams1D(node, dst, src, count: int, kind) -> None:
    n = typed_node(node, _T.hipGraphNodeTypeMemcpy)
    n.spec = memcpy1d_spec(dst, src, count, kind)


# -- event nodes -----------------------------------------------------------------------------------------
@_api
def hipGraphEventRecordNodeGetEvent(node):
    return typed_node(node, _T.hipGraphNodeTypeEventRecord).spec


@_api
def hipGraphEventRecordNodeSetEvent(node, event) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = typed_node(node, _T.hipGraphNodeTypeEventRecord)
    n.spec = _node_event(event)


@_api
def hipGraphEventWaitNodeGetEvent(node):
    return typed_node(node, _T.hipGraphNodeTypeWaitEvent).spec


@_api
def hipGraphEventWaitNodeSetEvent(node, event) -> None:
    """Changes the graph (and execs instantiated from it later), not existing execs."""
    n = typed_node(node, _T.hipGraphNodeTypeWaitEvent)
    n.spec = _node_event(event)
