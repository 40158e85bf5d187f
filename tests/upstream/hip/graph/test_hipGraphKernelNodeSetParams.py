"""hipGraphKernelNodeSetParams: argument errors, switching a node from vectorADD to vectorSUB before
instantiation, and a get-modify-set of the function of the graph's kernel node."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, function, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphKernelNodeSetParams.cc"

E = hip.hipError_t
N = 1024
BLOCK = 256


@pytest.mark.parametrize("section", ["node_null", "params_null"])
def test_Unit_hipGraphKernelNodeSetParams_Negative(mod, res, section):
    a_d, b_d, c_d = (res.malloc(N * 4) for _ in range(3))
    graph = res.graph()
    params = kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, N], N // BLOCK, BLOCK)
    node = hip.hipGraphAddKernelNode(graph, None, params)
    # the func / kernelParams / not-a-kernel-node sections are HT_NVIDIA only
    if section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphKernelNodeSetParams, None, params)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphKernelNodeSetParams, node, None)


def test_Unit_hipGraphKernelNodeSetParams_Functional(mod, res):
    stream = res.stream()
    ar = arrays(res, N)
    graph = res.graph()
    deps = [hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice),
            hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)]
    args = [ar.a_d, ar.b_d, ar.c_d, N]
    node = hip.hipGraphAddKernelNode(graph, deps, kparams(mod, "vectorADD_i32", args, N // BLOCK, BLOCK))
    hip.hipGraphKernelNodeSetParams(node, kparams(mod, "graph_vector_sub_i32", args, N // BLOCK, BLOCK))
    hip.hipGraphAddMemcpyNode1D(graph, [node], ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, ar.a_h - ar.b_h)         # HipTest::checkVectorSUB


def test_Unit_hipGraphKernelNodeGetSetParams_Functional(mod, res):
    """GraphKernelNodeGetSetParam: A1 += A2 in the graph, switched to A1 -= A2 through get/set."""
    n = 1024
    nbytes = n * 4
    a1_d, a2_d = res.malloc(nbytes), res.malloc(nbytes)
    a1_h, a2_h, a3_h = (np.zeros(n, np.int32) for _ in range(3))
    graph = res.graph()
    vec_maths = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "graph_myadd", [a1_d, a2_d], n // BLOCK, BLOCK))
    h2d_1 = hip.hipGraphAddMemcpyNode1D(graph, None, a1_d, a1_h, nbytes, hip.hipMemcpyHostToDevice)
    h2d_2 = hip.hipGraphAddMemcpyNode1D(graph, None, a2_d, a2_h, nbytes, hip.hipMemcpyHostToDevice)
    d2h_3 = hip.hipGraphAddMemcpyNode1D(graph, None, a3_h, a1_d, nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddDependencies(graph, [h2d_1], [vec_maths])
    hip.hipGraphAddDependencies(graph, [h2d_2], [vec_maths])
    hip.hipGraphAddDependencies(graph, [vec_maths], [d2h_3])
    # updateNode: the first kernel node of hipGraphGetNodes gets ker_vec_sub
    nodes = hip.hipGraphGetNodes(graph)
    kernel = next(x for x in nodes if hip.hipGraphNodeGetType(x) == hip.hipGraphNodeType.hipGraphNodeTypeKernel)
    p = hip.hipGraphKernelNodeGetParams(kernel)
    p.func = function(mod, "graph_mysub")
    hip.hipGraphKernelNodeSetParams(kernel, p)
    stream = res.stream()
    exe = res.instantiate(graph)
    rng = np.random.default_rng()
    a1_h[:] = rng.integers(0, 256, n)
    a2_h[:] = rng.integers(0, 256, n)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(a3_h, a1_h - a2_h)
