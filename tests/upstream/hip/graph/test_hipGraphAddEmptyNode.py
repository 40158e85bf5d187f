"""hipGraphAddEmptyNode: adding one after a memset node, argument errors, and empty nodes as barriers
between three copies, three kernels and three copies back."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddEmptyNode.cc"

E = hip.hipError_t
TEST_LOOP_SIZE = 50


def test_Unit_hipGraphAddEmptyNode_Functional(mod, res):
    size = 1024
    out_d = res.malloc(size)
    graph = hip.hipGraphCreate(0)
    memset_node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(out_d, 0, size, 1))
    empty = hip.hipGraphAddEmptyNode(graph, [memset_node])
    assert empty is not None
    hip.hipGraphDestroy(graph)


@pytest.mark.parametrize("section", ["null_graph"])
def test_Unit_hipGraphAddEmptyNode_NegTest(mod, res, section):
    size = 1024
    out_d = res.malloc(size)
    graph = res.graph()
    memset_node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(out_d, 0, size, 1))
    # "Null Empty Graph Node" (a null out-pointer) and "Dependencies is null" with a non-zero count have no
    # Python form
    expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEmptyNode, None, [memset_node])


def test_Unit_hipGraphAddEmptyNode_BarrierFunc(mod, res):
    size = 1024
    blocks = (size + 255) // 256
    graph = res.graph()
    ins_h = [np.zeros(size, np.int32) for _ in range(3)]
    outs_h = [np.zeros(size, np.int32) for _ in range(3)]
    ins_d = [res.malloc(size * 4) for _ in range(3)]
    outs_d = [res.malloc(size * 4) for _ in range(3)]
    h2d = [hip.hipGraphAddMemcpyNode1D(graph, None, d, h, size * 4, hip.hipMemcpyHostToDevice)
           for d, h in zip(ins_d, ins_h)]
    empty1 = hip.hipGraphAddEmptyNode(graph, h2d)
    sqr = [hip.hipGraphAddKernelNode(graph, [empty1], kparams(mod, "graph_vector_square_i32", [i, o, size],
                                                              blocks, 256))
           for i, o in zip(ins_d, outs_d)]
    empty2 = hip.hipGraphAddEmptyNode(graph, sqr)
    for h, d in zip(outs_h, outs_d):
        hip.hipGraphAddMemcpyNode1D(graph, [empty2], h, d, size * 4, hip.hipMemcpyDeviceToHost)
    stream = res.stream()
    exe = res.instantiate(graph)
    rng = np.random.default_rng()
    for _ in range(TEST_LOOP_SIZE):
        for h in ins_h:
            h[:] = rng.integers(0, 256, size)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        for i, o in zip(ins_h, outs_h):
            assert (o == i * i).all()
