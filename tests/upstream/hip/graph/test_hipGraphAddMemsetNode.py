"""hipGraphAddMemsetNode: one-node graphs filling 1-, 2- and 4-byte elements, argument errors, and a
memset node followed by a copy node over hipMalloc memory.

The 2-D shapes are written with hdemu's 1-D form of ``hipMemsetParams`` (``size`` bytes of
``elementSize``-byte elements: a width x height fill over rows that follow each other is the same
bytes); HIP's width/height/pitch form is tested in tests/unit/hostside/hip/test_api_more.py. The
pitched allocations and managed memory are in NOT_PORTED.md."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddMemsetNode.cc"

E = hip.hipError_t
PAGE = 4096
SIZE = 1024
MEMSET_VAL = ord("a")


def _run_one_node(params):
    """The lambda of Positive_Basic: a one-node graph launched on hipStreamPerThread."""
    graph = hip.hipGraphCreate(0)
    hip.hipGraphAddMemsetNode(graph, None, params)
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
    hip.hipStreamSynchronize(hip.hipStreamPerThread)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32], ids=["uint8_t", "uint16_t", "uint32_t"])
def test_Unit_hipGraphAddMemsetNode_Positive_Basic(mod, res, dtype):
    itemsize = np.dtype(dtype).itemsize
    # upstream's heights are 1, 2 and 1024; 16 keeps the largest case at 64 KiB
    for width in (1, 64, PAGE // itemsize + 1):
        for height in (1, 2, 16):
            nbytes = width * height * itemsize
            dst = res.malloc(nbytes)
            _run_one_node(hip.hipMemsetParams(dst, 42, nbytes, itemsize))
            ptr, buf = res.pinned(dtype, width * height)
            buf[:] = 0
            hip.hipMemcpy(ptr, dst, nbytes, hip.hipMemcpyDeviceToHost)
            assert (buf == 42).all(), f"width {width} height {height}"


_NEGATIVE = ["graph_null", "dependency_null", "params_null", "dst_null", "element_size_0", "element_size_3",
             "element_size_5", "width_over_allocation", "height_0"]


@pytest.mark.parametrize("section", _NEGATIVE)
def test_Unit_hipGraphAddMemsetNode_Negative_Parameters(mod, res, section):
    graph = res.graph()
    alloc = res.malloc(4 * 4)
    # width 1, height 1 of 4-byte elements
    params = hip.hipMemsetParams(alloc, 42, 4, 4)
    # GraphAddNodeCommonNegativeTests: node == nullptr and dependencies == nullptr with a size have no Python
    # form (a list carries its length); "Invalid numNodes" is a dependency list holding a null node
    if section == "graph_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, None, None, params)
    elif section == "dependency_null":
        dep = hip.hipGraphAddEmptyNode(graph, None)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, [dep, None], params)
    elif section == "params_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, None, None)
    elif section == "dst_null":
        params.dst = None
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, None, params)
    elif section.startswith("element_size_"):
        params.elementSize = int(section.rsplit("_", 1)[1])
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, None, params)
    elif section == "width_over_allocation":
        params.size = (1 + 1000) * 4
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, None, params)
    else:
        params.size = 0
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, graph, None, params)


def test_Unit_hipGraphAddMemsetNode_hipMalloc_1D(mod, res):
    a_h = np.full(SIZE, ord(" "), np.uint8)
    a_d = res.malloc(SIZE)
    graph = res.graph()
    memset_node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, MEMSET_VAL, SIZE, 1))
    hip.hipGraphAddMemcpyNode(graph, [memset_node], hip.hipMemcpyNodeParams(a_h, a_d, SIZE,
                                                                            hip.hipMemcpyDeviceToHost))
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (a_h == MEMSET_VAL).all()
