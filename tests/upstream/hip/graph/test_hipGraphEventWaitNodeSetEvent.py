"""hipGraphEventWaitNodeSetEvent: events set on the graphs after instantiation (the execs keep
theirs), set and read back (three flags), and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._event_node_common import FLAGS, event_with_flags, memset_node

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphEventWaitNodeSetEvent.cc"

E = hip.hipError_t
N = 512
BLOCK = 256


def test_Unit_hipGraphEventWaitNodeSetEvent_SetProp(mod, res):
    nbytes = N * 4
    s1, s2 = res.stream(), res.stream()
    g1, g2 = res.graph(), res.graph()
    event1 = event_with_flags(res, hip.hipEventDefault)
    event2 = event_with_flags(res, hip.hipEventBlockingSync)
    inp_h = np.arange(N, dtype=np.int32)
    out_h1, out_h2 = np.zeros(N, np.int32), np.zeros(N, np.int32)
    inp_d, out_d1, out_d2 = res.malloc(nbytes), res.malloc(nbytes), res.malloc(nbytes)
    rec = hip.hipGraphAddEventRecordNode(g1, None, event1)
    h2d = hip.hipGraphAddMemcpyNode1D(g1, None, inp_d, inp_h, nbytes, hip.hipMemcpyHostToDevice)
    d2h1 = hip.hipGraphAddMemcpyNode1D(g1, None, out_h1, out_d1, nbytes, hip.hipMemcpyDeviceToHost)
    k1 = hip.hipGraphAddKernelNode(g1, None, kparams(mod, "graph_vector_square_i32", [inp_d, out_d1, N],
                                                     N // BLOCK, BLOCK))
    hip.hipGraphAddDependencies(g1, [h2d, rec, k1], [rec, k1, d2h1])
    wait = hip.hipGraphAddEventWaitNode(g2, None, event1)
    d2h2 = hip.hipGraphAddMemcpyNode1D(g2, None, out_h2, out_d2, nbytes, hip.hipMemcpyDeviceToHost)
    k2 = hip.hipGraphAddKernelNode(g2, None, kparams(mod, "graph_vector_cubic_i32", [inp_d, out_d2, N],
                                                     N // BLOCK, BLOCK))
    hip.hipGraphAddDependencies(g2, [wait, k2], [k2, d2h2])
    exe1, exe2 = res.instantiate(g1), res.instantiate(g2)
    hip.hipGraphEventRecordNodeSetEvent(rec, event2)
    hip.hipGraphEventWaitNodeSetEvent(wait, event2)
    hip.hipGraphLaunch(exe1, s1)
    hip.hipGraphLaunch(exe2, s2)
    hip.hipStreamSynchronize(s1)
    hip.hipStreamSynchronize(s2)
    np.testing.assert_array_equal(out_h1, inp_h * inp_h)
    np.testing.assert_array_equal(out_h2, inp_h * inp_h * inp_h)


@pytest.mark.parametrize("flags", FLAGS)
def test_Unit_hipGraphEventWaitNodeSetEvent_SetGet(mod, res, flags):
    graph = res.graph()
    e1 = res.event()
    e2 = event_with_flags(res, flags)
    node = hip.hipGraphAddEventWaitNode(graph, None, e1)
    hip.hipGraphEventWaitNodeSetEvent(node, e2)
    assert hip.hipGraphEventWaitNodeGetEvent(node) is e2


@pytest.mark.parametrize("section", ["node_null", "event_null", "empty_node", "memset_node",
                                     "event_record_node", "uninitialized_node", "uninitialized_event"])
def test_Unit_hipGraphEventWaitNodeSetEvent_Negative(mod, res, section):
    graph = res.graph()
    e1, e2 = res.events(2)
    wait = hip.hipGraphAddEventWaitNode(graph, None, e1)
    node, event = wait, e2
    if section in ("node_null", "uninitialized_node"):
        node = None
    elif section in ("event_null", "uninitialized_event"):
        event = None
    elif section == "empty_node":
        node = hip.hipGraphAddEmptyNode(graph, None)
    elif section == "memset_node":
        node = memset_node(res, graph)
    else:                                   # setEventRecordNode: a record node of another graph
        g2 = res.graph()
        node = hip.hipGraphAddEventRecordNode(g2, None, e1)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphEventWaitNodeSetEvent, node, event)
