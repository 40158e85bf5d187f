"""hipGraphHostNodeSetParams: argument errors, and the new function run by a graph (and by a cloned
graph the host node was added to)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphHostNodeSetParams.cc"

E = hip.hipError_t
N = 1024


def callbackfunc(a):
    a[:N] = np.arange(N)


def callbackfunc_setparams(b):
    b[:N] = np.arange(N) ** 2


@pytest.mark.parametrize("section", ["node_null", "params_null", "fn_null", "uninitialized"])
def test_Unit_hipGraphHostNodeSetParams_Negative(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    params = hip.hipHostNodeParams(callbackfunc, ar.a_h)
    node = hip.hipGraphAddHostNode(graph, None, params)
    # "node is not a host node" is HT_NVIDIA only
    if section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphHostNodeSetParams, None, params)
    elif section == "params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphHostNodeSetParams, node, None)
    elif section == "fn_null":
        params.fn = None
        expect_error(E.hipErrorInvalidValue, hip.hipGraphHostNodeSetParams, node, params)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphHostNodeSetParams, node, hip.hipHostNodeParams())


def test_Unit_hipGraphHostNodeSetParams_ClonedGraphWithHostNode(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddDependencies(graph, h2d_c, d2h)
    cloned = res.keep(hip.hipGraphClone(graph))
    node = hip.hipGraphAddHostNode(cloned, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    hip.hipGraphHostNodeSetParams(node, hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h))
    exe = res.instantiate(cloned)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)


def test_Unit_hipGraphHostNodeSetParams_BasicFunc(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    node = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    hip.hipGraphAddDependencies(graph, [h2d_c, d2h], [d2h, node])
    hip.hipGraphHostNodeSetParams(node, hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h))
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)
