"""hipSimpleGraphWithKernel.cc: 25 launches of a scaling kernel, run directly and captured into a graph
launched repeatedly; both give in * 5.34."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import function

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipSimpleGraphWithKernel.cc"

N = 64 * 1024          # upstream: 1024 * 1024
NSTEP = 5              # upstream: 1000
NKERNEL = 25
CONSTANT = 5.34


def _simple_kernel(mod, stream, out_d, in_d):
    hip.hipModuleLaunchKernel(function(mod, "graph_simple_kernel"), N // 512, 1, 1, 512, 1, 1, 0, stream,
                              [out_d, in_d])


def _setup(res):
    hip.hipGetDeviceProperties(hip.hipGetDevice())
    stream = res.stream()
    in_h = np.arange(N, dtype=np.float32)
    out_h = np.zeros(N, np.float32)
    in_d, out_d = res.malloc(N * 4), res.malloc(N * 4)
    hip.hipMemcpy(in_d, in_h, N * 4, hip.hipMemcpyHostToDevice)
    return stream, in_h, out_h, in_d, out_d


def _check(in_h, out_h, out_d):
    hip.hipMemcpy(out_h, out_d, N * 4, hip.hipMemcpyDeviceToHost)
    np.testing.assert_array_equal((in_h.astype(np.float64) * CONSTANT).astype(np.float32), out_h)


def hip_test_with_graph(mod, res):
    stream, in_h, out_h, in_d, out_d = _setup(res)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    for _ in range(NKERNEL):
        _simple_kernel(mod, stream, out_d, in_d)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    instance = res.instantiate(graph)
    for _ in range(NSTEP):
        hip.hipGraphLaunch(instance, stream)
        hip.hipStreamSynchronize(stream)
    _check(in_h, out_h, out_d)


def hip_test_without_graph(mod, res):
    stream, in_h, out_h, in_d, out_d = _setup(res)
    for _ in range(NSTEP):
        for _ in range(NKERNEL):
            _simple_kernel(mod, stream, out_d, in_d)
        hip.hipStreamSynchronize(stream)
    _check(in_h, out_h, out_d)


@pytest.mark.parametrize("section", ["without_graph", "with_graph"])
def test_Unit_hipGraph_SimpleGraphWithKernel(mod, res, section):
    (hip_test_without_graph if section == "without_graph" else hip_test_with_graph)(mod, res)
