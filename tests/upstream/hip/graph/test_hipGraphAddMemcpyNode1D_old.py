"""hipGraphAddMemcpyNode1D (older file): host to device to device to host through three 1-D copy nodes,
argument errors, and a host-to-host copy node. The DeviceToDeviceNoCU and peer-device sections are in
NOT_PORTED.md."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddMemcpyNode1D_old.cc"

E = hip.hipError_t


def validate_memcpy_node_1d_array(res, d2d_type=hip.hipMemcpyDeviceToDevice):
    size = 32
    num_bytes = size * 4
    hip.hipSetDevice(0)
    stream = res.stream()
    dev1, dev2 = res.malloc(num_bytes), res.malloc(num_bytes)
    harray = np.arange(1, size + 1, dtype=np.int32)
    hres = np.zeros(size, np.int32)
    graph = res.graph()
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, dev1, harray, num_bytes, hip.hipMemcpyHostToDevice)
    d2d = hip.hipGraphAddMemcpyNode1D(graph, [h2d], dev2, dev1, num_bytes, d2d_type)
    hip.hipGraphAddMemcpyNode1D(graph, [d2d], hres, dev2, num_bytes, hip.hipMemcpyDeviceToHost)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(harray, hres)


def test_Unit_hipGraphAddMemcpyNode1D_Functional(mod, res):
    # "DeviceToDeviceNoCU" needs hipMemcpyDeviceToDeviceNoCU and "peer device" hipDeviceCanAccessPeer
    # (NOT_PORTED.md)
    validate_memcpy_node_1d_array(res)


_KIND = pytest.mark.xfail(strict=True, reason="hdemu: a graph memcpy node whose kind contradicts its pointers "
                                                "(hipMemcpyHostToDevice from hipMalloc memory) is refused with "
                                                "hipErrorInvalidMemcpyDirection; HIP on AMD accepts it")


@pytest.mark.parametrize("section", ["graph_null", pytest.param("dependencies_null_ok", marks=_KIND), "dst_null",
                                     "src_null", "count_over_src",
                                     pytest.param("count_under_dst_ok", marks=_KIND)])
def test_Unit_hipGraphAddMemcpyNode1D_Negative(mod, res, section):
    nbytes = 1024 * 4
    # upstream allocates both buffers with hipMalloc (A_h too) and copies with hipMemcpyHostToDevice
    a_d, a_h = res.malloc(nbytes), res.malloc(nbytes)
    graph = res.graph()
    h2d = hip.hipMemcpyHostToDevice
    # pGraphNode == nullptr and numDependencies INT_MAX / 9 with no array have no Python form
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode1D, None, None, a_d, a_h, nbytes, h2d)
    elif section == "dependencies_null_ok":
        hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes, h2d)
    elif section == "dst_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode1D, graph, None, None, a_h, nbytes, h2d)
    elif section == "src_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode1D, graph, None, a_d, None, nbytes, h2d)
    elif section == "count_over_src":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode1D, graph, None, a_d, a_h, nbytes + 10, h2d)
    else:
        hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes - 10, h2d)


def test_Unit_hipGraphAddMemcpyNode1D_HostToHost(mod, res):
    size = 1024
    num_bytes = size * 4
    a_h = np.arange(size, dtype=np.int32)
    b_h = np.zeros(size, np.int32)
    graph = res.graph()
    stream = res.stream()
    hip.hipGraphAddMemcpyNode1D(graph, None, b_h, a_h, num_bytes, hip.hipMemcpyHostToHost)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(a_h, b_h)
