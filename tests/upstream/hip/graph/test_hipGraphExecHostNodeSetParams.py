"""hipGraphExecHostNodeSetParams: argument errors (a node added after instantiation among them), and
an exec's host node given another function (in an exec of a cloned graph too)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecHostNodeSetParams.cc"

E = hip.hipError_t
N = 1024


def callbackfunc(a):
    a[:N] = np.arange(N)


def callbackfunc_setparams(b):
    b[:N] = np.arange(N) ** 2


def _graph(res, ar, graph):
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    return h2d_a, h2d_c, d2h


@pytest.mark.parametrize("section", ["exec_null", "params_null", "node_null", "fn_null", "uninitialized",
                                     "not_instantiated"])
def test_Unit_hipGraphExecHostNodeSetParams_Negative(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    h2d_a, h2d_c, d2h = _graph(res, ar, graph)
    params = hip.hipHostNodeParams(callbackfunc, ar.a_h)
    node = hip.hipGraphAddHostNode(graph, None, params)
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_c, d2h], [d2h, d2h, node])
    setp = hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h)
    hip.hipGraphAddEmptyNode(graph, [node])
    exe = res.instantiate(graph)
    # "node is not a host node" is HT_NVIDIA only
    if section == "exec_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, None, node, setp)
    elif section == "params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, exe, node, None)
    elif section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, exe, None, setp)
    elif section == "fn_null":
        setp.fn = None
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, exe, node, setp)
    elif section == "uninitialized":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, exe, node, hip.hipHostNodeParams())
    else:
        later = hip.hipGraphAddHostNode(graph, None, params)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecHostNodeSetParams, exe, later, setp)


def test_Unit_hipGraphExecHostNodeSetParams_ClonedGraphWithHostNode(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_a, h2d_c, d2h = _graph(res, ar, graph)
    cloned = res.keep(hip.hipGraphClone(graph))
    node = hip.hipGraphAddHostNode(cloned, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_c], [d2h, d2h])
    exe = res.instantiate(cloned)
    hip.hipGraphExecHostNodeSetParams(exe, node, hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h))
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)


def test_Unit_hipGraphExecHostNodeSetParams_BasicFunc(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_a, h2d_c, d2h = _graph(res, ar, graph)
    node = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_c, d2h], [d2h, d2h, node])
    exe = res.instantiate(graph)
    hip.hipGraphExecHostNodeSetParams(exe, node, hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h))
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)
