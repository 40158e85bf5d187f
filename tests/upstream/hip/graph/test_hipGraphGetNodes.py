"""hipGraphGetNodes: the node list of a built graph (all of it, a part, more room than nodes, an empty
graph), the node types of a captured graph, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import (EQUAL, GREATER, LESSER, arrays, capture_nodes_common,
                                                         check_node_list, count_types, graph_nodes_common)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetNodes.cc"

E = hip.hipError_t
T = hip.hipGraphNodeType
K_NUM_OF_NODES = 7


@pytest.mark.parametrize("section", ["count", EQUAL, LESSER, GREATER, "empty_graph"])
def test_Unit_hipGraphGetNodes_Positive_Functional(mod, res, section):
    stream = res.stream()
    graph = res.graph()
    ar = arrays(res, 1024)
    from_, to, nodelist = graph_nodes_common(mod, graph, ar)
    hip.hipGraphAddDependencies(graph, from_, to)
    if section == "count":
        assert len(hip.hipGraphGetNodes(graph)) == len(nodelist)
    elif section == EQUAL:
        check_node_list(hip.hipGraphGetNodes(graph), nodelist, K_NUM_OF_NODES, EQUAL)
    elif section == LESSER:
        check_node_list(hip.hipGraphGetNodes(graph), nodelist, K_NUM_OF_NODES - 1, LESSER)
    elif section == GREATER:
        check_node_list(hip.hipGraphGetNodes(graph), nodelist, K_NUM_OF_NODES + 1, GREATER)
    else:
        empty = hip.hipGraphCreate(0)
        assert len(hip.hipGraphGetNodes(empty)) == 0
        hip.hipGraphDestroy(empty)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


def test_Unit_hipGraphGetNodes_Positive_CapturedStream(mod, res):
    ar = arrays(res, 4096, np.float32)
    stream = res.stream()
    graph = res.keep(capture_nodes_common(mod, ar, res.streams(3), res.events(3)))
    nodes = hip.hipGraphGetNodes(graph)
    assert len(nodes) == 3 + 2 + 2
    counts = count_types(nodes)
    assert set(counts) <= {T.hipGraphNodeTypeMemcpy, T.hipGraphNodeTypeKernel, T.hipGraphNodeTypeMemset}
    assert counts.get(T.hipGraphNodeTypeMemcpy) == 3
    assert counts.get(T.hipGraphNodeTypeKernel) == 2
    assert counts.get(T.hipGraphNodeTypeMemset) == 2
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


@pytest.mark.parametrize("section", ["graph_null", "graph_uninitialized"])
def test_Unit_hipGraphGetNodes_Negative_Parameters(mod, res, section):
    graph = res.graph()
    start, end = res.events(2)
    hip.hipGraphAddEventRecordNode(graph, None, start)
    hip.hipGraphAddEventRecordNode(graph, None, end)
    assert len(hip.hipGraphGetNodes(graph)) == 2
    # "numNodes as nullptr" has no Python form; an uninitialized hipGraph_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphGetNodes, None)
