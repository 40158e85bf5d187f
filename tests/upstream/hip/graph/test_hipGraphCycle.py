"""hipGraphCycle.cc: instantiating a graph of empty nodes with a cycle fails, and succeeds once an edge of
the cycle is removed. BasicCyclic4 and 5 delete a node (hipGraphDestroyNode, NOT_PORTED.md)."""
from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphCycle.cc"

E = hip.hipError_t


def _empty_nodes(graph, n):
    return [hip.hipGraphAddEmptyNode(graph, None) for _ in range(n)]


def _edges(graph, nodes, pairs):
    for a, b in pairs:
        hip.hipGraphAddDependencies(graph, [nodes[a - 1]], [nodes[b - 1]])


def test_Unit_hipGraph_BasicCyclic1(mod, res):
    graph = res.graph()
    nodes = _empty_nodes(graph, 6)
    _edges(graph, nodes, [(1, 2), (2, 3), (3, 1), (4, 1), (5, 4), (5, 6)])
    res.stream()
    expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiate, graph)


def test_Unit_hipGraph_BasicCyclic2(mod, res):
    graph = res.graph()
    nodes = _empty_nodes(graph, 5)
    _edges(graph, nodes, [(1, 2), (2, 3), (3, 1), (4, 1), (5, 4)])
    hip.hipGraphRemoveDependencies(graph, [nodes[2]], [nodes[0]])
    res.stream()
    res.instantiate(graph)


def test_Unit_hipGraph_BasicCyclic3(mod, res):
    graph = res.graph()
    nodes = _empty_nodes(graph, 6)
    _edges(graph, nodes, [(1, 2), (2, 3), (3, 1), (4, 1), (5, 4), (5, 6)])
    hip.hipGraphRemoveDependencies(graph, [nodes[4]], [nodes[3]])
    res.stream()
    expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiate, graph)
