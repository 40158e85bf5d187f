"""hipGraphEventRecordNodeSetEvent: events set on the graph after instantiation (timing events, then
events without timing), set and read back (three flags), and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._event_node_common import FLAGS, event_with_flags, memset_node

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphEventRecordNodeSetEvent.cc"

E = hip.hipError_t


def test_Unit_hipGraphEventRecordNodeSetEvent_SetEventProperty(mod, res):
    graph = res.graph()
    e1_start, e1_end = res.events(2)
    e2_start = event_with_flags(res, hip.hipEventDisableTiming)
    e2_end = event_with_flags(res, hip.hipEventDisableTiming)
    start = hip.hipGraphAddEventRecordNode(graph, None, e1_start)
    end = hip.hipGraphAddEventRecordNode(graph, None, e1_end)
    memset_a = memset_node(res, graph)
    hip.hipGraphAddDependencies(graph, [start, memset_a], [memset_a, end])
    stream = res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert hip.hipEventElapsedTime(e1_start, e1_end) > 0.0
    hip.hipGraphEventRecordNodeSetEvent(start, e2_start)
    hip.hipGraphEventRecordNodeSetEvent(end, e2_end)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    expect_error(E.hipErrorInvalidHandle, hip.hipEventElapsedTime, e2_start, e2_end)


@pytest.mark.parametrize("flags", FLAGS)
def test_Unit_hipGraphEventRecordNodeSetEvent_SetGet(mod, res, flags):
    graph = res.graph()
    e1 = res.event()
    e2 = event_with_flags(res, flags)
    node = hip.hipGraphAddEventRecordNode(graph, None, e1)
    hip.hipGraphEventRecordNodeSetEvent(node, e2)
    assert hip.hipGraphEventRecordNodeGetEvent(node) is e2


@pytest.mark.parametrize("section", ["node_null", "event_null", "empty_node", "memset_node",
                                     "event_wait_node", "uninitialized_node", "uninitialized_event"])
def test_Unit_hipGraphEventRecordNodeSetEvent_Negative(mod, res, section):
    graph = res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    node, event = rec, e2
    if section in ("node_null", "uninitialized_node"):
        node = None
    elif section in ("event_null", "uninitialized_event"):
        event = None
    elif section == "empty_node":
        node = hip.hipGraphAddEmptyNode(graph, None)
    elif section == "memset_node":
        node = memset_node(res, graph)
    else:                                   # setEventWaitNode: a wait node of another graph
        g2 = res.graph()
        node = hip.hipGraphAddEventWaitNode(g2, None, e1)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphEventRecordNodeSetEvent, node, event)
