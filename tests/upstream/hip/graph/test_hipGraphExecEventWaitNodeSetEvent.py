"""hipGraphExecEventWaitNodeSetEvent: two execs moved from one event to another together (record and
wait), the graph keeping its event, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._event_node_common import memset_node

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecEventWaitNodeSetEvent.cc"

E = hip.hipError_t
GRID, BLOCK = 64, 256
N = GRID * BLOCK


def test_Unit_hipGraphExecEventWaitNodeSetEvent_SetAndVerifyMemory(mod, res):
    nbytes = N * 4
    g1, g2 = res.graph(), res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(g1, None, e1)
    inp_h, out_h = np.arange(N, dtype=np.int32), np.zeros(N, np.int32)
    inp_d, out_d = res.malloc(nbytes), res.malloc(nbytes)
    h2d = hip.hipGraphAddMemcpyNode1D(g1, None, inp_d, inp_h, nbytes, hip.hipMemcpyHostToDevice)
    # sqr_ker_func(a, b, N): b = a * a
    k = hip.hipGraphAddKernelNode(g1, None, kparams(mod, "graph_vector_square_i32", [inp_d, out_d, N], GRID, BLOCK))
    hip.hipGraphAddDependencies(g1, [h2d, k], [k, rec])
    d2h = hip.hipGraphAddMemcpyNode1D(g2, None, out_h, out_d, nbytes, hip.hipMemcpyDeviceToHost)
    wait = hip.hipGraphAddEventWaitNode(g2, None, e1)
    hip.hipGraphAddDependencies(g2, wait, d2h)
    s1, s2 = res.stream(), res.stream()
    exe1, exe2 = res.instantiate(g1), res.instantiate(g2)
    hip.hipGraphLaunch(exe1, s1)
    hip.hipGraphLaunch(exe2, s2)
    hip.hipStreamSynchronize(s2)
    np.testing.assert_array_equal(out_h, inp_h * inp_h)
    hip.hipGraphExecEventRecordNodeSetEvent(exe1, rec, e2)
    hip.hipGraphExecEventWaitNodeSetEvent(exe2, wait, e2)
    hip.hipGraphLaunch(exe1, s1)
    hip.hipGraphLaunch(exe2, s2)
    hip.hipStreamSynchronize(s2)
    np.testing.assert_array_equal(out_h, inp_h * inp_h)


def test_Unit_hipGraphExecEventWaitNodeSetEvent_VerifyEventNotChanged(mod, res):
    graph = res.graph()
    e1, e2 = res.events(2)
    wait = hip.hipGraphAddEventWaitNode(graph, None, e1)
    exe = res.instantiate(graph)
    hip.hipGraphExecEventWaitNodeSetEvent(exe, wait, e2)
    assert hip.hipGraphEventWaitNodeGetEvent(wait) is e1


@pytest.mark.parametrize("section", ["exec_null", "node_null", "event_null", "exec_uninitialized",
                                     "node_uninitialized", "event_uninitialized", "node_not_in_exec",
                                     "memset_node", "event_record_node"])
def test_Unit_hipGraphExecEventWaitNodeSetEvent_Negative(mod, res, section):
    graph = res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    wait = hip.hipGraphAddEventWaitNode(graph, None, e1)
    exe = res.instantiate(graph)
    args = [exe, wait, e2]
    if section in ("exec_null", "exec_uninitialized"):
        args[0] = None
    elif section in ("node_null", "node_uninitialized"):
        args[1] = None
    elif section in ("event_null", "event_uninitialized"):
        args[2] = None
    elif section == "node_not_in_exec":
        g1 = res.graph()
        memset_node(res, g1)
        args[0] = res.instantiate(g1)
    elif section == "memset_node":
        args[1] = memset_node(res, graph)
    else:
        args[1] = rec
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecEventWaitNodeSetEvent, *args)
