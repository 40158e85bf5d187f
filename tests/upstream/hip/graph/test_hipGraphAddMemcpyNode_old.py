"""hipGraphAddMemcpyNode (older file): argument errors, and a host-to-host copy node.

hdemu's ``hipMemcpyNodeParams`` is the one-dimensional copy (dst, src, size, kind); upstream's
hipMemcpy3DParms with a one-row extent is that copy. The hipArray cases (BasicFunctional,
PeerAccessFunctional, the element-size section of Negative) are in NOT_PORTED.md."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddMemcpyNode_old.cc"

E = hip.hipError_t
WIDTH = HEIGHT = DEPTH = 10


_SECTIONS = ["graph_null", "dependencies_null_ok", "params_null", "src_not_set", "dst_not_set"]


@pytest.mark.parametrize("section", _SECTIONS)
def test_Unit_hipGraphAddMemcpyNode_Negative(mod, res, section):
    size = WIDTH * HEIGHT * DEPTH * 4
    h_data = np.arange(WIDTH * HEIGHT * DEPTH, dtype=np.int32)
    # upstream's destination is a hipMalloc3DArray of the same extent; a device buffer stands in for it
    dev = res.malloc(size)
    graph = res.graph()
    params = hip.hipMemcpyNodeParams(dev, h_data, size, hip.hipMemcpyHostToDevice)
    # pGraphNode == nullptr, numDependencies INT_MAX / 11 with no array: no Python form
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode, None, None, params)
    elif section == "dependencies_null_ok":
        assert isinstance(hip.hipGraphAddMemcpyNode(graph, None, params), hip.hipGraphNode_t)
    elif section == "params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode, graph, None, None)
    elif section == "src_not_set":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode, graph, None,
                     hip.hipMemcpyNodeParams(dev, None, size, hip.hipMemcpyHostToDevice))
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemcpyNode, graph, None,
                     hip.hipMemcpyNodeParams(None, h_data, size, hip.hipMemcpyHostToDevice))


def test_Unit_hipGraphAddMemcpyNode_HostToHost(mod, res):
    size = 1024
    num_w = size * 4
    a_h = np.arange(num_w, dtype=np.int32)
    b_h = np.zeros(num_w, np.int32)
    graph = res.graph()
    hip.hipGraphAddMemcpyNode(graph, None, hip.hipMemcpyNodeParams(b_h, a_h, num_w, hip.hipMemcpyHostToHost))
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert a_h.view(np.uint8)[:num_w].tobytes() == b_h.view(np.uint8)[:num_w].tobytes()
