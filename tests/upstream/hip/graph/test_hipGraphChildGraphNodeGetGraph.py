"""hipGraphChildGraphNodeGetGraph: the graph of one of two child graph nodes instantiated and launched
on its own, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphChildGraphNodeGetGraph.cc"

E = hip.hipError_t
N = 1024


def test_Unit_hipGraphChildGraphNodeGetGraph_Functional(mod, res):
    ar = arrays(res, N)
    graph, child1, child2 = res.graph(), res.graph(), res.graph()
    stream = res.stream()
    hip.hipGraphAddMemcpyNode1D(child1, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemcpyNode1D(child2, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    node1 = hip.hipGraphAddChildGraphNode(graph, None, child1)
    node2 = hip.hipGraphAddChildGraphNode(graph, None, child2)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                         (N + 255) // 256, 256))
    hip.hipGraphAddDependencies(graph, [node1], [node2])
    hip.hipGraphAddDependencies(graph, [node2], [add])
    hip.hipGraphAddDependencies(graph, [add], [d2h])
    got = hip.hipGraphChildGraphNodeGetGraph(node1)
    exe = res.instantiate(got)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipMemcpy(ar.c_h, ar.a_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    np.testing.assert_array_equal(ar.a_h, ar.c_h)


@pytest.mark.parametrize("section", ["node_null"])
def test_Unit_hipGraphChildGraphNodeGetGraph_Negative(mod, res, section):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    hip.hipGraphAddMemcpyNode1D(child, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddChildGraphNode(graph, None, child)
    # the other sections are HT_NVIDIA only
    expect_error(E.hipErrorInvalidValue, hip.hipGraphChildGraphNodeGetGraph, None)
