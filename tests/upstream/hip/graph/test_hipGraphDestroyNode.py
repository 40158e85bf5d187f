"""hipGraphDestroyNode: a null node, a memset node destroyed, a dependency destroyed before
instantiation (the graph still runs), and node/edge counts while a chain is destroyed from the left (in
the graph, in a clone found with hipGraphNodeFindInClone, and in a graph whose child graph node was
destroyed first)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphDestroyNode.cc"

E = hip.hipError_t
NUM_OF_DUMMY_NODES = 8


def test_Unit_hipGraphDestroyNode_Negative(mod, res):
    expect_error(E.hipErrorInvalidValue, hip.hipGraphDestroyNode, None)


def test_Unit_hipGraphDestroyNode_BasicFunctionality(mod, res):
    size = 1024
    dst = res.malloc(size)
    graph = res.graph()
    node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(dst, 0, elementSize=1, width=size, height=1))
    hip.hipGraphDestroyNode(node)
    assert hip.hipGraphGetNodes(graph) == []


def test_Unit_hipGraphDestroyNode_DestroyDependencyNode(mod, res):
    n = 1024
    ar = arrays(res, n)
    graph = res.graph()
    a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    b2 = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, n], 4, 256))
    for x in (a, b, b2):
        hip.hipGraphAddDependencies(graph, x, k)
    hip.hipGraphAddDependencies(graph, k, c)
    hip.hipGraphDestroyNode(b)
    exe = res.instantiate(graph)
    stream = res.stream()
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    # checkVectorADD(A_h, C_h, B_h): B_d was filled from C_h, the sum came back into B_h
    np.testing.assert_array_equal(ar.b_h, ar.a_h + ar.c_h)


def _chain(mod, graph):
    nodes = [hip.hipGraphAddKernelNode(graph, None, kparams(mod, "empty", [])) for _ in range(NUM_OF_DUMMY_NODES)]
    for i in range(1, NUM_OF_DUMMY_NODES):
        hip.hipGraphAddDependencies(graph, nodes[i - 1], nodes[i])
    return nodes


def _destroy_from_left(graph, nodes, find=lambda n: n):
    for i in range(NUM_OF_DUMMY_NODES - 1):
        hip.hipGraphDestroyNode(find(nodes[i]))
        assert len(hip.hipGraphGetNodes(graph)) == NUM_OF_DUMMY_NODES - i - 1
        assert len(hip.hipGraphGetEdges(graph)[0]) == NUM_OF_DUMMY_NODES - i - 2


def test_Unit_hipGraphDestroyNode_Complx_ChkNumOfNodesNDep(mod, res):
    graph = res.graph()
    nodes = _chain(mod, graph)
    _destroy_from_left(graph, nodes)
    hip.hipGraphDestroyNode(nodes[-1])
    assert hip.hipGraphGetNodes(graph) == []


def test_Unit_hipGraphDestroyNode_Complx_ChkNumOfNodesNDep_ClonedGrph(mod, res):
    graph = res.graph()
    nodes = _chain(mod, graph)
    clone = res.keep(hip.hipGraphClone(graph))
    _destroy_from_left(clone, nodes, lambda n: hip.hipGraphNodeFindInClone(n, clone))
    assert len(hip.hipGraphGetNodes(graph)) == NUM_OF_DUMMY_NODES


def test_Unit_hipGraphDestroyNode_Complx_ChkNumOfNodesNDep_ChldNode(mod, res):
    graph0, graph1 = res.graph(), res.graph()
    nodes = _chain(mod, graph0)
    child = hip.hipGraphAddChildGraphNode(graph1, None, graph0)
    hip.hipGraphDestroyNode(child)
    _destroy_from_left(graph0, nodes)
    assert hip.hipGraphGetNodes(graph1) == []
