"""hipGraphExecChildGraphNodeSetParams: argument errors (the parent graph, a child of another
topology), and an exec's child graph node given the parameters of another graph (one copy node; a
copy, two copies and a kernel), launched."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecChildGraphNodeSetParams.cc"

E = hip.hipError_t
N = 1024
NBYTES = N * 4
BLOCK = 256
H2D, D2H, D2D = hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost, hip.hipMemcpyDeviceToDevice


def _setup(res, ar):
    graph, child1, child2 = res.graph(), res.graph(), res.graph()
    hip.hipMemcpy(ar.c_d, ar.c_h, NBYTES, H2D)
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, H2D)
    hip.hipGraphAddMemcpyNode1D(child1, None, ar.b_d, ar.a_d, NBYTES, D2D)
    child_node = hip.hipGraphAddChildGraphNode(graph, None, child1)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_h, ar.b_d, NBYTES, D2H)
    hip.hipGraphAddDependencies(graph, [h2d_a, child_node], [child_node, d2h])
    b_child = hip.hipGraphAddMemcpyNode1D(child2, None, ar.b_d, ar.c_d, NBYTES, D2D)
    return graph, child2, child_node, b_child


def _err(*args):
    try:
        hip.hipGraphExecChildGraphNodeSetParams(*args)
    except hip.HipError as exc:
        return exc.error
    return E.hipSuccess


@pytest.mark.parametrize("section", ["exec_null", "node_null", "child_graph_null", "parent_graph",
                                     "child_topology_changed"])
def test_Unit_hipGraphExecChildGraphNodeSetParams_Negative(mod, res, section):
    ar = arrays(res, N)
    graph, child2, child_node, b_child = _setup(res, ar)
    exe = res.instantiate(graph)
    if section == "exec_null":
        assert _err(None, child_node, child2) == E.hipErrorInvalidValue
    elif section == "node_null":
        assert _err(exe, None, child2) == E.hipErrorInvalidValue
    elif section == "child_graph_null":
        assert _err(exe, child_node, None) == E.hipErrorInvalidValue
    elif section == "parent_graph":
        assert _err(exe, child_node, graph) != E.hipSuccess
    else:
        new = hip.hipGraphAddMemcpyNode1D(child2, None, ar.b_d, ar.c_d, NBYTES, D2D)
        hip.hipGraphAddDependencies(child2, b_child, new)
        assert _err(exe, child_node, child2) != E.hipSuccess


def test_Unit_hipGraphExecChildGraphNodeSetParams_BasicFunc(mod, res):
    ar = arrays(res, N)
    ar.c_h[:] = np.arange(N) * 7
    graph, child2, child_node, _b = _setup(res, ar)
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphExecChildGraphNodeSetParams(exe, child_node, child2)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.b_h, ar.c_h)


def _child(mod, res, ar, c_src):
    child = res.graph()
    ab = hip.hipGraphAddMemcpyNode1D(child, None, ar.b_d, ar.a_d, NBYTES, D2D)
    b = hip.hipGraphAddMemcpyNode1D(child, [ab], ar.b_d, ar.b_h, NBYTES, H2D)
    c = hip.hipGraphAddMemcpyNode1D(child, [ab], ar.c_d, c_src, NBYTES, H2D)
    hip.hipGraphAddKernelNode(child, [b, c], kparams(mod, "vectorADD_i32", [ar.b_d, ar.c_d, ar.a_d, N],
                                                     N // BLOCK, BLOCK))
    return child


def test_Unit_hipGraphExecChildGraphNodeSetParams_ChildTopology(mod, res):
    ar = arrays(res, N)
    stream = res.stream()
    graph = res.graph()
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, H2D)
    child_node = hip.hipGraphAddChildGraphNode(graph, None, _child(mod, res, ar, ar.c_h))
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.a_d, NBYTES, D2H)
    hip.hipGraphAddDependencies(graph, [h2d_a, child_node], [child_node, d2h])
    child2 = _child(mod, res, ar, ar.b_h)
    exe = res.instantiate(graph)
    hip.hipGraphExecChildGraphNodeSetParams(exe, child_node, child2)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.a_h, ar.b_h + ar.b_h)
