"""hipGraphEventWaitNodeGetEvent: the event read back (three event flags), and argument errors (no
node, a node of another type)."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._event_node_common import FLAGS, event_with_flags, memset_node

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphEventWaitNodeGetEvent.cc"

E = hip.hipError_t


@pytest.mark.parametrize("flags", FLAGS)
def test_Unit_hipGraphEventWaitNodeGetEvent_Functional(mod, res, flags):
    graph = res.graph()
    event = event_with_flags(res, flags)
    node = hip.hipGraphAddEventWaitNode(graph, None, event)
    assert hip.hipGraphEventWaitNodeGetEvent(node) is event


@pytest.mark.parametrize("section", ["node_null", "empty_node", "memset_node", "event_record_node",
                                     "uninitialized_node"])
def test_Unit_hipGraphEventWaitNodeGetEvent_Negative(mod, res, section):
    graph = res.graph()
    e1, e2 = res.events(2)
    rec = hip.hipGraphAddEventRecordNode(graph, None, e1)
    hip.hipGraphAddEventWaitNode(graph, None, e2)
    # "event_out = nullptr" has no Python form (the event is the return value)
    if section in ("node_null", "uninitialized_node"):
        node = None
    elif section == "empty_node":
        node = hip.hipGraphAddEmptyNode(graph, None)
    elif section == "memset_node":
        node = memset_node(res, graph)
    else:
        node = rec
    expect_error(E.hipErrorInvalidValue, hip.hipGraphEventWaitNodeGetEvent, node)
