"""hipGraphExecMemcpyNodeSetParams1D (older file): an exec's device-to-host copy sent to another host
buffer before a launch, and argument errors (nulls, a count of 0, the same or overlapping pointers, a
copy beyond the allocation)."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecMemcpyNodeSetParams1D_old.cc"

E = hip.hipError_t
N = 1024
NBYTES = N * 4
BLOCK = 256


def test_Unit_hipGraphExecMemcpyNodeSetParams1D_Functional(mod, res):
    stream = res.stream()
    ar = arrays(res, N)
    h_data = np.zeros(N, np.int32)
    graph = res.graph()
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, NBYTES, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, NBYTES, hip.hipMemcpyDeviceToHost)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                       N // BLOCK, BLOCK))
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_b, k], [k, k, d2h_c])
    exe = res.instantiate(graph)
    hip.hipGraphExecMemcpyNodeSetParams1D(exe, d2h_c, h_data, ar.c_d, NBYTES, hip.hipMemcpyDeviceToHost)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(h_data, ar.a_h + ar.b_h)


@pytest.mark.parametrize("section", ["exec_null", "node_null", "dst_null", "src_null", "count_0",
                                     "same_pointer", "dst_ahead_overlap", "src_ahead_overlap",
                                     "more_than_allocated"])
def test_Unit_hipGraphExecMemcpyNodeSetParams1D_Negative(mod, res, section):
    a_d, b_d = res.malloc(NBYTES), res.malloc(NBYTES)
    graph = res.graph()
    node = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, b_d, NBYTES, hip.hipMemcpyDeviceToDevice)
    exe = res.instantiate(graph)
    args = {"exec_null": (None, node, a_d, b_d, NBYTES), "node_null": (exe, None, a_d, b_d, NBYTES),
            "dst_null": (exe, node, None, b_d, NBYTES), "src_null": (exe, node, a_d, None, NBYTES),
            "count_0": (exe, node, a_d, b_d, 0), "same_pointer": (exe, node, a_d, a_d, NBYTES),
            "dst_ahead_overlap": (exe, node, a_d + 5 * 4, a_d, NBYTES),
            "src_ahead_overlap": (exe, node, a_d, a_d + 5 * 4, NBYTES),
            "more_than_allocated": (exe, node, a_d, b_d, NBYTES + 8)}[section]
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemcpyNodeSetParams1D, *args, hip.hipMemcpyDeviceToDevice)
