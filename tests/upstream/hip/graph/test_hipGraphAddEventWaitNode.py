"""hipGraphAddEventWaitNode: a record node then a wait node on one event, a graph waiting on an event a
second graph records (two streams or one, repeated, event flags), dependency counts, argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import BLOCK

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddEventWaitNode.cc"

E = hip.hipError_t
N = 1024


def test_Unit_hipGraphAddEventWaitNode_Functional_Simple(mod, res):
    stream = res.stream()
    graph = res.graph()
    event = res.event()
    rec = hip.hipGraphAddEventRecordNode(graph, None, event)
    wait = hip.hipGraphAddEventWaitNode(graph, None, event)
    hip.hipGraphAddDependencies(graph, [rec], [wait])
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)


def validate_internodedep(mod, res, test, nstep, flag=hip.hipEventDefault):
    memsize = N * 4
    blocks = (N + BLOCK - 1) // BLOCK
    s1 = res.stream()
    s2 = res.stream() if test == 0 else s1
    graph1, graph2 = res.graph(), res.graph()
    event1 = hip.hipEventCreateWithFlags(flag)
    res._events.append(event1)
    inp_h = np.arange(N, dtype=np.int32)
    out_h_g1, out_h_g2 = np.zeros(N, np.int32), np.zeros(N, np.int32)
    inp_d, out_d_g1, out_d_g2 = res.malloc(memsize), res.malloc(memsize), res.malloc(memsize)
    # graph 1: copy in, record event1, square, copy out
    rec = hip.hipGraphAddEventRecordNode(graph1, None, event1)
    h2d = hip.hipGraphAddMemcpyNode1D(graph1, None, inp_d, inp_h, memsize, hip.hipMemcpyHostToDevice)
    d2h_1 = hip.hipGraphAddMemcpyNode1D(graph1, None, out_h_g1, out_d_g1, memsize, hip.hipMemcpyDeviceToHost)
    k1 = hip.hipGraphAddKernelNode(graph1, None, kparams(mod, "graph_vector_square_i32", [inp_d, out_d_g1, N],
                                                         blocks, BLOCK))
    hip.hipGraphAddDependencies(graph1, [h2d], [rec])
    hip.hipGraphAddDependencies(graph1, [rec], [k1])
    hip.hipGraphAddDependencies(graph1, [k1], [d2h_1])
    # graph 2: wait for event1, cube, copy out
    wait = hip.hipGraphAddEventWaitNode(graph2, None, event1)
    d2h_2 = hip.hipGraphAddMemcpyNode1D(graph2, None, out_h_g2, out_d_g2, memsize, hip.hipMemcpyDeviceToHost)
    k2 = hip.hipGraphAddKernelNode(graph2, None, kparams(mod, "graph_vector_cubic_i32", [inp_d, out_d_g2, N],
                                                         blocks, BLOCK))
    hip.hipGraphAddDependencies(graph2, [wait], [k2])
    hip.hipGraphAddDependencies(graph2, [k2], [d2h_2])
    exe1, exe2 = res.instantiate(graph1), res.instantiate(graph2)
    for _ in range(nstep):
        hip.hipGraphLaunch(exe1, s1)
        hip.hipGraphLaunch(exe2, s2)
        hip.hipStreamSynchronize(s1)
        hip.hipStreamSynchronize(s2)
        assert (out_h_g1 == inp_h * inp_h).all()
        assert (out_h_g2 == inp_h * inp_h * inp_h).all()


def test_Unit_hipGraphAddEventWaitNode_MultGraphMultStrmDependency(mod, res):
    validate_internodedep(mod, res, 0, 1)


def test_Unit_hipGraphAddEventWaitNode_MultipleRun(mod, res):
    # upstream launches 100 times
    validate_internodedep(mod, res, 0, 20)


def test_Unit_hipGraphAddEventWaitNode_MultGraphOneStrmDependency(mod, res):
    validate_internodedep(mod, res, 1, 1)


@pytest.mark.parametrize("flag", [hip.hipEventBlockingSync, hip.hipEventDisableTiming],
                         ids=["hipEventBlockingSync", "hipEventDisableTiming"])
def test_Unit_hipGraphAddEventWaitNode_differentFlags(mod, res, flag):
    validate_internodedep(mod, res, 0, 1, flag)


@pytest.mark.parametrize("num_deps", [0, 1, 2], ids=["zero", "less_than_length", "equal_to_length"])
def test_Unit_hipGraphAddEventWaitNode_Positive_Parameters(mod, res, num_deps):
    graph = res.graph()
    event = res.event()
    dep_nodes = [hip.hipGraphAddEmptyNode(graph, None), hip.hipGraphAddEmptyNode(graph, None)]
    node = hip.hipGraphAddEventWaitNode(graph, dep_nodes[:num_deps], event)
    assert len(hip.hipGraphNodeGetDependencies(node)) == num_deps


@pytest.mark.parametrize("section", ["graph_null", "dependency_null", "event_null", "graph_uninitialized",
                                     "event_uninitialized"])
def test_Unit_hipGraphAddEventWaitNode_Negative(mod, res, section):
    graph = res.graph()
    event = res.event()
    # as in hipGraphAddEventRecordNode: uninitialized handles are null handles
    if section in ("graph_null", "graph_uninitialized"):
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventWaitNode, None, None, event)
    elif section == "dependency_null":
        dep = hip.hipGraphAddEmptyNode(graph, None)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventWaitNode, graph, [dep, None], event)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventWaitNode, graph, None, None)
