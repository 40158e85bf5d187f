"""What hipGraphNodeGetEnabled.cc and hipGraphNodeSetEnabled.cc share: the graph of their basic case (one
node of every type, none joined, instantiated) and the body of their Negative_Functional cases."""
from __future__ import annotations

import numpy as np

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._dependency_common import arrays

__all__ = ["N", "NEGATIVE", "all_types_exec", "negative_functional"]

N = 1024


def all_types_exec(mod, res):
    """(exec, nodes by name): copy, kernel, memset, empty, host, event record, event wait, child graph."""
    ar = arrays(res, N)
    graph = res.graph()
    nodes = {}
    nodes["memcpy"] = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    nodes["kernel"] = hip.hipGraphAddKernelNode(graph, None, kparams(
        mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N], (N + 255) // 256, 256))
    nodes["memset"] = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.b_d, 7, ar.nbytes, 1))
    nodes["empty"] = hip.hipGraphAddEmptyNode(graph, None)

    def callbackfunc(a_h):
        a_h[:N] = np.arange(N)

    nodes["host"] = hip.hipGraphAddHostNode(graph, None, hip.hipHostNodeParams(callbackfunc, ar.a_h))
    event = res.event()
    nodes["event_record"] = hip.hipGraphAddEventRecordNode(graph, None, event)
    nodes["event_wait"] = hip.hipGraphAddEventWaitNode(graph, None, event)
    child = res.graph()
    hip.hipGraphAddMemcpyNode1D(child, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    nodes["child_graph"] = hip.hipGraphAddChildGraphNode(graph, None, child)
    return res.instantiate(graph), nodes


NEGATIVE = ["exec_null", "exec_uninitialized", "node_null", "node_uninitialized", "node_of_other_graph",
             "node_added_after_instantiate", "cloned_node_in_exec", "node_in_cloned_exec", "destroyed_node",
             "destroyed_exec", "destroyed_graph"]


def negative_functional(mod, res, fn, section):
    """The shared body of hipGraphNodeGet/SetEnabled's Negative_Functional: ``fn(exec, node)`` must fail
    with hipErrorInvalidValue for each section."""
    ar = arrays(res, N)
    graph = res.graph()
    memcpy_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    memcpy_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    k = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, N],
                                                       N // 256, 256))
    hip.hipGraphAddDependencies(graph, [memcpy_a, memcpy_b], [k, k])
    exe = res.instantiate(graph)
    exe2 = hip.hipGraphInstantiate(graph)
    cloned = res.keep(hip.hipGraphClone(graph))
    cloned_exe = res.instantiate(cloned)
    memcpy_a_c = hip.hipGraphNodeFindInClone(memcpy_a, cloned)
    memcpy_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipGraphAddDependencies(graph, [k], [memcpy_c])
    graph2 = res.graph()
    memcpy_a2 = hip.hipGraphAddMemcpyNode1D(graph2, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    hip.hipGraphExecDestroy(exe2)
    args = {"exec_null": (None, memcpy_b), "exec_uninitialized": (None, memcpy_b), "node_null": (exe, None),
            "node_uninitialized": (exe, None), "node_of_other_graph": (exe, memcpy_a2),
            "node_added_after_instantiate": (exe, memcpy_c), "cloned_node_in_exec": (exe, memcpy_a_c),
            "node_in_cloned_exec": (cloned_exe, memcpy_a), "destroyed_node": (exe, memcpy_a),
            "destroyed_exec": (exe2, memcpy_b), "destroyed_graph": (exe, memcpy_b)}[section]
    if section == "destroyed_node":
        hip.hipGraphDestroyNode(memcpy_a)
    elif section == "destroyed_graph":
        hip.hipGraphDestroy(graph)
        res._graphs.remove(graph)
    expect_error(hip.hipError_t.hipErrorInvalidValue, fn, *args)
