"""hipGraphNodeGetType: argument errors, the type of every kind of node, and the type counts / order of
graphs with and without edges, their clones, their child graphs and from another thread."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams, run_threads
from tests.upstream.hip.graph._dependency_common import arrays, count_types

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetType.cc"

E = hip.hipError_t
T = hip.hipGraphNodeType
SIZE = N = 1024


def callbackfunc(a_h):
    a_h[:SIZE] = np.arange(SIZE)


@pytest.mark.parametrize("section", ["node_null", "invalid_node"])
def test_Unit_hipGraphNodeGetType_Negative(mod, res, section):
    # "Pass nullptr to node type" has no Python form (the type is the return value); an invalid
    # (value-initialised) node is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetType, None)


@pytest.mark.parametrize("section", ["delete_and_assign", "override"])
def test_Unit_hipGraphNodeGetType_Functional(mod, res, section):
    graph = res.graph()
    arrays(res, N)
    event = res.event()
    stream = res.stream()
    hip.hipStreamWaitEvent(stream, event, 0)
    node = hip.hipGraphAddEventWaitNode(graph, None, event)
    hip.hipGraphNodeGetType(node)
    node = hip.hipGraphAddEmptyNode(graph, None)
    assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeEmpty


@pytest.mark.parametrize("section", ["host", "child", "memcpy", "kernel", "empty", "memset", "wait_event",
                                     "event_record"])
def test_Unit_hipGraphNodeGetType_NodeType(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    # the "Memcpy node NodeType from / to Symbol" sections need hipGraphAddMemcpyNodeFromSymbol /
    # ToSymbol (NOT_PORTED.md)
    if section == "host":
        node = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeHost
    elif section == "child":
        node = hip.hipGraphAddChildGraphNode(graph, None, res.graph())
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeGraph
    elif section == "memcpy":
        node = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
        hip.hipGraphNodeGetType(node)
        node = hip.hipGraphAddEmptyNode(graph, None)
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeEmpty
    elif section == "kernel":
        node = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N]))
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeKernel
    elif section == "empty":
        assert hip.hipGraphNodeGetType(hip.hipGraphAddEmptyNode(graph, None)) == T.hipGraphNodeTypeEmpty
    elif section == "memset":
        node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.a_d, 10, ar.nbytes, 1))
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeMemset
    elif section == "wait_event":
        event, stream = res.event(), res.stream()
        hip.hipStreamWaitEvent(stream, event, 0)
        node = hip.hipGraphAddEventWaitNode(graph, None, event)
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeWaitEvent
    else:
        event, stream = res.event(), res.stream()
        hip.hipEventRecord(event, stream)
        node = hip.hipGraphAddEventRecordNode(graph, None, event)
        assert hip.hipGraphNodeGetType(node) == T.hipGraphNodeTypeEventRecord


def _events(res):
    e1, e2 = res.event(), res.event()
    s1, s2 = res.stream(), res.stream()
    hip.hipStreamWaitEvent(s1, e1, 0)
    hip.hipEventRecord(e2, s2)
    return e1, e2


def _kernel(mod, ar):
    return kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N])


def chk_node_type(graph, expected: dict):
    """ChkNodeType: how many nodes of each type hipGraphGetNodes returns."""
    assert count_types(hip.hipGraphGetNodes(graph)) == expected


@pytest.mark.parametrize("section", ["cloned", "in_thread"])
def test_Unit_hipGraphNodeGetType_NodeTypeOfClonedGraph_NodeTypeInThread(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    host = hip.hipHostNodeParams(callbackfunc, ar.a_h)
    for _ in range(3):
        hip.hipGraphAddHostNode(graph, None, host)
    hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddHostNode(graph, None, host)
    hip.hipGraphAddKernelNode(graph, None, _kernel(mod, ar))
    child = res.graph()
    hip.hipGraphAddChildGraphNode(graph, None, child)
    hip.hipGraphAddChildGraphNode(graph, None, child)
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.a_d, 10, ar.nbytes, 1))
    e1, e2 = _events(res)
    hip.hipGraphAddEventWaitNode(graph, None, e1)
    hip.hipGraphAddEmptyNode(graph, None)
    hip.hipGraphAddEmptyNode(graph, None)
    hip.hipGraphAddEventRecordNode(graph, None, e2)
    expected = {T.hipGraphNodeTypeHost: 4, T.hipGraphNodeTypeMemcpy: 1, T.hipGraphNodeTypeKernel: 1,
                T.hipGraphNodeTypeMemset: 1, T.hipGraphNodeTypeGraph: 2, T.hipGraphNodeTypeWaitEvent: 1,
                T.hipGraphNodeTypeEmpty: 2, T.hipGraphNodeTypeEventRecord: 1}
    if section == "cloned":
        chk_node_type(res.keep(hip.hipGraphClone(graph)), expected)
    else:
        run_threads(lambda: chk_node_type(graph, expected))


def _child_four(res, ar, child, chain):
    """The child graph's memset, event wait, empty and event record nodes (in a chain if asked)."""
    m = hip.hipGraphAddMemsetNode(child, None, hip.hipMemsetParams(ar.a_d, 10, ar.nbytes, 1))
    e1, e2 = _events(res)
    w = hip.hipGraphAddEventWaitNode(child, [m] if chain else None, e1)
    if not chain:
        hip.hipGraphAddEmptyNode(child, None)
    x = hip.hipGraphAddEmptyNode(child, [w] if chain else None)
    hip.hipGraphAddEventRecordNode(child, [x] if chain else None, e2)


def test_Unit_hipGraphNodeGetType_NodeTypeOfChildGraph(mod, res):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    _child_four(res, ar, child, chain=False)
    hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphAddKernelNode(graph, None, _kernel(mod, ar))
    child_node = hip.hipGraphAddChildGraphNode(graph, None, child)
    chk_node_type(graph, {T.hipGraphNodeTypeHost: 1, T.hipGraphNodeTypeMemcpy: 2, T.hipGraphNodeTypeKernel: 1,
                          T.hipGraphNodeTypeGraph: 1})
    chk_node_type(hip.hipGraphChildGraphNodeGetGraph(child_node),
                  {T.hipGraphNodeTypeMemset: 1, T.hipGraphNodeTypeWaitEvent: 1, T.hipGraphNodeTypeEmpty: 2,
                   T.hipGraphNodeTypeEventRecord: 1})


PARENT_ORDER = [T.hipGraphNodeTypeHost, T.hipGraphNodeTypeMemcpy, T.hipGraphNodeTypeKernel, T.hipGraphNodeTypeGraph,
                T.hipGraphNodeTypeMemset, T.hipGraphNodeTypeWaitEvent, T.hipGraphNodeTypeEmpty,
                T.hipGraphNodeTypeEventRecord]
CHILD_ORDER = [T.hipGraphNodeTypeMemset, T.hipGraphNodeTypeWaitEvent, T.hipGraphNodeTypeEmpty,
               T.hipGraphNodeTypeEventRecord]


def chk_node_type_with_dependency(graph, order):
    """ChkNodeTypeWithDependency: hipGraphGetNodes returns the nodes in the order they were added."""
    nodes = hip.hipGraphGetNodes(graph)
    for i, node in enumerate(nodes):
        assert hip.hipGraphNodeGetType(node) == order[i]


def _parent_chain(mod, res, ar, graph, child, full):
    host = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    cp = hip.hipGraphAddMemcpyNode1D(graph, [host], ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, [cp], _kernel(mod, ar))
    c = hip.hipGraphAddChildGraphNode(graph, [k], child)
    if full:
        m = hip.hipGraphAddMemsetNode(graph, [c], hip.hipMemsetParams(ar.a_d, 10, ar.nbytes, 1))
        e1, e2 = _events(res)
        w = hip.hipGraphAddEventWaitNode(graph, [m], e1)
        x = hip.hipGraphAddEmptyNode(graph, [w])
        hip.hipGraphAddEventRecordNode(graph, [x], e2)
    return c


@pytest.mark.parametrize("section", ["cloned", "in_thread"])
def test_Unit_hipGraphNodeGetType_ClonedGraph_InThread_WithDependencies(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    _parent_chain(mod, res, ar, graph, res.graph(), full=True)
    if section == "cloned":
        chk_node_type_with_dependency(res.keep(hip.hipGraphClone(graph)), PARENT_ORDER)
    else:
        run_threads(lambda: chk_node_type_with_dependency(graph, PARENT_ORDER))


@pytest.mark.parametrize("section", ["graph", "child_graph"])
def test_Unit_hipGraphNodeGetType_NodeTypeOfChildGraph_WithDependency(mod, res, section):
    ar = arrays(res, N)
    graph, child = res.graph(), res.graph()
    _child_four(res, ar, child, chain=True)
    child_node = _parent_chain(mod, res, ar, graph, child, full=False)
    if section == "graph":
        chk_node_type_with_dependency(graph, PARENT_ORDER)
    else:
        chk_node_type_with_dependency(hip.hipGraphChildGraphNodeGetGraph(child_node), CHILD_ORDER)
