"""hipStreamGetCaptureInfo: status and capture id during and after a capture, ids unique across
streams. (Negative_Parameters has only a null out-pointer section on AMD: see NOT_PORTED.md.)"""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import LAUNCH_ITERS, MODES, STREAM_TYPES, N, capture_simple

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamGetCaptureInfo.cc"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamGetCaptureInfo_Positive_Functional(mod, res, stream_type, mode):
    stream = res.stream(stream_type)
    a_h, b_h, a_d = np.zeros(N, np.float32), np.zeros(N, np.float32), res.malloc(N * 4)
    hip.hipStreamBeginCapture(stream, mode)
    capture_simple(a_h, a_d, b_h, N, stream)
    status, cid = hip.hipStreamGetCaptureInfo(stream)
    assert status == hip.hipStreamCaptureStatusActive
    assert cid > 0
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    status, cid = hip.hipStreamGetCaptureInfo(stream)
    assert status == hip.hipStreamCaptureStatusNone
    assert cid == 0
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == float(i)).all()


def test_Unit_hipStreamGetCaptureInfo_Positive_UniqueID(mod, res):
    num_streams = 8                       # upstream: 100 (the platform has 16 queues per device)
    streams = res.streams(num_streams)
    ids = []
    for s in streams:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        status, cid = hip.hipStreamGetCaptureInfo(s)
        assert status == hip.hipStreamCaptureStatusActive
        assert cid > 0
        ids.append(cid)
    assert len(set(ids)) == num_streams, f"same identifier returned for two streams: {ids}"
    for s in streams:
        hip.hipGraphDestroy(hip.hipStreamEndCapture(s))
