"""hipGraphHostNodeGetParams: argument errors, and the parameters read back (as added, after
hipGraphHostNodeSetParams, on a host node added to a cloned graph) with the graph run."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphHostNodeGetParams.cc"

E = hip.hipError_t
N = 1024


def callbackfunc(a):
    a[:N] = np.arange(N)


def callbackfunc_setparams(b):
    b[:N] = np.arange(N) ** 2


def same(p, q):
    """memcmp of two hipHostNodeParams: the same function and the same user data."""
    return p.fn is q.fn and p.userData is q.userData


@pytest.mark.parametrize("section", ["node_null"])
def test_Unit_hipGraphHostNodeGetParams_Negative(mod, res, section):
    ar = arrays(res, N)
    graph = res.graph()
    hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    # "Passing nullptr to hostParams" has no Python form (the parameters are the return value);
    # "node is not a host node" is HT_NVIDIA only
    with pytest.raises(hip.HipError) as ei:
        hip.hipGraphHostNodeGetParams(None)
    assert ei.value.error == E.hipErrorInvalidValue


def test_Unit_hipGraphHostNodeGetParams_ClonedGraphWithHostNode(mod, res):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_c], [d2h, d2h])
    cloned = res.keep(hip.hipGraphClone(graph))
    node = hip.hipGraphAddHostNode(cloned, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    setp = hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h)
    hip.hipGraphHostNodeSetParams(node, setp)
    assert same(setp, hip.hipGraphHostNodeGetParams(node))
    exe = res.instantiate(cloned)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)


def _get_params_func(mod, res, setparams):
    ar = arrays(res, N)
    graph = res.graph()
    stream = res.stream()
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_d, ar.c_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    params = hip.hipHostNodeParams(callbackfunc, ar.a_h)
    node = hip.hipGraphAddHostNode(graph, None, params)
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_c, d2h], [d2h, d2h, node])
    if setparams:
        setp = hip.hipHostNodeParams(callbackfunc_setparams, ar.c_h)
        hip.hipGraphHostNodeSetParams(node, setp)
        assert same(setp, hip.hipGraphHostNodeGetParams(node))
    else:
        assert same(params, hip.hipGraphHostNodeGetParams(node))
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    if setparams:
        np.testing.assert_array_equal(ar.c_h, np.arange(N) ** 2)
    else:
        np.testing.assert_array_equal(ar.a_h, np.arange(N))


def test_Unit_hipGraphHostNodeGetParams_BasicFunc(mod, res):
    _get_params_func(mod, res, False)


def test_Unit_hipGraphHostNodeGetParams_SetParams(mod, res):
    _get_params_func(mod, res, True)
