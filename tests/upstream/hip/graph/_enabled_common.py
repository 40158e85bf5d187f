"""The graph both hipGraphNodeGetEnabled.cc and hipGraphNodeSetEnabled.cc build for their basic case: one
node of every type, none joined, instantiated."""
from __future__ import annotations

import numpy as np

from hostside import hip
from tests.upstream.hip.graph._common import kparams
from tests.upstream.hip.graph._dependency_common import arrays

__all__ = ["N", "all_types_exec"]

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
