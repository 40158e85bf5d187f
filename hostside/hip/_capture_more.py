"""More of stream capture, with CLR's semantics and error codes (hip_graph.cpp):

* ``hipStreamGetCaptureInfo_v2``: status, id, the graph being built and the stream's current
  dependency set (the nodes the next captured operation will depend on);
* ``hipStreamUpdateCaptureDependencies``: add to (``hipStreamAddCaptureDependencies``) or replace
  (``hipStreamSetCaptureDependencies``) that set with nodes of the capture graph, e.g. nodes added by
  hand with ``hipGraphAdd*Node`` on the graph ``hipStreamGetCaptureInfo_v2`` returned. Nodes added by
  hand, and nodes a replace took out of the set, need not be joined back before
  ``hipStreamEndCapture``, as in CLR;
* ``hipStreamBeginCaptureToGraph``: capture into an existing graph, after given nodes of it;
* ``hipGraphInstantiateWithParams`` (``hipGraphInstantiateParams`` with its result code) and
  ``hipGraphExecGetFlags``.
"""
from __future__ import annotations

import enum

from ._capture import hipStreamBeginCapture
from ._context import _peek_stream
from ._errors import HipError, _api, _raise, hipError_t
from ._graph_api import _exec, hipGraphExec_t, hipGraphInstantiate, hipGraphUpload
from ._graph_types import (_graph, _node_list, hipStreamCaptureModeGlobal, hipStreamCaptureStatus,
                           hipStreamCaptureStatusActive, hipStreamCaptureStatusNone)

__all__ = ["hipStreamGetCaptureInfo_v2", "hipStreamUpdateCaptureDependencies", "hipStreamAddCaptureDependencies",
           "hipStreamSetCaptureDependencies", "hipStreamBeginCaptureToGraph", "hipGraphInstantiateParams",
           "hipGraphInstantiateResult", "hipGraphInstantiateSuccess", "hipGraphInstantiateError",
           "hipGraphInstantiateInvalidStructure", "hipGraphInstantiateNodeOperationNotSupported",
           "hipGraphInstantiateMultipleDevicesNotSupported", "hipGraphInstantiateFlagAutoFreeOnLaunch",
           "hipGraphInstantiateFlagUpload", "hipGraphInstantiateFlagDeviceLaunch",
           "hipGraphInstantiateFlagUseNodePriority", "hipGraphInstantiateWithParams", "hipGraphExecGetFlags"]

#: hipStreamUpdateCaptureDependenciesFlags
hipStreamAddCaptureDependencies = 0x0
hipStreamSetCaptureDependencies = 0x1

#: hipGraphInstantiateFlags
hipGraphInstantiateFlagAutoFreeOnLaunch = 1
hipGraphInstantiateFlagUpload = 2
hipGraphInstantiateFlagDeviceLaunch = 4
hipGraphInstantiateFlagUseNodePriority = 8


class hipGraphInstantiateResult(enum.IntEnum):
    hipGraphInstantiateSuccess = 0
    hipGraphInstantiateError = 1
    hipGraphInstantiateInvalidStructure = 2
    hipGraphInstantiateNodeOperationNotSupported = 3
    hipGraphInstantiateMultipleDevicesNotSupported = 4


hipGraphInstantiateSuccess = hipGraphInstantiateResult.hipGraphInstantiateSuccess
hipGraphInstantiateError = hipGraphInstantiateResult.hipGraphInstantiateError
hipGraphInstantiateInvalidStructure = hipGraphInstantiateResult.hipGraphInstantiateInvalidStructure
hipGraphInstantiateNodeOperationNotSupported = hipGraphInstantiateResult.hipGraphInstantiateNodeOperationNotSupported
hipGraphInstantiateMultipleDevicesNotSupported = \
    hipGraphInstantiateResult.hipGraphInstantiateMultipleDevicesNotSupported


class hipGraphInstantiateParams:
    """hipGraphInstantiateWithParams' in/out parameters: ``flags`` and ``uploadStream`` in;
    ``result_out`` (a hipGraphInstantiateResult) and ``errNode_out`` out."""

    def __init__(self, flags: int = 0, uploadStream=None):
        self.flags, self.uploadStream = flags, uploadStream
        self.result_out = None
        self.errNode_out = None

    def __repr__(self):
        return f"hipGraphInstantiateParams(flags={self.flags}, result_out={self.result_out!r})"


@_api
def hipStreamGetCaptureInfo_v2(stream) -> tuple:
    """(status, capture id, graph, dependencies): while the capture is active, its id, the graph being
    built and the nodes the next captured operation on ``stream`` will depend on; otherwise
    (status, 0, None, []) (CLR fills the rest only for an active capture). The legacy null stream while
    a blocking stream is capturing is hipErrorStreamCaptureImplicit."""
    s = _peek_stream(stream)
    cap = s.capture
    if cap is None:
        return hipStreamCaptureStatusNone, 0, None, []
    if cap.status != hipStreamCaptureStatusActive:
        return hipStreamCaptureStatus(cap.status), 0, None, []
    return cap.status, cap.id, cap.graph, list(cap.leaves.get(s, ()))


def _capture_nodes(cap, dependencies) -> list:
    deps = _node_list(dependencies, "dependencies")
    if len(deps) > len(cap.graph.nodes):
        _raise(hipError_t.hipErrorInvalidValue,
               f"{len(deps)} dependencies, but the capture graph has {len(cap.graph.nodes)} nodes")
    for d in deps:
        if d.graph is not cap.graph:
            _raise(hipError_t.hipErrorInvalidValue, f"dependency {d!r} is not a node of capture {cap.id}'s graph")
    return list(dict.fromkeys(deps))


@_api
def hipStreamUpdateCaptureDependencies(stream, dependencies, flags: int = hipStreamAddCaptureDependencies) -> None:
    """Change the set of nodes the next captured operation on ``stream`` depends on:
    ``hipStreamAddCaptureDependencies`` (0) adds ``dependencies`` (nodes of the capture graph) to it,
    ``hipStreamSetCaptureDependencies`` (1) replaces it (the nodes taken out need not be joined back).
    A stream not capturing is hipErrorIllegalState; another flag, a node of another graph, or more
    nodes than the graph has is hipErrorInvalidValue (as CLR)."""
    s = _peek_stream(stream)
    cap = s.capture
    if cap is None:
        _raise(hipError_t.hipErrorIllegalState, "stream is not capturing")
    if flags not in (hipStreamAddCaptureDependencies, hipStreamSetCaptureDependencies) or type(flags) is not int:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be hipStreamAdd/SetCaptureDependencies, not {flags!r}")
    deps = _capture_nodes(cap, dependencies)
    cur = cap.leaves.get(s, [])
    if flags == hipStreamSetCaptureDependencies:
        cap.removed.extend(n for n in cur if n not in deps)
        cur = []
    cap.leaves[s] = cur + [n for n in deps if n not in cur]


@_api
def hipStreamBeginCaptureToGraph(stream, graph, dependencies=None, dependencyData=None,
                                 mode=hipStreamCaptureModeGlobal) -> None:
    """Begin capturing ``stream`` into the existing ``graph``: the captured nodes are added to it, the
    first ones after ``dependencies`` (nodes of ``graph``; None: as roots); ``hipStreamEndCapture``
    returns ``graph``. The graph's own nodes need not be joined. Edge data is hipErrorNotSupported, no
    graph hipErrorInvalidValue; the rest as hipStreamBeginCapture (CLR)."""
    if dependencyData is not None:
        _raise(hipError_t.hipErrorNotSupported, "edge data (dependencyData) is not supported")
    if graph is None:
        _raise(hipError_t.hipErrorInvalidValue, "graph must be a hipGraph_t, not None")
    g = _graph(graph)
    deps = _node_list(dependencies, "dependencies")
    for d in deps:
        if d.graph is not g:
            _raise(hipError_t.hipErrorInvalidValue, f"dependency {d!r} is not a node of {g!r}")
    hipStreamBeginCapture(stream, mode)
    s = _peek_stream(stream)
    cap = s.capture
    cap.graph = g
    cap.leaves[s] = list(dict.fromkeys(deps))


_WITH_PARAMS_FLAGS = (0, hipGraphInstantiateFlagAutoFreeOnLaunch, hipGraphInstantiateFlagUpload,
                      hipGraphInstantiateFlagDeviceLaunch, hipGraphInstantiateFlagUseNodePriority)


@_api
def hipGraphInstantiateWithParams(graph, instantiateParams: hipGraphInstantiateParams) -> hipGraphExec_t:
    """Instantiate with ``instantiateParams.flags`` (0 or one hipGraphInstantiateFlag*: any other value
    is hipErrorInvalidValue) and set ``instantiateParams.result_out`` (hipGraphInstantiateSuccess, or
    hipGraphInstantiateError when it fails). ``hipGraphInstantiateFlagUpload`` uploads to
    ``uploadStream`` (as CLR)."""
    if graph is None or not isinstance(instantiateParams, hipGraphInstantiateParams):
        _raise(hipError_t.hipErrorInvalidValue, "need a graph and a hipGraphInstantiateParams")
    p = instantiateParams
    if type(p.flags) is not int or p.flags not in _WITH_PARAMS_FLAGS:
        p.result_out = hipGraphInstantiateError
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0 or one hipGraphInstantiateFlag, not {p.flags!r}")
    try:
        exe = hipGraphInstantiate(graph, p.flags)
    except HipError:
        p.result_out = hipGraphInstantiateError
        raise
    p.result_out, p.errNode_out = hipGraphInstantiateSuccess, None
    if p.flags == hipGraphInstantiateFlagUpload:
        hipGraphUpload(exe, p.uploadStream)
    return exe


@_api
def hipGraphExecGetFlags(graphExec) -> int:
    """The flags the exec was instantiated with (hipGraphInstantiateWithFlags / WithParams)."""
    _exec(graphExec)
    return int(getattr(graphExec, "flags", 0))
