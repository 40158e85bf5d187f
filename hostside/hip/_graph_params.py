"""Node-level graph calls that CLR has beyond construction: destroying a node and finding a node's copy in
a cloned graph (hipGraphDestroyNode, hipGraphNodeFindInClone), with CLR's error codes."""
from __future__ import annotations

from ._errors import _api, _raise, hipError_t
from ._graph_types import _T, _any_node, _graph, hipGraphNode_t

__all__ = ["hipGraphDestroyNode", "hipGraphNodeFindInClone"]


@_api
def hipGraphDestroyNode(node) -> None:
    """Remove ``node`` and its edges from its graph (as CLR: the edges of its dependencies and dependents
    go with it); the node is invalid afterwards (hipErrorInvalidValue, as a node that is not valid).
    Execs instantiated before keep their copy of it."""
    n = _any_node(node)
    if n.type in (_T.hipGraphNodeTypeMemAlloc, _T.hipGraphNodeTypeMemFree):
        _raise(hipError_t.hipErrorNotSupported, "a memory node cannot be destroyed (CLR)")
    g = n.graph
    with g.lock:
        for d in n.deps:
            d.succ.remove(n)
        for s in n.succ:
            s.deps.remove(n)
        g.nodes.remove(n)
        n.deps, n.succ = [], []
        n.graph = None


def _lineage(g) -> list:
    out = []
    while g is not None:
        out.append(g)
        g = g.original
    return out


@_api
def hipGraphNodeFindInClone(originalNode, clonedGraph) -> hipGraphNode_t:
    """The node of ``clonedGraph`` (made by hipGraphClone, or a child graph node's copy) that was cloned
    from ``originalNode``. A graph that is not a clone, or a node it has no copy of, is
    hipErrorInvalidValue (as CLR, which matches node ids)."""
    if originalNode is None or clonedGraph is None:
        _raise(hipError_t.hipErrorInvalidValue, "originalNode and clonedGraph must be given")
    o = _any_node(originalNode)
    g = _graph(clonedGraph)
    if g.original is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{g!r} is not a cloned graph")
    if o.graph in _lineage(g) or g in _lineage(o.graph):
        for n in g.nodes:
            if n.id == o.id:
                return n
    _raise(hipError_t.hipErrorInvalidValue, f"{g!r} has no clone of {o!r}")
