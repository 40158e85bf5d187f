"""hipGraphKernelNodeGetParams: argument errors, and the parameters read back after adding a kernel
node and after hipGraphKernelNodeSetParams."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphKernelNodeGetParams.cc"

E = hip.hipError_t
N = 1024
THREADS_PER_BLOCK = 512


def _dim3(d):
    d = (d,) if isinstance(d, int) else tuple(d)
    return (d + (1, 1, 1))[:3]


def node_compare(p1, p2):
    """node_compare of upstream: dims, extra, func, the four argument values, shared memory."""
    return (_dim3(p1.blockDim) == _dim3(p2.blockDim) and p1.extra == p2.extra and p1.func == p2.func
            and _dim3(p1.gridDim) == _dim3(p2.gridDim) and list(p1.kernelParams)[:4] == list(p2.kernelParams)[:4]
            and p1.sharedMemBytes == p2.sharedMemBytes)


def _node(mod, res):
    a_d, b_d, c_d = (res.malloc(N * 4) for _ in range(3))
    graph = res.graph()
    params = kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, N], N // THREADS_PER_BLOCK, THREADS_PER_BLOCK)
    return graph, hip.hipGraphAddKernelNode(graph, None, params), params


@pytest.mark.parametrize("section", ["node_null"])
def test_Unit_hipGraphKernelNodeGetParams_Negative(mod, res, section):
    _node(mod, res)
    # "Pass kNodeParams as nullptr" has no Python form (the parameters are the return value);
    # "node is not a kernel node" is HT_NVIDIA only
    expect_error(E.hipErrorInvalidValue, hip.hipGraphKernelNodeGetParams, None)


@pytest.mark.parametrize("section", ["get", "set_then_get"])
def test_Unit_hipGraphKernelNodeGetParams_Functional(mod, res, section):
    _graph, node, params = _node(mod, res)
    if section == "get":
        assert node_compare(params, hip.hipGraphKernelNodeGetParams(node))
    else:
        params1 = kparams(mod, "graph_vector_add_reverse_i32", params.kernelParams, N // THREADS_PER_BLOCK,
                          THREADS_PER_BLOCK)
        hip.hipGraphKernelNodeSetParams(node, params1)
        assert node_compare(params1, hip.hipGraphKernelNodeGetParams(node))
