"""hipGraphCycle.cc: instantiating a graph of empty nodes with a cycle fails, and succeeds once an edge of
the cycle is removed; BasicCyclic4 and 5 delete a node of a copy chain (hipGraphDestroyNode) and run it."""
import numpy as np

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


#: upstream's N = 1024 * 1024 ints, kept small
N = 64 * 1024


def _copy_chain(res):
    nbytes = N * 4
    x_h, y_h = np.arange(N, dtype=np.int32) + 3, np.zeros(N, np.int32)
    x_d, y_d = res.malloc(nbytes), res.malloc(nbytes)
    graph = res.graph()
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, x_d, x_h, nbytes, hip.hipMemcpyHostToDevice)
    d2d = hip.hipGraphAddMemcpyNode1D(graph, None, y_d, x_d, nbytes, hip.hipMemcpyDeviceToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, y_h, y_d, nbytes, hip.hipMemcpyDeviceToHost)
    return graph, (h2d, d2d, d2h), x_h, y_h


def _run_and_check(res, graph, x_h, y_h):
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(y_h, x_h)


def test_Unit_hipGraph_BasicCyclic4(mod, res):
    graph, (h2d, d2d, d2h), x_h, y_h = _copy_chain(res)
    empty1 = hip.hipGraphAddEmptyNode(graph, None)
    hip.hipGraphAddDependencies(graph, [h2d, empty1, d2d], [empty1, d2d, d2h])
    hip.hipGraphRemoveDependencies(graph, [h2d], [empty1])
    hip.hipGraphRemoveDependencies(graph, [empty1], [d2d])
    hip.hipGraphDestroyNode(empty1)
    hip.hipGraphAddDependencies(graph, [h2d], [d2d])
    _run_and_check(res, graph, x_h, y_h)


def test_Unit_hipGraph_BasicCyclic5(mod, res):
    graph, (h2d, d2d, d2h), x_h, y_h = _copy_chain(res)
    empty1, empty2, empty3 = _empty_nodes(graph, 3)
    hip.hipGraphAddDependencies(graph, [h2d, empty1, d2d, d2h, empty2, empty3],
                                [empty1, d2d, d2h, empty2, empty3, d2h])
    hip.hipGraphRemoveDependencies(graph, [h2d], [empty1])
    hip.hipGraphRemoveDependencies(graph, [empty1], [d2d])
    hip.hipGraphDestroyNode(empty1)
    hip.hipGraphAddDependencies(graph, [h2d], [d2d])
    hip.hipGraphRemoveDependencies(graph, [empty3], [d2h])
    _run_and_check(res, graph, x_h, y_h)
