"""hipGraphInstantiateWithParams: argument errors and the result code, a dependency graph and a
captured graph instantiated and launched. (Upstream compiles these cases only for CUDA >= 12; they
are run here against CLR's hipGraphInstantiateWithParams.)"""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import N, expect_error, kparams, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphInstantiateWithParams.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_graph", "null_params", "invalid_flag"])
def test_Unit_hipGraphInstantiateWithParams_Negative(mod, res, section):
    # "Passing nullptr pGraphExec" is a null out-pointer
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithParams, None,
                     hip.hipGraphInstantiateParams())
    elif section == "null_params":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithParams, res.graph(), None)
    else:
        params = hip.hipGraphInstantiateParams(flags=10)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithParams, res.graph(), params)
        assert params.result_out == hip.hipGraphInstantiateError


def test_Unit_hipGraphInstantiateWithParams_DependencyGraph(mod, res):
    n = 1024
    nbytes = n * 4
    a_d, b_d, c_d = res.malloc(nbytes), res.malloc(nbytes), res.malloc(nbytes)
    a_h, b_h, c_h = np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int32) * 3, np.zeros(n, np.int32)
    blocks = (n + 255) // 256
    graph = res.graph()
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 0, 0, 1, width=nbytes, height=1))
    memset_b = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(b_d, 0, 0, 1, width=nbytes, height=1))
    memset_k_c = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "set_value", [c_d, 0, n], blocks, 256))
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    vec_add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, n], blocks, 256))
    hip.hipGraphAddDependencies(graph, [memset_a, memset_b, h2d_a, h2d_b, memset_k_c, vec_add],
                                [h2d_a, h2d_b, vec_add, vec_add, vec_add, d2h_c])
    params = hip.hipGraphInstantiateParams(flags=0)
    exe = res.keep(hip.hipGraphInstantiateWithParams(graph, params))
    assert params.result_out == hip.hipGraphInstantiateSuccess
    hip.hipGraphLaunch(exe, 0)
    hip.hipStreamSynchronize(0)
    assert (c_h == a_h + b_h).all()


def test_Unit_hipGraphInstantiateWithParams_StreamCapture(mod, res):
    nbytes = N * 4
    a_h = (1.618 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(nbytes), res.malloc(nbytes)
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemsetAsync(c_d, 0, nbytes, stream)
    launch(mod, "vector_square", [a_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    params = hip.hipGraphInstantiateParams(flags=0)
    exe = res.keep(hip.hipGraphInstantiateWithParams(graph, params))
    assert exe is not None
    assert params.result_out == hip.hipGraphInstantiateSuccess
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (c_h == a_h * a_h).all()
