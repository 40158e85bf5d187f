"""hipGraphExecEventRecordNodeSetEvent: an exec's end record moved to another event (the graph keeps
its event), an event of another device, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._event_node_common import memset_node

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecEventRecordNodeSetEvent.cc"

E = hip.hipError_t
#: upstream's gridSize * blockSize = 512 * 512 elements, kept small
GRID, BLOCK = 16, 256
N = GRID * BLOCK


def test_Unit_hipGraphExecEventRecordNodeSetEvent_Functional(mod, res):
    nbytes = N * 4
    graph = res.graph()
    ev_start, ev1_end, ev2_end = res.events(3)
    start = hip.hipGraphAddEventRecordNode(graph, None, ev_start)
    end = hip.hipGraphAddEventRecordNode(graph, None, ev1_end)
    inp_h, out_h = np.arange(N, dtype=np.int32), np.zeros(N, np.int32)
    inp_d, out_d = res.malloc(nbytes), res.malloc(nbytes)
    h2d = hip.hipGraphAddMemcpyNode1D(graph, None, inp_d, inp_h, nbytes, hip.hipMemcpyHostToDevice)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, None, out_h, out_d, nbytes, hip.hipMemcpyDeviceToHost)
    # copy_ker_func(a, b, N): b = a
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "stream_copy_i32", [out_d, inp_d, N], GRID, BLOCK))
    hip.hipGraphAddDependencies(graph, [start, h2d, k, d2h], [h2d, k, d2h, end])
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphExecEventRecordNodeSetEvent(exe, end, ev2_end)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    np.testing.assert_array_equal(out_h, inp_h)
    assert hip.hipEventElapsedTime(ev_start, ev2_end) > 0.0
    expect_error(E.hipErrorInvalidResourceHandle, hip.hipEventElapsedTime, ev_start, ev1_end)


def test_Unit_hipGraphExecEventRecordNodeSetEvent_VerifyEventNotChanged(mod, res):
    graph = res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    exe = res.instantiate(graph)
    hip.hipGraphExecEventRecordNodeSetEvent(exe, rec, e2)
    assert hip.hipGraphEventRecordNodeGetEvent(rec) is e1


def test_Unit_hipGraphExecEventRecordNodeSetEvent_Positive_DifferentDevices(mod, res):
    if hip.hipGetDeviceCount() < 2:
        pytest.skip("Skipping because devices < 2")
    hip.hipSetDevice(0)
    e1 = res.event()
    hip.hipSetDevice(1)
    try:
        e2 = res.event()
    finally:
        hip.hipSetDevice(0)
    graph = res.graph()
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphExecEventRecordNodeSetEvent(exe, rec, e2)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)


@pytest.mark.parametrize("section", ["exec_null", "node_null", "event_null", "exec_uninitialized",
                                     "node_uninitialized", "event_uninitialized", "node_not_in_exec",
                                     "memset_node", "event_wait_node"])
def test_Unit_hipGraphExecEventRecordNodeSetEvent_Negative(mod, res, section):
    graph = res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    exe = res.instantiate(graph)
    args = [exe, rec, e2]
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
        args[1] = hip.hipGraphAddEventWaitNode(graph, None, e1)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecEventRecordNodeSetEvent, *args)
