"""hipGraphGetEdges (older cases): the six edges of a seven-node graph joined by hipGraphAddDependencies,
graphs of zero and one node, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import EQUAL, GREATER, LESSER, arrays, graph_nodes_common
from tests.upstream.hip.graph.test_hipGraphGetEdges import check_edges

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetEdges_old.cc"

E = hip.hipError_t
EXPECTED_NUM_OF_EDGES = 6


@pytest.mark.parametrize("section", ["count", EQUAL, LESSER, GREATER, "zero_or_one_node"])
def test_Unit_hipGraphGetEdges_Functionality(mod, res, section):
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, _nodelist = graph_nodes_common(mod, graph, ar)
    for f, t in zip(from_, to):                       # one hipGraphAddDependencies call per edge
        hip.hipGraphAddDependencies(graph, [f], [t])
    if section == "count":
        assert len(hip.hipGraphGetEdges(graph)[0]) == EXPECTED_NUM_OF_EDGES
    elif section == EQUAL:
        check_edges(graph, EXPECTED_NUM_OF_EDGES, EQUAL, from_, to)
    elif section == LESSER:
        check_edges(graph, EXPECTED_NUM_OF_EDGES - 1, LESSER, from_, to)
    elif section == GREATER:
        check_edges(graph, EXPECTED_NUM_OF_EDGES + 1, GREATER, from_, to)
    else:
        empty = res.graph()
        assert len(hip.hipGraphGetEdges(empty)[0]) == 0
        hip.hipGraphAddEmptyNode(empty, None)
        assert len(hip.hipGraphGetEdges(empty)[0]) == 0


@pytest.mark.parametrize("section", ["graph_null", "graph_uninitialized"])
def test_Unit_hipGraphGetEdges_Negative(mod, res, section):
    res.graph()
    # "from", "to" and "numEdges" as nullptr have no Python form; an uninitialized hipGraph_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphGetEdges, None)
