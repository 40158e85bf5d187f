"""hipGraphRemoveDependencies (older cases): removing the three edges into the add kernel, a count of
zero, an edge of a captured graph, rewiring around a new kernel node, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import arrays, capture_nodes_common, graph_nodes_common
from tests.upstream.hip.graph.test_hipGraphRemoveDependencies import (change_compute_func, edge_present,
                                                                      negative_graph)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphRemoveDependencies_old.cc"

E = hip.hipError_t
TOTAL_NUM_OF_EDGES = 6


@pytest.mark.parametrize("section", ["scenario_1", "scenario_3"])
def test_Unit_hipGraphRemoveDependencies_Func_Manual(mod, res, section):
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, _nodelist = graph_nodes_common(mod, graph, ar)
    for f, t in zip(from_, to):
        hip.hipGraphAddDependencies(graph, [f], [t])
    if section == "scenario_1":
        for i in (2, 3, 4):                        # H2D_A, H2D_B and memsetKer_C -> vecAdd
            hip.hipGraphRemoveDependencies(graph, [from_[i]], [to[i]])
        assert sum(edge_present(graph, from_[i], to[i]) for i in (2, 3, 4)) == 0
        assert len(hip.hipGraphGetEdges(graph)[0]) == TOTAL_NUM_OF_EDGES - 3
    else:
        hip.hipGraphRemoveDependencies(graph, [from_[2]][:0], [to[2]][:0])    # numDependencies 0
        assert len(hip.hipGraphGetEdges(graph)[0]) == TOTAL_NUM_OF_EDGES


def test_Unit_hipGraphRemoveDependencies_Func_StrmCapture(mod, res):
    ar = arrays(res, 1024)
    graph = res.keep(capture_nodes_common(mod, ar, res.streams(3), res.events(3)))
    assert len(hip.hipGraphGetNodes(graph)) == 7
    f, t = hip.hipGraphGetEdges(graph)
    assert len(f) == TOTAL_NUM_OF_EDGES
    hip.hipGraphRemoveDependencies(graph, [f[0]], [t[0]])
    assert len(hip.hipGraphGetEdges(graph)[0]) == TOTAL_NUM_OF_EDGES - 1


def test_Unit_hipGraphRemoveDependencies_ChangeComputeFunc(mod, res):
    change_compute_func(mod, res)


@pytest.mark.parametrize("section", ["graph_null", "from_null", "to_null", "graph_uninitialized", "non_existing_node",
                                     "non_existing_dependency", "twice"])
def test_Unit_hipGraphRemoveDependencies_Negative(mod, res, section):
    graph, memset_a, n_start, n_end = negative_graph(res)
    empty = hip.hipGraphAddEmptyNode(graph, None)
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, None, [n_start], [memset_a])
    elif section == "from_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, graph, [None], [memset_a])
    elif section == "to_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, graph, [n_start], [None])
    elif section == "graph_uninitialized":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, None, [n_start], [None])
    elif section == "non_existing_node":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, graph, [n_start], [empty])
    elif section == "non_existing_dependency":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, graph, [n_start], [n_end])
    else:
        hip.hipGraphRemoveDependencies(graph, [n_start], [memset_a])
        expect_error(E.hipErrorInvalidValue, hip.hipGraphRemoveDependencies, graph, [n_start], [memset_a])
