"""hipGraphGetEdges: the edges of a built graph (all, a part, more room than edges, graphs of zero and
one node), the edge ends of a graph captured from three streams, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import (EQUAL, GREATER, LESSER, arrays, capture_nodes_common,
                                                         count_types, graph_nodes_common)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetEdges.cc"

E = hip.hipError_t
T = hip.hipGraphNodeType
K_NUM_OF_EDGES = 6


def check_edges(graph, test_num, test_type, nodes_from, nodes_to):
    """validate_hipGraphGetEdges_fromto; the Python call returns every edge, so the caller's arrays of
    ``test_num`` entries are the returned lists cut or padded with None."""
    got_from, got_to = hip.hipGraphGetEdges(graph)
    num = len(got_from) if test_type == GREATER else test_num
    fromnode = (list(got_from) + [None] * test_num)[:test_num]
    tonode = (list(got_to) + [None] * test_num)[:test_num]
    found = 0
    for f, t in zip(nodes_from, nodes_to):
        idx = next((i for i in range(num) if fromnode[i] is f), None)
        if idx is not None and tonode[idx] is t:
            found += 1
    if test_type == EQUAL:
        assert found == len(nodes_from)
    elif test_type == LESSER:
        assert found == test_num
    else:
        assert num == len(nodes_from)
        assert found == len(nodes_from)
        assert all(x is None for x in fromnode[num:]) and all(x is None for x in tonode[num:])


@pytest.mark.parametrize("section", ["count", EQUAL, LESSER, GREATER, "zero_or_one_node"])
def test_Unit_hipGraphGetEdges_Positive_Functional(mod, res, section):
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, _nodelist = graph_nodes_common(mod, graph, ar)
    hip.hipGraphAddDependencies(graph, from_, to)
    if section == "count":
        assert len(hip.hipGraphGetEdges(graph)[0]) == K_NUM_OF_EDGES
    elif section == EQUAL:
        check_edges(graph, K_NUM_OF_EDGES, EQUAL, from_, to)
    elif section == LESSER:
        check_edges(graph, K_NUM_OF_EDGES - 1, LESSER, from_, to)
    elif section == GREATER:
        check_edges(graph, K_NUM_OF_EDGES + 1, GREATER, from_, to)
    else:
        empty = hip.hipGraphCreate(0)
        assert len(hip.hipGraphGetEdges(empty)[0]) == 0
        hip.hipGraphAddEmptyNode(empty, None)
        assert len(hip.hipGraphGetEdges(empty)[0]) == 0
        hip.hipGraphDestroy(empty)


def test_Unit_hipGraphGetEdges_Positive_CapturedStream(mod, res):
    ar = arrays(res, 1024)
    graph = res.keep(capture_nodes_common(mod, ar, res.streams(3), res.events(3)))
    from_, to = hip.hipGraphGetEdges(graph)
    assert len(from_) == K_NUM_OF_EDGES
    expected = [{T.hipGraphNodeTypeMemcpy: 2, T.hipGraphNodeTypeKernel: 2, T.hipGraphNodeTypeMemset: 2},
                {T.hipGraphNodeTypeMemcpy: 3, T.hipGraphNodeTypeKernel: 3}]
    for ends, want in zip((from_, to), expected):
        assert count_types(ends) == want


@pytest.mark.parametrize("section", ["graph_null", "graph_uninitialized"])
def test_Unit_hipGraphGetEdges_Negative_Parameters(mod, res, section):
    graph = res.graph()
    start, end = res.events(2)
    a = hip.hipGraphAddEventRecordNode(graph, None, start)
    b = hip.hipGraphAddEventRecordNode(graph, None, end)
    hip.hipGraphAddDependencies(graph, [a], [b])
    # "From is nullptr", "To is nullptr" and "numEdges is nullptr" have no Python form; an uninitialized
    # hipGraph_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphGetEdges, None)
