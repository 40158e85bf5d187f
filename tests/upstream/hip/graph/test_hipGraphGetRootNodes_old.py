"""hipGraphGetRootNodes (older cases): the roots of a four-node graph, of a graph captured with forked
memsets, argument checks, and the root count as a chain of dependencies grows, in a graph, in its clone and as
a child graph."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays
from tests.upstream.hip.graph._old_common import add_graph, capture_square_forked, check_square, run

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetRootNodes_old.cc"

E = hip.hipError_t
T = hip.hipGraphNodeType
N = 4096
NUM_OF_DUMMY_NODES = 8


def test_Unit_hipGraphGetRootNodes_Functional(mod, res):
    ar = arrays(res, 1024)
    graph = res.graph()
    h2d_a, h2d_b, _k, _d2h = add_graph(mod, graph, ar)
    rootnodelist = [h2d_a, h2d_b]
    roots = hip.hipGraphGetRootNodes(graph)
    assert len(roots) == len(rootnodelist)
    for node in rootnodelist:
        assert any(node is x for x in roots), f"root node {node!r} not returned"
    run(res, graph)
    ar.check_add()


def _captured(mod, res):
    a_h = (np.arange(N) + 3.146).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(N * 4), res.malloc(N * 4)
    s1, s2, ms = res.streams(3)
    ev1, ev2, fork = res.events(3)
    graph = res.keep(capture_square_forked(mod, ms, s1, s2, fork, ev1, ev2, a_h, a_d, c_h, c_d, N))
    return graph, a_h, c_h


def test_Unit_hipGraphGetRootNodes_CapturedStream(mod, res):
    graph, a_h, c_h = _captured(mod, res)
    roots = hip.hipGraphGetRootNodes(graph)
    assert len(roots) == 2
    assert hip.hipGraphNodeGetType(roots[0]) == T.hipGraphNodeTypeMemset
    assert hip.hipGraphNodeGetType(roots[1]) == T.hipGraphNodeTypeMemset
    run(res, graph)
    check_square(a_h, c_h)


@pytest.mark.parametrize("section", ["graph_null", "no_nodes", "fewer_than_roots"])
def test_Unit_hipGraphGetRootNodes_ParamValidation(mod, res, section):
    graph, _a_h, _c_h = _captured(mod, res)
    num_roots = len(hip.hipGraphGetRootNodes(graph))
    # "numRootNodes as nullptr" has no Python form
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphGetRootNodes, None)
    elif section == "no_nodes":
        assert len(hip.hipGraphGetRootNodes(res.graph())) == 0
    else:
        part = hip.hipGraphGetRootNodes(graph)[:num_roots - 1]
        assert len(part) == num_roots - 1
        for node in part:
            assert 0 <= hip.hipGraphNodeGetType(node) < len(T)


def _dummies(mod, graph):
    return [hip.hipGraphAddKernelNode(graph, None, kparams(mod, "empty", [])) for _ in range(NUM_OF_DUMMY_NODES)]


def test_Unit_hipGraphGetRootNodes_Complx_NumRootNodes(mod, res):
    graph = res.graph()
    nodes = _dummies(mod, graph)
    assert len(hip.hipGraphGetRootNodes(graph)) == NUM_OF_DUMMY_NODES
    for i in range(NUM_OF_DUMMY_NODES - 1):
        hip.hipGraphAddDependencies(graph, [nodes[i]], [nodes[i + 1]])
        assert len(hip.hipGraphGetRootNodes(graph)) == NUM_OF_DUMMY_NODES - i - 1


def test_Unit_hipGraphGetRootNodes_Complx_NumRootNodes_ClonedGrph(mod, res):
    graph = res.graph()
    nodes = _dummies(mod, graph)
    cloned = res.keep(hip.hipGraphClone(graph))
    assert len(hip.hipGraphGetRootNodes(cloned)) == NUM_OF_DUMMY_NODES
    for i in range(NUM_OF_DUMMY_NODES - 1):
        node1 = hip.hipGraphNodeFindInClone(nodes[i], cloned)
        node2 = hip.hipGraphNodeFindInClone(nodes[i + 1], cloned)
        hip.hipGraphAddDependencies(cloned, [node1], [node2])
        assert len(hip.hipGraphGetRootNodes(cloned)) == NUM_OF_DUMMY_NODES - i - 1


def test_Unit_hipGraphGetRootNodes_Complx_NRootNodesAsChildGraph(mod, res):
    graph, graph1 = res.graph(), res.graph()
    _dummies(mod, graph)
    hip.hipGraphAddChildGraphNode(graph1, None, graph)
    assert len(hip.hipGraphGetRootNodes(graph1)) == 1
