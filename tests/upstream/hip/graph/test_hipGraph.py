"""hipGraph.cc: a two-stage sum reduction run three ways (streams and events, a graph built by hand,
a graph captured from three streams), each result compared with the host's sum."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import function

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraph.cc"

THREADS_PER_BLOCK = 512
#: GRAPH_LAUNCH_ITERATIONS is 1000 upstream
ITERATIONS = 10
SIZE = 1 << 12
MAX_BLOCKS = 512


def init_input(size):
    """upstream: (rand & 0xFF) / RAND_MAX; dividing by 256 instead keeps every partial sum exact in float,
    so the device's tree order gives the host's sequential sum, as upstream's exact comparison needs."""
    rng = np.random.default_rng(3)
    return ((rng.integers(0, 1 << 31, size) & 0xFF) / 256.0).astype(np.float32)


def _cpu_sum(input_h):
    total = 0.0
    for v in input_h:
        total += float(v)
    return total


def _reduce(mod, stream, input_d, output_d, size):
    hip.hipModuleLaunchKernel(function(mod, "stream_reduce"), size // THREADS_PER_BLOCK, 1, 1, THREADS_PER_BLOCK,
                              1, 1, 0, stream, [input_d, output_d])


def _reduce_final(mod, stream, output_d, result_d):
    hip.hipModuleLaunchKernel(function(mod, "stream_reduce_final"), 1, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, stream,
                              [output_d, result_d])


def hip_without_graphs(mod, res, input_h, input_d, output_d, result_d, size, num_blocks):
    s1, s2, s3 = res.streams(3)
    _fork, memset1, memset2 = res.events(3)
    result_h = np.zeros(1, np.float64)
    for _ in range(ITERATIONS):
        hip.hipMemcpyAsync(input_d, input_h, 4 * size, hip.hipMemcpyDefault, s1)
        hip.hipMemsetAsync(output_d, 0, 8 * num_blocks, s2)
        hip.hipEventRecord(memset1, s2)
        hip.hipMemsetAsync(result_d, 0, 8, s3)
        hip.hipEventRecord(memset2, s3)
        hip.hipStreamWaitEvent(s1, memset1, 0)
        _reduce(mod, s1, input_d, output_d, size)
        hip.hipStreamWaitEvent(s1, memset2, 0)
        _reduce_final(mod, s1, output_d, result_d)
        hip.hipMemcpyAsync(result_h, result_d, 8, hip.hipMemcpyDefault, s1)
        hip.hipStreamSynchronize(s1)
    assert _cpu_sum(input_h) == result_h[0]


def hip_graphs_using_stream_capture(mod, res, input_h, input_d, output_d, result_d, size, num_blocks):
    s1, s2, s3, s_graph = res.streams(4)
    fork, memset1, memset2 = res.events(3)
    result_h = np.zeros(1, np.float64)
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipStreamWaitEvent(s3, fork, 0)
    hip.hipMemcpyAsync(input_d, input_h, 4 * size, hip.hipMemcpyDefault, s1)
    hip.hipMemsetAsync(output_d, 0, 8 * num_blocks, s2)
    hip.hipEventRecord(memset1, s2)
    hip.hipMemsetAsync(result_d, 0, 8, s3)
    hip.hipEventRecord(memset2, s3)
    hip.hipStreamWaitEvent(s1, memset1, 0)
    _reduce(mod, s1, input_d, output_d, size)
    hip.hipStreamWaitEvent(s1, memset2, 0)
    _reduce_final(mod, s1, output_d, result_d)
    hip.hipMemcpyAsync(result_h, result_d, 8, hip.hipMemcpyDefault, s1)
    graph = res.keep(hip.hipStreamEndCapture(s1))
    hip.hipGraphGetNodes(graph)
    hip.hipGraphGetRootNodes(graph)
    exe = res.instantiate(graph)
    for _ in range(ITERATIONS):
        hip.hipGraphLaunch(exe, s_graph)
    hip.hipStreamSynchronize(s_graph)
    assert _cpu_sum(input_h) == result_h[0]


def hip_graphs_manual(mod, res, input_h, input_d, output_d, result_d, size, num_blocks):
    stream = res.stream()
    result_h = np.zeros(1, np.float64)
    graph = res.graph()
    # float elements, numOfBlocks * 2 of them: the num_blocks doubles of outputVec_d
    memset_out = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(output_d, 0, num_blocks * 2 * 4, 4))
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, input_d, input_h, 4 * size, hip.hipMemcpyHostToDevice)
    # upstream passes four kernel arguments to the two-argument reduce (and three to reduceFinal); HIP reads
    # only the ones the kernel has, and hdemu's node parameters must match the signature
    reduce = hip.hipGraphAddKernelNode(graph, [memset_out, h2d], hip.hipKernelNodeParams(
        function(mod, "stream_reduce"), size // THREADS_PER_BLOCK, THREADS_PER_BLOCK, 0, [input_d, output_d]))
    memset_res = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(result_d, 0, 2 * 4, 4))
    final = hip.hipGraphAddKernelNode(graph, [reduce, memset_res], hip.hipKernelNodeParams(
        function(mod, "stream_reduce_final"), 1, THREADS_PER_BLOCK, 0, [output_d, result_d]))
    hip.hipGraphAddMemcpyNode1D(graph, [final], result_h, result_d, 8, hip.hipMemcpyDeviceToHost)
    hip.hipGraphGetNodes(graph)
    hip.hipGraphGetRootNodes(graph)
    exe = res.instantiate(graph)
    for _ in range(ITERATIONS):
        hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert _cpu_sum(input_h) == result_h[0]


@pytest.mark.parametrize("section", ["without_graphs", "manual", "stream_capture"])
def test_Unit_hipGraph_BasicFunctional(mod, res, section):
    hip.hipSetDevice(0)
    input_h = init_input(SIZE)
    input_d = res.malloc(4 * SIZE)
    output_d = res.malloc(8 * MAX_BLOCKS)
    result_d = res.malloc(8)
    fn = {"without_graphs": hip_without_graphs, "manual": hip_graphs_manual,
          "stream_capture": hip_graphs_using_stream_capture}[section]
    fn(mod, res, input_h, input_d, output_d, result_d, SIZE, MAX_BLOCKS)
