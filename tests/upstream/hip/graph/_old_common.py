"""What the ``*_old.cc`` graph files repeat: a four-node vector-add graph, and a capture of a memset, a
copy in, vector_square and a copy out (straight, or with the memsets forked onto two streams)."""
from __future__ import annotations

import numpy as np

from hostside import hip
from tests.upstream.hip.graph._common import kparams, launch

__all__ = ["add_graph", "capture_square", "capture_square_forked", "check_square", "run"]


def add_graph(mod, graph, ar, block=256):
    """Two copies in, vectorADD<int> after both, a copy out after it: (h2d_a, h2d_b, kernel, d2h)."""
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, ar.a_d, ar.a_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, ar.b_d, ar.b_h, ar.nbytes, hip.hipMemcpyHostToDevice)
    blocks = max(1, (ar.n + block - 1) // block)
    k = hip.hipGraphAddKernelNode(graph, [h2d_a, h2d_b],
                                  kparams(mod, "vectorADD_i32", [ar.a_d, ar.b_d, ar.c_d, ar.n], blocks, block))
    d2h = hip.hipGraphAddMemcpyNode1D(graph, [k], ar.c_h, ar.c_d, ar.nbytes, hip.hipMemcpyDeviceToHost)
    return h2d_a, h2d_b, k, d2h


def capture_square(mod, stream, a_h, a_d, c_h, c_d, n):
    nbytes = n * 4
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, stream)
    hip.hipMemsetAsync(c_d, 0, nbytes, stream)
    launch(mod, "vector_square", [a_d, c_d, n], stream, n=n, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, stream)
    return hip.hipStreamEndCapture(stream)


def capture_square_forked(mod, mstream, s1, s2, fork, ev1, ev2, a_h, a_d, c_h, c_d, n):
    """The memsets of A and C on two streams forked from ``mstream``, the rest joined back on it."""
    nbytes = n * 4
    hip.hipStreamBeginCapture(mstream, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, mstream)
    hip.hipStreamWaitEvent(s1, fork, 0)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemsetAsync(a_d, 0, nbytes, s1)
    hip.hipEventRecord(ev1, s1)
    hip.hipMemsetAsync(c_d, 0, nbytes, s2)
    hip.hipEventRecord(ev2, s2)
    hip.hipStreamWaitEvent(mstream, ev1, 0)
    hip.hipStreamWaitEvent(mstream, ev2, 0)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, mstream)
    launch(mod, "vector_square", [a_d, c_d, n], mstream, n=n, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, mstream)
    return hip.hipStreamEndCapture(mstream)


def run(res, graph, stream=None):
    stream = stream if stream is not None else res.stream()
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    return exe


def check_square(a_h, c_h):
    np.testing.assert_array_equal(c_h, a_h * a_h)
