"""hipGraphGetNodes (older cases): the node list of a four-node graph with room to spare, the node types
of a captured graph, and argument checks."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import arrays, count_types
from tests.upstream.hip.graph._old_common import add_graph, capture_square, check_square, run

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetNodes_old.cc"

E = hip.hipError_t
T = hip.hipGraphNodeType
N = 4096


def test_Unit_hipGraphGetNodes_Functional(mod, res):
    ar = arrays(res, 1024)
    graph = res.graph()
    nodelist = list(add_graph(mod, graph, ar))
    nodes = hip.hipGraphGetNodes(graph)
    assert len(nodes) == len(nodelist)
    # upstream asks with four spare entries: the count comes back as the real one (the list's length)
    for node in nodelist:
        assert any(node is x for x in nodes), f"added node {node!r} not in the returned list"
    run(res, graph)
    ar.check_add()


def _captured(mod, res):
    a_h = (np.arange(N) + 3.146).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(N * 4), res.malloc(N * 4)
    graph = res.keep(capture_square(mod, res.stream(), a_h, a_d, c_h, c_d, N))
    return graph, a_h, c_h


def test_Unit_hipGraphGetNodes_CapturedStream(mod, res):
    graph, a_h, c_h = _captured(mod, res)
    nodes = hip.hipGraphGetNodes(graph)
    assert len(nodes) == 2 + 1 + 1
    assert count_types(nodes) == {T.hipGraphNodeTypeMemcpy: 2, T.hipGraphNodeTypeKernel: 1,
                                  T.hipGraphNodeTypeMemset: 1}
    run(res, graph)
    check_square(a_h, c_h)


@pytest.mark.parametrize("section", ["graph_null", "no_nodes", "fewer_than_nodes"])
def test_Unit_hipGraphGetNodes_ParamValidation(mod, res, section):
    graph, _a_h, _c_h = _captured(mod, res)
    num_nodes = len(hip.hipGraphGetNodes(graph))
    # "numNodes as nullptr" has no Python form
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphGetNodes, None)
    elif section == "no_nodes":
        empty = res.graph()
        assert len(hip.hipGraphGetNodes(empty)) == 0
    else:
        part = hip.hipGraphGetNodes(graph)[:num_nodes - 1]
        assert len(part) == num_nodes - 1
        for node in part:
            assert 0 <= hip.hipGraphNodeGetType(node) < len(T)
