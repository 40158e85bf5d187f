"""The capture sequences hipStreamBeginCapture.cc builds from several of its cases
(captureStreamAndLaunchGraph, interStrmEventSyncCapture, colligatedStrmCapture and the three-stream fork of
nestedStreamCapture / streamReuse)."""
import numpy as np

from hostside import hip
from tests.upstream.hip.graph._common import LAUNCH_ITERS, N, capture_compute, launch

__all__ = ["GLOBAL", "dummy", "inc", "capture_and_launch", "inter_stream_event_sync", "colligated",
           "three_stream_fork"]

GLOBAL = hip.hipStreamCaptureModeGlobal


def dummy(mod, s):
    launch(mod, "empty", [], s)


def inc(mod, s, dev):
    launch(mod, "graph_increment_atomic", [dev], s)


def capture_and_launch(mod, res, graph_func, mode, stream):
    """captureStreamAndLaunchGraph<float>."""
    nbytes = N * 4
    a_h, b_h = np.zeros(N, np.float32), np.zeros(N, np.float32)
    a_d, b_d = res.malloc(nbytes), res.malloc(nbytes)
    hip.hipStreamBeginCapture(stream, mode)
    graph_func(a_h, a_d, b_h, b_d, N, stream)
    capture_compute(mod, a_d, b_h, b_d, N, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == float(i) * float(i)).all()


def inter_stream_event_sync(mod, res, stream1, stream2):
    """interStrmEventSyncCapture."""
    event = res.event()
    hip.hipStreamBeginCapture(stream1, GLOBAL)
    hip.hipEventRecord(event, stream1)
    hip.hipStreamWaitEvent(stream2, event, 0)
    dummy(mod, stream1)
    graph1 = res.keep(hip.hipStreamEndCapture(stream1))
    hip.hipStreamBeginCapture(stream2, GLOBAL)
    dummy(mod, stream2)
    dummy(mod, stream2)
    graph2 = res.keep(hip.hipStreamEndCapture(stream2))
    assert len(hip.hipGraphGetNodes(graph1)) == 1
    assert len(hip.hipGraphGetNodes(graph2)) == 2
    exe1, exe2 = res.instantiate(graph1), res.instantiate(graph2)
    for _ in range(LAUNCH_ITERS):
        hip.hipGraphLaunch(exe1, stream1)
        hip.hipGraphLaunch(exe2, stream2)
        hip.hipStreamSynchronize(stream1)
        hip.hipStreamSynchronize(stream2)


def colligated(mod, res, stream1, stream2):
    """colligatedStrmCapture."""
    event = res.event()
    hip.hipStreamBeginCapture(stream1, GLOBAL)
    hip.hipEventRecord(event, stream1)
    hip.hipStreamBeginCapture(stream2, GLOBAL)
    hip.hipStreamWaitEvent(stream1, event, 0)
    dummy(mod, stream1)
    graph1 = res.keep(hip.hipStreamEndCapture(stream1))
    dummy(mod, stream2)
    graph2 = res.keep(hip.hipStreamEndCapture(stream2))
    assert graph1 is not None and graph2 is not None
    exe1, exe2 = res.instantiate(graph1), res.instantiate(graph2)
    for _ in range(LAUNCH_ITERS):
        hip.hipGraphLaunch(exe1, stream1)
        hip.hipGraphLaunch(exe2, stream2)
        hip.hipStreamSynchronize(stream1)
        hip.hipStreamSynchronize(stream2)


def three_stream_fork(mod, res, streams, events, dev):
    """The capture shared by nestedStreamCapture and streamReuse: 7 increments over three streams."""
    hip.hipStreamBeginCapture(streams[0], GLOBAL)
    hip.hipEventRecord(events[0], streams[0])
    hip.hipStreamWaitEvent(streams[1], events[0], 0)
    hip.hipEventRecord(events[1], streams[1])
    hip.hipStreamWaitEvent(streams[2], events[1], 0)
    for i in (0, 1, 2, 0, 1, 2, 2):
        inc(mod, streams[i], dev)
    hip.hipEventRecord(events[2], streams[1])
    hip.hipEventRecord(events[3], streams[2])
    hip.hipStreamWaitEvent(streams[0], events[3], 0)
    hip.hipStreamWaitEvent(streams[0], events[2], 0)
