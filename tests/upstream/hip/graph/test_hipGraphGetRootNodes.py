"""hipGraphGetRootNodes: the root nodes of a built graph (all, a part, more room than roots, an empty
graph), the roots of a graph captured from three streams, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import (EQUAL, GREATER, LESSER, arrays, capture_nodes_common,
                                                         check_node_list, graph_nodes_common)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphGetRootNodes.cc"

E = hip.hipError_t
K_NUM_OF_ROOT_NODES = 3


@pytest.mark.parametrize("section", ["count", EQUAL, LESSER, GREATER, "empty_graph"])
def test_Unit_hipGraphGetRootNodes_Positive_Functional(mod, res, section):
    stream = res.stream()
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, nodelist = graph_nodes_common(mod, graph, ar)
    hip.hipGraphAddDependencies(graph, from_, to)
    roots = nodelist[:3]
    if section == "count":
        assert len(hip.hipGraphGetRootNodes(graph)) == len(roots)
    elif section == EQUAL:
        check_node_list(hip.hipGraphGetRootNodes(graph), roots, K_NUM_OF_ROOT_NODES, EQUAL)
    elif section == LESSER:
        check_node_list(hip.hipGraphGetRootNodes(graph), roots, K_NUM_OF_ROOT_NODES - 1, LESSER)
    elif section == GREATER:
        check_node_list(hip.hipGraphGetRootNodes(graph), roots, K_NUM_OF_ROOT_NODES + 1, GREATER)
    else:
        empty = hip.hipGraphCreate(0)
        assert len(hip.hipGraphGetRootNodes(empty)) == 0
        hip.hipGraphDestroy(empty)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


def test_Unit_hipGraphGetRootNodes_Positive_CapturedStream(mod, res):
    ar = arrays(res, 4096, np.float32)
    stream = res.stream()
    graph = res.keep(capture_nodes_common(mod, ar, res.streams(3), res.events(3)))
    assert len(hip.hipGraphGetRootNodes(graph)) == 3
    # the root node types are checked on NVIDIA only (EXSWHTEC-225)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


@pytest.mark.parametrize("section", ["graph_null", "graph_uninitialized"])
def test_Unit_hipGraphGetRootNodes_Negative_Parameters(mod, res, section):
    graph = res.graph()
    start, end = res.events(2)
    hip.hipGraphAddEventRecordNode(graph, None, start)
    hip.hipGraphAddEventRecordNode(graph, None, end)
    assert len(hip.hipGraphGetRootNodes(graph)) == 2
    # "numRootNodes as nullptr" has no Python form; an uninitialized hipGraph_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphGetRootNodes, None)
