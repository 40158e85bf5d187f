"""hipGraphInstantiate: argument errors, an empty graph, cyclic graphs refused (also cloned and as a
child graph), redundant dependencies and many instances of one graph."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphInstantiate.cc"

E = hip.hipError_t
NUM_OF_INSTANCES = 10


@pytest.mark.parametrize("section", ["null_graph", "uninitialized_graph", "uninitialized_exec"])
def test_Unit_hipGraphInstantiate_Negative(mod, res, section):
    graph = res.graph()
    # "Pass pGraphExec as nullptr" is a null out-pointer
    if section in ("null_graph", "uninitialized_graph"):     # hipGraph_t{} is a null handle too
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiate, None)
    else:
        res.keep(hip.hipGraphInstantiate(graph))


def test_Unit_hipGraphInstantiate_Basic(mod, res):
    graph = hip.hipGraphCreate(0)
    assert graph is not None
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)


def _refused_everywhere(graph, clone=True):
    expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiate, graph)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithFlags, graph, 0)
    if clone:
        cloned = hip.hipGraphClone(graph)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiate, cloned)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithFlags, cloned, 0)


@pytest.mark.parametrize("section", ["simple", "complex", "child"])
def test_Unit_hipGraphInstantiate_InvalidCyclicGraph(mod, res, section):
    # HT_NVIDIA only upstream; hdemu refuses cycles as CUDA does
    graph = res.graph()
    if section == "simple":
        n1, n2 = hip.hipGraphAddEmptyNode(graph, None), hip.hipGraphAddEmptyNode(graph, None)
        hip.hipGraphAddDependencies(graph, n1, n2)
        hip.hipGraphAddDependencies(graph, n2, n1)
        _refused_everywhere(graph)
    elif section == "complex":
        n = [hip.hipGraphAddEmptyNode(graph, None) for _ in range(7)]
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 6), (0, 4), (4, 5), (5, 6), (3, 0)):
            hip.hipGraphAddDependencies(graph, n[a], n[b])
        _refused_everywhere(graph)
    else:
        child = res.graph()
        e1, e2 = hip.hipGraphAddEmptyNode(graph, None), hip.hipGraphAddEmptyNode(graph, None)
        c = [hip.hipGraphAddEmptyNode(child, None) for _ in range(4)]
        for a, b in ((0, 1), (1, 2), (2, 3), (2, 1)):
            hip.hipGraphAddDependencies(child, c[a], c[b])
        child_node = hip.hipGraphAddChildGraphNode(graph, None, child)
        hip.hipGraphAddDependencies(graph, e1, child_node)
        hip.hipGraphAddDependencies(graph, child_node, e2)
        _refused_everywhere(graph, clone=False)


@pytest.mark.parametrize("section", ["redundant_dependencies", "multiple_instances",
                                     "multiple_instances_destroy_after_use"])
def test_Unit_hipGraphInstantiate_functionalScenarios(mod, res, section):
    size = 1024
    graph = res.graph()
    in_d, out_d = res.malloc(size * 4), res.malloc(size * 4)
    in_h, out_h = np.zeros(size, np.int32), np.zeros(size, np.int32)
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, in_d, in_h, size * 4, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, out_h, out_d, size * 4, hip.hipMemcpyDeviceToHost)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "graph_vector_square_i32", [in_d, out_d, size],
                                                       grid=(size + 255) // 256, block=256))
    hip.hipGraphAddDependencies(graph, h2d, k)
    hip.hipGraphAddDependencies(graph, k, d2h)
    rng = np.random.default_rng()
    stream = res.stream()
    if section == "redundant_dependencies":
        hip.hipGraphAddDependencies(graph, h2d, d2h)
        exe = res.instantiate(graph)
        assert exe is not None
        in_h[:] = rng.integers(0, 256, size)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (out_h == in_h * in_h).all()
        return
    execs = [hip.hipGraphInstantiate(graph) for _ in range(NUM_OF_INSTANCES)]
    assert all(e is not None for e in execs)
    in_h[:] = rng.integers(0, 256, size)
    for e in execs:
        out_h[:] = -1
        hip.hipGraphLaunch(e, stream)
        hip.hipStreamSynchronize(stream)
        assert (out_h == in_h * in_h).all()
        if section == "multiple_instances_destroy_after_use":
            hip.hipGraphExecDestroy(e)
    if section == "multiple_instances":
        for e in execs:
            hip.hipGraphExecDestroy(e)
