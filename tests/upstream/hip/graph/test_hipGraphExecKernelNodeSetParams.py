"""hipGraphExecKernelNodeSetParams: argument errors (null exec, node, params; a node added after
instantiation), and an exec's vectorADD node switched to vectorSUB."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecKernelNodeSetParams.cc"

E = hip.hipError_t
N = 1024
BLOCK = 256


@pytest.mark.parametrize("section", ["exec_null", "node_null", "params_null", "node_not_instantiated"])
def test_Unit_hipGraphExecKernelNodeSetParams_Negative(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    params = kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N], N // BLOCK, BLOCK)
    node = hip.hipGraphAddKernelNode(graph, None, params)
    hip.hipGraphAddEmptyNode(graph, [node])
    exe = res.instantiate(graph)
    # the func / kernelParams / not-a-kernel-node sections are HT_NVIDIA only
    if section == "exec_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecKernelNodeSetParams, None, node, params)
    elif section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecKernelNodeSetParams, exe, None, params)
    elif section == "params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecKernelNodeSetParams, exe, node, None)
    else:
        later = hip.hipGraphAddKernelNode(graph, None, params)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecKernelNodeSetParams, exe, later, params)


def test_Unit_hipGraphExecKernelNodeSetParams_Functional(mod, res):
    stream = res.stream()
    ar = arrays(res, N)
    graph = res.graph()
    deps = [hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice),
            hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)]
    args = [ar.a_d, ar.b_d, ar.c_d, N]
    node = hip.hipGraphAddKernelNode(graph, deps, kparams(mod, "vectorADD_i32", args, N // BLOCK, BLOCK))
    hip.hipGraphAddMemcpyNode1D(graph, [node], ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    exe = res.instantiate(graph)
    hip.hipGraphExecKernelNodeSetParams(exe, node, kparams(mod, "graph_vector_sub_i32", args, N // BLOCK, BLOCK))
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, ar.a_h - ar.b_h)
