"""graph_dependency_common.hh (and HipTest::initArrays / checkVectorADD) for the ported graph cases:
the seven-node graph built by hand, the same work captured from three streams, and the node-list
checks of hipGraphGetNodes / hipGraphGetRootNodes."""
from __future__ import annotations

import numpy as np

from hostside import hip
from tests.upstream.hip.graph._common import kparams

__all__ = ["BLOCK", "Arrays", "arrays", "graph_nodes_common", "capture_nodes_common", "check_node_list",
           "count_types", "EQUAL", "LESSER", "GREATER", "Fan"]

BLOCK = 256
EQUAL, LESSER, GREATER = "equalNumNodes", "lesserNumNodes", "greaterNumNodes"


class Arrays:
    """HipTest::initArrays(A_d, B_d, C_d, A_h, B_h, C_h, N): host arrays set, device buffers made."""

    def __init__(self, res, n, dtype=np.int32):
        self.n, self.dtype = n, np.dtype(dtype)
        self.nbytes = n * self.dtype.itemsize
        self.a_h = (np.arange(n) + 3.146).astype(dtype)
        self.b_h = (np.arange(n) + 1.618).astype(dtype)
        self.c_h = np.zeros(n, dtype)
        self.a_d, self.b_d, self.c_d = res.malloc(self.nbytes), res.malloc(self.nbytes), res.malloc(self.nbytes)

    def check_add(self):
        """HipTest::checkVectorADD."""
        np.testing.assert_array_equal(self.c_h, self.a_h + self.b_h)


def arrays(res, n, dtype=np.int32) -> Arrays:
    return Arrays(res, n, dtype)


def _blocks(n):
    return max(1, (n + BLOCK - 1) // BLOCK)


def graph_nodes_common(mod, graph, ar: Arrays):
    """graphNodesCommon: seven nodes with no edges; returns (from, to, nodelist) where from[i] -> to[i]
    are the six edges the cases add."""
    n, width = ar.n, ar.dtype.itemsize
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.a_d, 0, ar.nbytes, width))
    memset_b = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ar.b_d, 0, ar.nbytes, width))
    memset_c = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "set_value", [ar.c_d, 0, n], _blocks(n), BLOCK))
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, n],
                                                         _blocks(n), BLOCK))
    from_ = [memset_a, memset_b, h2d_a, h2d_b, memset_c, add]
    to = [h2d_a, h2d_b, add, add, add, d2h_c]
    nodelist = [memset_a, memset_b, memset_c, h2d_a, h2d_b, add, d2h_c]
    return from_, to, nodelist


def capture_nodes_common(mod, ar: Arrays, streams, events):
    """captureNodesCommon: the same work captured across three streams joined by events; the graph."""
    n = ar.n
    add = "vectorADD_i32" if ar.dtype == np.int32 else "vectorADD"
    hip.hipStreamBeginCapture(streams[0], hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(events[0], streams[0])
    hip.hipStreamWaitEvent(streams[1], events[0], 0)
    hip.hipStreamWaitEvent(streams[2], events[0], 0)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "set_value"), _blocks(n), 1, 1, BLOCK, 1, 1, 0,
                              streams[2], [ar.c_d, 0, n])
    hip.hipEventRecord(events[1], streams[2])
    hip.hipMemsetAsync(ar.b_d, 0, ar.nbytes, streams[1])
    hip.hipMemcpyAsync(ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice, streams[1])
    hip.hipEventRecord(events[2], streams[1])
    hip.hipMemsetAsync(ar.a_d, 0, ar.nbytes, streams[0])
    hip.hipMemcpyAsync(ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice, streams[0])
    hip.hipStreamWaitEvent(streams[0], events[2], 0)
    hip.hipStreamWaitEvent(streams[0], events[1], 0)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, add), _blocks(n), 1, 1, BLOCK, 1, 1, 0, streams[0],
                              [ar.a_d, ar.b_d, ar.c_d, n])
    hip.hipMemcpyAsync(ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost, streams[0])
    return hip.hipStreamEndCapture(streams[0])


def check_node_list(nodes, nodelist, test_num, test_type):
    """validateGraphNodesCommon. The Python calls return every node (a list carries its length), so the
    caller's array of ``test_num`` entries is the returned list cut or padded with None to that size."""
    got = (list(nodes) + [None] * test_num)[:test_num]
    count = len(nodes) if test_type == GREATER else test_num
    found = sum(1 for node in nodelist if node in got[:count])
    if test_type == EQUAL:
        assert found == len(nodelist)
    elif test_type == LESSER:
        assert found == test_num
    else:
        assert count == len(nodelist)
        assert found == len(nodelist)
        assert all(x is None for x in got[count:])


def count_types(nodes) -> dict:
    out: dict = {}
    for node in nodes:
        t = hip.hipGraphNodeGetType(node)
        out[t] = out.get(t, 0) + 1
    return out


class Fan:
    """The graph of hipGraphNodeGetDependencies / GetDependentNodes: copy A in, C = A*A, three
    Res_i = C + i after it, Sum = Res1 + Res2 + Res3, Sum copied out."""

    INC = (1, 2, 3)

    def __init__(self, mod, res, graph, n=1024):
        self.mod, self.graph, self.n = mod, graph, n
        self.a_h = np.arange(1, n + 1, dtype=np.int32)
        self.c_h = self.a_h * self.a_h
        self.sum_h = np.zeros(n, np.int32)
        nb = n * 4
        self.a_d, self.c_d, self.sum_d = res.malloc(nb), res.malloc(nb), res.malloc(nb)
        self.res_d = [res.malloc(nb) for _ in range(3)]
        blocks = _blocks(n)
        self.h2d = hip.hipGraphAddMemcpyNode1D(graph, None, self.a_d, self.a_h, nb, hip.hipMemcpyHostToDevice)
        self.sqr = hip.hipGraphAddKernelNode(graph, [self.h2d], kparams(
            mod, "graph_vector_square_i32", [self.a_d, self.c_d, n], blocks, BLOCK))
        self.mods = [hip.hipGraphAddKernelNode(graph, [self.sqr], kparams(
            mod, "graph_update_result", [self.c_d, r, inc, n], blocks, BLOCK)) for r, inc in zip(self.res_d, self.INC)]
        self.add = None

    def add_sum(self):
        self.add = hip.hipGraphAddKernelNode(self.graph, self.mods, kparams(
            self.mod, "graph_vector_sum", [*self.res_d, self.sum_d, self.n], _blocks(self.n), BLOCK))

    def finish_and_check(self, res):
        if self.add is None:
            self.add_sum()
        hip.hipGraphAddMemcpyNode1D(self.graph, [self.add], self.sum_h, self.sum_d, self.n * 4,
                                    hip.hipMemcpyDeviceToHost)
        stream = res.stream()
        exe = res.instantiate(self.graph)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        np.testing.assert_array_equal(self.sum_h, sum(self.c_h + i for i in self.INC))
