"""hipGraphExecUpdate: argument errors; the failures for another node type, node count, copy kind,
dependencies and device (each with its hipGraphExecUpdateResult and error node); updates from a clone
and from a graph with other parameters (a copy to another buffer, another kernel), launched.

The Python form returns ``(hErrorNode_out, updateResult_out)``; a failure raises
hipErrorGraphExecUpdateFailure with both on the HipError."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecUpdate.cc"

E = hip.hipError_t
R = hip.hipGraphExecUpdateResult
N = 1024
NBYTES = N * 4
BLOCK = 256
H2D, D2H = hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost


def update(exe, graph):
    """hipGraphExecUpdate as upstream calls it: (hipError_t, hErrorNode_out, updateResult_out)."""
    try:
        node, result = hip.hipGraphExecUpdate(exe, graph)
        return E.hipSuccess, node, result
    except hip.HipError as exc:
        return exc.error, getattr(exc, "hErrorNode_out", None), getattr(exc, "updateResult_out", None)


def memset_params(dst, value=0, nbytes=NBYTES):
    return hip.hipMemsetParams(dst, value, 0, 1, width=nbytes, height=1)


@pytest.mark.parametrize("section", ["exec_null", "graph_null"])
def test_Unit_hipGraphExecUpdate_Negative_Basic(mod, res, section):
    # upstream passes a null exec and a null graph in every section; the null out-pointer sections have no
    # Python form (the results are returned)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecUpdate, None, None)


def test_Unit_hipGraphExecUpdate_Negative_TypeChange(mod, res):
    ar = arrays(res, N)
    dev = res.malloc(N)
    graph = res.graph()
    hip.hipGraphAddMemsetNode(graph, None, memset_params(dev, 0, N))
    exe = res.instantiate(graph)
    graph2 = res.graph()
    hip.hipGraphAddMemcpyNode1D(graph2, None, ar.a_d, ar.a_h, N, H2D)
    ret, _node, result = update(exe, graph2)
    assert result == R.hipGraphExecUpdateErrorNodeTypeChanged
    assert ret == E.hipErrorGraphExecUpdateFailure


def _vec_graph(mod, res, ar, kernel="vectorADD_i32", c_h=None, args=None):
    graph = res.graph()
    a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, H2D)
    b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, NBYTES, H2D)
    c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h if c_h is None else c_h, ar.c_d, NBYTES, D2H)
    args = [ar.a_d, ar.b_d, ar.c_d, N] if args is None else args
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, kernel, args, N // BLOCK, BLOCK))
    return graph, a, b, c, k


@pytest.mark.parametrize("section", ["node_deleted_from_graph", "node_deleted_from_exec", "dependencies_differ"])
def test_Unit_hipGraphExecUpdate_Negative_CountDiffer(mod, res, section):
    ar = arrays(res, N)
    graph1, a, b, c, k = _vec_graph(mod, res, ar)
    hip.hipGraphAddDependencies(graph1, [a, b, k], [k, k, c])
    graph2 = res.keep(hip.hipGraphClone(graph1))
    hip.hipGraphAddMemcpyNode1D(graph2, None, ar.c_h, ar.c_d, NBYTES, D2H)
    exe1, exe2 = res.instantiate(graph1), res.instantiate(graph2)
    if section == "node_deleted_from_graph":
        ret = update(exe2, graph1)[0]
    elif section == "node_deleted_from_exec":
        ret = update(exe1, graph2)[0]
    else:
        graph3, a3, b3, c3, k3 = _vec_graph(mod, res, ar)
        hip.hipGraphAddDependencies(graph3, [a3, b3, c3], [k3, k3, k3])
        ret = update(exe1, graph3)[0]
    assert ret == E.hipErrorGraphExecUpdateFailure


@pytest.mark.parametrize("section", ["plain", "clone_first"])
def test_Unit_hipGraphExecUpdate_Functional(mod, res, section):
    ar = arrays(res, N)
    h_data = np.zeros(N, np.int32)
    stream = res.stream()
    # vector_square<int> takes (in, out, n): upstream passes it vectorADD's four arguments
    graph, a, b, c, k = _vec_graph(mod, res, ar, "graph_vector_square_i32", args=[ar.a_d, ar.b_d, N])
    hip.hipGraphAddDependencies(graph, [a, b, k], [k, k, c])
    exe = res.instantiate(graph)
    if section == "clone_first":
        cloned = res.keep(hip.hipGraphClone(graph))
        assert update(exe, cloned)[0] == E.hipSuccess
    graph2, a2, b2, c2, k2 = _vec_graph(mod, res, ar)
    hip.hipGraphMemcpyNodeSetParams1D(c2, h_data, ar.c_d, NBYTES, D2H)
    hip.hipGraphAddDependencies(graph2, [a2, b2, k2], [k2, k2, c2])
    ret, _node, result = update(exe, graph2)
    assert ret == E.hipSuccess and result == R.hipGraphExecUpdateSuccess
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(h_data, ar.a_h + ar.b_h)


@pytest.mark.parametrize("section", ["same_kind", "other_kind"])
def test_Unit_hipGraphExecUpdate_Negative_Functional_ParametersChanged(mod, res, section):
    ar = arrays(res, N)
    graph1 = res.graph()
    hip.hipGraphAddMemcpyNode1D(graph1, None, ar.a_d, ar.a_h, NBYTES, H2D)
    exe1 = res.instantiate(graph1)
    graph = res.graph()
    if section == "same_kind":
        hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, NBYTES, H2D)
        assert update(exe1, graph)[0] == E.hipSuccess
    else:
        memcpy_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_h, ar.b_d, NBYTES, D2H)
        ret, node, result = update(exe1, graph)
        assert ret == E.hipErrorGraphExecUpdateFailure
        assert result == R.hipGraphExecUpdateErrorParametersChanged
        assert node is memcpy_b


def test_Unit_hipGraphExecUpdate_Negative_Functional_CountDiffer_1(mod, res):
    ar = arrays(res, N)
    graph1, graph2 = res.graph(), res.graph()
    hip.hipGraphAddMemcpyNode1D(graph1, None, ar.a_d, ar.a_h, NBYTES, H2D)
    hip.hipGraphAddMemcpyNode1D(graph1, None, ar.b_d, ar.b_h, NBYTES, H2D)
    exe1 = res.instantiate(graph1)
    hip.hipGraphAddMemcpyNode1D(graph2, None, ar.c_h, ar.c_d, NBYTES, D2H)
    ret, node, result = update(exe1, graph2)
    assert ret == E.hipErrorGraphExecUpdateFailure
    assert result == R.hipGraphExecUpdateErrorTopologyChanged
    assert node is None


@pytest.mark.parametrize("section", ["node_deleted_from_graph", "similar_graph_after_delete",
                                     "node_deleted_from_exec"])
def test_Unit_hipGraphExecUpdate_Negative_Functional_CountDiffer_2(mod, res, section):
    ar = arrays(res, N)
    graph1 = res.graph()
    hip.hipGraphAddMemcpyNode1D(graph1, None, ar.a_d, ar.a_h, NBYTES, H2D)
    memcpy_b = hip.hipGraphAddMemcpyNode1D(graph1, None, ar.b_d, ar.b_h, NBYTES, H2D)
    exe1 = res.instantiate(graph1)
    hip.hipGraphDestroyNode(memcpy_b)
    if section == "node_deleted_from_graph":
        ret, _node, result = update(exe1, graph1)
        assert ret == E.hipErrorGraphExecUpdateFailure
        assert result == R.hipGraphExecUpdateErrorTopologyChanged
    elif section == "similar_graph_after_delete":
        graph2 = res.graph()
        hip.hipGraphAddMemcpyNode1D(graph2, None, ar.c_d, ar.c_h, NBYTES, H2D)
        exe2 = res.instantiate(graph2)
        assert update(exe2, graph1)[0] == E.hipSuccess
    else:
        graph3 = res.graph()
        hip.hipGraphAddMemcpyNode1D(graph3, None, ar.a_d, ar.a_h, NBYTES, H2D)
        exe3 = res.instantiate(graph3)
        hip.hipGraphAddMemcpyNode1D(graph3, None, ar.b_d, ar.b_h, NBYTES, H2D)
        ret, node, result = update(exe3, graph3)
        assert ret == E.hipErrorGraphExecUpdateFailure
        assert result == R.hipGraphExecUpdateErrorTopologyChanged
        assert node is None


def _chain3(res, ar, edges):
    graph = res.graph()
    a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, H2D)
    b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, NBYTES, H2D)
    c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, NBYTES, H2D)
    nodes = {"A": a, "B": b, "C": c}
    hip.hipGraphAddDependencies(graph, [nodes[x] for x, _ in edges], [nodes[y] for _, y in edges])
    return graph


def test_Unit_hipGraphExecUpdate_Negative_Dependent_NodesDiffer(mod, res):
    ar = arrays(res, N)
    exe = res.instantiate(_chain3(res, ar, [("A", "B"), ("B", "C")]))
    ret, node, result = update(exe, _chain3(res, ar, [("A", "C"), ("B", "C")]))
    assert ret == E.hipErrorGraphExecUpdateFailure
    assert result == R.hipGraphExecUpdateErrorTopologyChanged
    assert node is not None


def test_Unit_hipGraphExecUpdate_Negative_NodeType_Changed(mod, res):
    ar = arrays(res, N)
    graph1 = res.graph()
    a = hip.hipGraphAddMemcpyNode1D(graph1, None, ar.a_d, ar.a_h, NBYTES, H2D)
    b = hip.hipGraphAddMemcpyNode1D(graph1, None, ar.b_d, ar.b_h, NBYTES, H2D)
    hip.hipGraphAddDependencies(graph1, a, b)
    exe = res.instantiate(graph1)
    graph2 = res.graph()
    memset_node = hip.hipGraphAddMemsetNode(graph2, None, memset_params(ar.c_d, 3))
    a2 = hip.hipGraphAddMemcpyNode1D(graph2, None, ar.a_d, ar.a_h, NBYTES, H2D)
    hip.hipGraphAddDependencies(graph2, a2, memset_node)
    ret, node, result = update(exe, graph2)
    assert ret == E.hipErrorGraphExecUpdateFailure
    assert result == R.hipGraphExecUpdateErrorNodeTypeChanged
    assert node is memset_node


def test_Unit_hipGraphExecUpdate_Negative_MultiDevice_Context_Changed(mod, res):
    if hip.hipGetDeviceCount() < 2 or not hip.hipDeviceCanAccessPeer(1, 0):
        pytest.skip("Skipping test as peer device access is not found!")
    hip.hipSetDevice(0)
    ar = arrays(res, N)
    graph1, a, b, c, k = _vec_graph(mod, res, ar)
    hip.hipGraphAddDependencies(graph1, [a, b, k], [k, k, c])
    exe = res.instantiate(graph1)
    hip.hipSetDevice(1)
    try:
        graph2, a2, b2, c2, k2 = _vec_graph(mod, res, ar, "graph_vector_sub_i32")
        hip.hipGraphAddDependencies(graph2, [a2, b2, k2], [k2, k2, c2])
    finally:
        hip.hipSetDevice(0)
    ret, node, result = update(exe, graph2)
    assert ret == E.hipErrorGraphExecUpdateFailure
    assert result == R.hipGraphExecUpdateErrorUnsupportedFunctionChange
    assert node is not None


def test_Unit_hipGraphExecUpdate_Functional_KernelFunction_Changed(mod, res):
    ar = arrays(res, N)
    stream = res.stream()
    graph1, a, b, c, k = _vec_graph(mod, res, ar)
    hip.hipGraphAddDependencies(graph1, [a, b, k], [k, k, c])
    exe = res.instantiate(graph1)
    graph2, a2, b2, c2, k2 = _vec_graph(mod, res, ar, "graph_vector_sub_i32")
    hip.hipGraphAddDependencies(graph2, [a2, b2, k2], [k2, k2, c2])
    assert update(exe, graph2)[0] == E.hipSuccess
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, ar.a_h - ar.b_h)
