"""hipGraphAddDependencies: edges added one by one or as lists make the seven-node graph compute its
vector sum; empty and partial edge lists; argument errors (null and foreign nodes, duplicates,
self-edges)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import arrays, graph_nodes_common

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddDependencies.cc"

E = hip.hipError_t
NBYTES = 1024


@pytest.mark.parametrize("section", ["node_by_node", "node_lists"])
def test_Unit_hipGraphAddDependencies_Positive_Functional(mod, res, section):
    stream = res.stream()
    ar = arrays(res, 1024)
    graph = res.graph()
    from_, to, _nodelist = graph_nodes_common(mod, graph, ar)
    if section == "node_by_node":
        for f, t in zip(from_, to):
            hip.hipGraphAddDependencies(graph, [f], [t])
    else:
        hip.hipGraphAddDependencies(graph, from_, to)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    ar.check_add()


def _three_nodes(res, graph):
    a_d = res.malloc(NBYTES)
    a_h = np.zeros(NBYTES, np.uint8)
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 0, NBYTES, 1))
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, a_h, a_d, NBYTES, hip.hipMemcpyDeviceToHost)
    return memset_a, h2d, d2h


@pytest.mark.parametrize("section", ["zero_null", "zero_one_null", "zero_valid", "zero_same", "count_below_length"])
def test_Unit_hipGraphAddDependencies_Positive_Parameters(mod, res, section):
    graph = res.graph()
    memset_a, h2d, d2h = _three_nodes(res, graph)
    # numDependencies == 0 is an empty list whatever the arrays hold; "numDependencies < length" passes the
    # first entries only
    if section == "zero_null":
        hip.hipGraphAddDependencies(graph, None, None)
    elif section == "zero_one_null":
        hip.hipGraphAddDependencies(graph, [h2d][:0], None)
        hip.hipGraphAddDependencies(graph, None, [h2d][:0])
    elif section == "zero_valid":
        hip.hipGraphAddDependencies(graph, [h2d][:0], [d2h][:0])
    elif section == "zero_same":
        hip.hipGraphAddDependencies(graph, [h2d][:0], [h2d][:0])
    else:
        from_list, to_list = [memset_a, h2d], [h2d, d2h]
        hip.hipGraphAddDependencies(graph, from_list[:1], to_list[:1])
        assert len(hip.hipGraphNodeGetDependencies(h2d)) == 1
        assert len(hip.hipGraphNodeGetDependencies(d2h)) == 0
    assert len(hip.hipGraphGetEdges(graph)[0]) == (1 if section == "count_below_length" else 0)


NEGATIVE = ["graph_null", "graph_uninitialized", "one_null", "from_other_graph", "to_other_graph",
            "from_uninitialized", "to_uninitialized", "duplicate", "same_node"]


@pytest.mark.parametrize("section", NEGATIVE)
def test_Unit_hipGraphAddDependencies_Negative_Parameters(mod, res, section):
    negative_cases(res, section)


def negative_cases(res, section):
    """The SECTIONs both files share. A null or uninitialized node is None; "To/From are nullptr" with a
    count and "numDependencies > To/From length" have no Python form (a list carries its length)."""
    graph = res.graph()
    a_d = res.malloc(NBYTES)
    a_h = np.zeros(NBYTES, np.uint8)
    params = hip.hipMemsetParams(a_d, 0, NBYTES, 1)
    def memset(g=graph):
        return hip.hipGraphAddMemsetNode(g, None, params)
    def h2d(g=graph):
        return hip.hipGraphAddMemcpyNode1D(g, None, a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice)
    if section == "graph_null":
        m, c = memset(), h2d()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, None, [m], [c])
    elif section == "graph_uninitialized":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, None, [None], [None])
    elif section == "one_null":
        m = memset()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [m], [None])
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [None], [m])
    elif section in ("from_other_graph", "to_other_graph"):
        other = res.graph()
        m = memset(other if section == "from_other_graph" else graph)
        c = h2d(graph if section == "from_other_graph" else other)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [m], [c])
    elif section == "from_uninitialized":
        c = h2d()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [None], [c])
    elif section == "to_uninitialized":
        m = memset()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [m], [None])
    elif section == "duplicate":
        m, c = memset(), h2d()
        hip.hipGraphAddDependencies(graph, [m], [c])
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [m], [c])
    elif section == "same_node":
        m = memset()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddDependencies, graph, [m], [m])
    else:
        raise AssertionError(section)
