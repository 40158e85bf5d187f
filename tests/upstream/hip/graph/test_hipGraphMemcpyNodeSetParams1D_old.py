"""hipGraphMemcpyNodeSetParams1D (older file): argument errors (nulls, a count of 0, the same or
overlapping pointers, a copy beyond the allocation), a shorter copy and another kind accepted, and a
graph whose device-to-host copy is sent to another host buffer before instantiation."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemcpyNodeSetParams1D_old.cc"

E = hip.hipError_t
N = 1024
NBYTES = N * 4
BLOCK = 256
H2D, D2H, D2D = hip.hipMemcpyHostToDevice, hip.hipMemcpyDeviceToHost, hip.hipMemcpyDeviceToDevice


@pytest.mark.xfail(strict=True, reason="hdemu: hipGraphAddMemcpyNode1D refuses the hipMemcpyHostToDevice copy "
                                       "between two hipMalloc buffers the case starts from "
                                       "(hipErrorInvalidMemcpyDirection); CLR checks the kind only for a "
                                       "host-device pair")
@pytest.mark.parametrize("section", ["node_null", "dst_null", "src_null", "count_0", "same_pointer",
                                     "dst_ahead_overlap", "src_ahead_overlap", "more_than_allocated",
                                     "less_than_allocated", "kind_h2d_to_d2h"])
def test_Unit_hipGraphMemcpyNodeSetParams1D_Negative(mod, res, section):
    a_d, a_h = res.malloc(NBYTES), res.malloc(NBYTES)      # upstream's A_h is hipMalloc'd too
    graph = res.graph()
    node = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, NBYTES, H2D)
    args = {"node_null": (None, a_d, a_h, NBYTES, H2D), "dst_null": (node, None, a_h, NBYTES, H2D),
            "src_null": (node, a_d, None, NBYTES, H2D), "count_0": (node, a_d, a_h, 0, H2D),
            "same_pointer": (node, a_d, a_d, NBYTES, D2D), "dst_ahead_overlap": (node, a_d, a_d - 5 * 4, NBYTES, D2D),
            "src_ahead_overlap": (node, a_d + 5 * 4, a_d, NBYTES - 5, D2D),
            "more_than_allocated": (node, a_d, a_h, NBYTES + 8, H2D),
            "less_than_allocated": (node, a_d, a_h, NBYTES - 8, H2D),
            "kind_h2d_to_d2h": (node, a_d, a_h, NBYTES, D2H)}[section]
    if section in ("less_than_allocated", "kind_h2d_to_d2h"):
        hip.hipGraphMemcpyNodeSetParams1D(*args)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphMemcpyNodeSetParams1D, *args)


def test_Unit_hipGraphMemcpyNodeSetParams1D_Functional(mod, res):
    stream = res.stream()
    ar = arrays(res, N)
    h_data = np.zeros(N, np.int32)
    graph = res.graph()
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, NBYTES, H2D)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, NBYTES, H2D)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, NBYTES, D2H)
    hip.hipGraphMemcpyNodeSetParams1D(d2h_c, h_data, ar.c_d, NBYTES, D2H)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                       N // BLOCK, BLOCK))
    hip.hipGraphAddDependencies(graph, [h2d_a, h2d_b, k], [k, k, d2h_c])
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(h_data, ar.a_h + ar.b_h)
