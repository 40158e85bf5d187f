"""hipGraphAddEventRecordNode: a graph of one record node, the seven-node vector-add graph between two
record nodes (events with and without flags, elapsed time, repeated launches), timing-disabled events,
dependency counts, and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import BLOCK, arrays

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddEventRecordNode.cc"

E = hip.hipError_t
N = 1024


def test_Unit_hipGraphAddEventRecordNode_Functional_Simple(mod, res):
    stream = res.stream()
    graph = res.graph()
    event = res.event()
    hip.hipGraphAddEventRecordNode(graph, None, event)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipEventSynchronize(event)


def validate_add_event_record_node(mod, res, measure_time, with_flags, nstep, flag=0):
    stream = res.stream()
    ar = arrays(res, N)
    blocks = (N + BLOCK - 1) // BLOCK
    graph = res.graph()
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.a_d, 0, ar.nbytes, 1))
    memset_b = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.b_d, 0, ar.nbytes, 1))
    memset_ker_c = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "set_value", [ar.c_d, 0, N], blocks, BLOCK))
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    vec_add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                             blocks, BLOCK))
    if with_flags:
        ev_start, ev_end = hip.hipEventCreateWithFlags(flag), hip.hipEventCreateWithFlags(flag)
        res._events.extend([ev_start, ev_end])
    else:
        ev_start, ev_end = res.event(), res.event()
    node_start = hip.hipGraphAddEventRecordNode(graph, None, ev_start)
    node_final = hip.hipGraphAddEventRecordNode(graph, None, ev_end)
    for a, b in [(node_start, memset_a), (node_start, memset_b), (memset_a, h2d_a), (memset_b, h2d_b),
                 (h2d_a, vec_add), (h2d_b, vec_add), (memset_ker_c, vec_add), (vec_add, d2h_c),
                 (d2h_c, node_final)]:
        hip.hipGraphAddDependencies(graph, [a], [b])
    exe = res.instantiate(graph)
    for _ in range(nstep):
        hip.hipGraphLaunch(exe, stream)
        hip.hipEventSynchronize(ev_end)
        ar.check_add()
        if measure_time:
            assert hip.hipEventElapsedTime(ev_start, ev_end) > 0.0


def test_Unit_hipGraphAddEventRecordNode_Functional_WithoutFlags(mod, res):
    validate_add_event_record_node(mod, res, False, False, 1)


def test_Unit_hipGraphAddEventRecordNode_Functional_ElapsedTime(mod, res):
    validate_add_event_record_node(mod, res, True, False, 1)


@pytest.mark.parametrize("flag", [hip.hipEventDefault, hip.hipEventBlockingSync, hip.hipEventDisableTiming],
                         ids=["hipEventDefault", "hipEventBlockingSync", "hipEventDisableTiming"])
def test_Unit_hipGraphAddEventRecordNode_Functional_WithFlags(mod, res, flag):
    validate_add_event_record_node(mod, res, False, True, 1, flag)


def test_Unit_hipGraphAddEventRecordNode_MultipleRun(mod, res):
    validate_add_event_record_node(mod, res, False, False, 100)


def test_Unit_hipGraphAddEventRecordNode_Functional_TimingDisabled(mod, res):
    nbytes = 1024
    stream = res.stream()
    graph = res.graph()
    ev_start = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    ev_end = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    res._events.extend([ev_start, ev_end])
    a_d = res.malloc(nbytes)
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 0, nbytes, 1))
    node_start = hip.hipGraphAddEventRecordNode(graph, None, ev_start)
    node_end = hip.hipGraphAddEventRecordNode(graph, None, ev_end)
    hip.hipGraphAddDependencies(graph, [node_start], [memset_a])
    hip.hipGraphAddDependencies(graph, [memset_a], [node_end])
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipEventSynchronize(ev_end)
    expect_error(E.hipErrorInvalidHandle, hip.hipEventElapsedTime, ev_start, ev_end)


@pytest.mark.parametrize("num_deps", [0, 1, 2], ids=["zero", "less_than_length", "equal_to_length"])
def test_Unit_hipGraphAddEventRecordNode_Positive_Parameters(mod, res, num_deps):
    graph = res.graph()
    event = res.event()
    dep_nodes = [hip.hipGraphAddEmptyNode(graph, None), hip.hipGraphAddEmptyNode(graph, None)]
    # numDependencies counts the first entries of the array: a list of that many nodes
    node = hip.hipGraphAddEventRecordNode(graph, dep_nodes[:num_deps], event)
    assert len(hip.hipGraphNodeGetDependencies(node)) == num_deps


@pytest.mark.parametrize("section", ["graph_null", "dependency_null", "event_null", "graph_uninitialized",
                                     "event_uninitialized"])
def test_Unit_hipGraphAddEventRecordNode_Negative(mod, res, section):
    graph = res.graph()
    event = res.event()
    # GraphAddNodeCommonNegativeTests: node == nullptr and dependencies == nullptr with a size have no Python
    # form; "Invalid numNodes" is a dependency list holding a null node. An uninitialized hipGraph_t /
    # hipEvent_t is a null handle, so those sections repeat the null ones.
    if section in ("graph_null", "graph_uninitialized"):
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventRecordNode, None, None, event)
    elif section == "dependency_null":
        dep = hip.hipGraphAddEmptyNode(graph, None)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventRecordNode, graph, [dep, None], event)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddEventRecordNode, graph, None, None)
