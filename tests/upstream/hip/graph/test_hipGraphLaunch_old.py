"""hipGraphLaunch (older file): launching a null or destroyed exec, on a destroyed stream, after the graph
is destroyed, a two-memset graph (its second memset set again with hipGraphMemsetNodeSetParams) launched
on hipStreamPerThread and on each device, and a three-node graph launched repeatedly on a created and on
the null stream."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import BLOCK

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphLaunch_old.cc"

E = hip.hipError_t
SIZE = 1024
TEST_LOOP_SIZE = 3


def _memset_graph(res, nbytes=1024):
    dev = res.malloc(nbytes)
    graph = hip.hipGraphCreate(0)
    stream = hip.hipStreamCreate()
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(dev, 0, nbytes, 1))
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    return graph, exe, stream


@pytest.mark.parametrize("section", ["exec_null", "exec_null_per_thread", "exec_empty", "exec_destroyed",
                                     "stream_destroyed", "graph_destroyed"])
def test_Unit_hipGraphLaunch_Negative(mod, res, section):
    if section in ("exec_null", "exec_empty"):          # an empty hipGraphExec_t is a null handle
        expect_error(E.hipErrorInvalidValue, hip.hipGraphLaunch, None, None)
    elif section == "exec_null_per_thread":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphLaunch, None, hip.hipStreamPerThread)
    elif section == "exec_destroyed":
        graph, exe, stream = _memset_graph(res)
        hip.hipGraphExecDestroy(exe)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphLaunch, exe, stream)
        hip.hipGraphDestroy(graph)
        hip.hipStreamDestroy(stream)
    elif section == "stream_destroyed":
        graph, exe, stream = _memset_graph(res)
        hip.hipStreamDestroy(stream)
        with pytest.raises(hip.HipError):               # REQUIRE(hipSuccess != ret)
            hip.hipGraphLaunch(exe, stream)
        hip.hipGraphExecDestroy(exe)
        hip.hipGraphDestroy(graph)
    else:
        graph, exe, stream = _memset_graph(res)
        hip.hipGraphDestroy(graph)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipGraphExecDestroy(exe)
        hip.hipStreamDestroy(stream)


def _two_memsets(res, update_val, stream):
    """hipGraphLaunch_test: C_d = 0, then A_d = update_val (set again by hipGraphMemsetNodeSetParams)."""
    nbytes = 1024
    a_d, c_d = res.malloc(nbytes), res.malloc(nbytes)
    graph = res.graph()
    first = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(c_d, 0, 0, 1, width=nbytes, height=1))
    params = hip.hipMemsetParams(a_d, update_val, 0, 1, width=nbytes, height=1)
    node = hip.hipGraphAddMemsetNode(graph, [first], params)
    hip.hipGraphMemsetNodeSetParams(node, params)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    a_h = np.zeros(nbytes, np.uint8)
    hip.hipMemcpy(a_h, a_d, nbytes, hip.hipMemcpyDeviceToHost)
    assert (a_h == update_val).all()


def test_Unit_hipGraphLaunch_Functional_hipStreamPerThread(mod, res):
    _two_memsets(res, 2, hip.hipStreamPerThread)


def test_Unit_hipGraphLaunch_Functional_multidevice_test(mod, res):
    try:
        for i in range(hip.hipGetDeviceCount()):
            hip.hipSetDevice(i)
            _two_memsets(res, 1, res.stream())
    finally:
        hip.hipSetDevice(0)


@pytest.mark.parametrize("section", ["created_stream", "null_stream"])
def test_Unit_hipGraphLaunch_Functional_MultipleLaunch(mod, res, section):
    nbytes = SIZE * 4
    graph = res.graph()
    a_h, c_h = np.zeros(SIZE, np.int32), np.zeros(SIZE, np.int32)
    a_d, c_d = res.malloc(nbytes), res.malloc(nbytes)
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, [h2d], kparams(mod, "graph_vector_square_i32", [a_d, c_d, SIZE],
                                                        (SIZE + BLOCK - 1) // BLOCK, BLOCK))
    hip.hipGraphAddMemcpyNode1D(graph, [k], c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    stream = res.stream()
    exe = res.instantiate(graph)
    launch_on = stream if section == "created_stream" else 0
    rng = np.random.default_rng(5)
    for _ in range(TEST_LOOP_SIZE):
        a_h[:] = rng.integers(0, 256, SIZE)
        c_h[:] = rng.integers(0, 256, SIZE)
        hip.hipGraphLaunch(exe, launch_on)
        hip.hipStreamSynchronize(launch_on)
        np.testing.assert_array_equal(c_h, a_h * a_h)
