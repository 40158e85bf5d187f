"""hipStreamGetCaptureInfo_v2: status, id, graph and the dependency set during a linear and a branched
capture, nothing but the status after it; ids unique across streams. (Negative_Parameters has only a
null out-pointer section on AMD: see NOT_PORTED.md.)"""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import (LAUNCH_ITERS, MODES, STREAM_TYPES, N, capture_branched,
                                              capture_compute, capture_linear)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamGetCaptureInfo_v2.cc"

_COPY_OR_SET = (hip.hipGraphNodeType.hipGraphNodeTypeMemset, hip.hipGraphNodeType.hipGraphNodeTypeMemcpy)


@pytest.mark.parametrize("section", ["linear", "branched"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamGetCaptureInfo_v2_Positive_Functional(mod, res, stream_type, mode, section):
    stream = res.stream(stream_type)
    a_h, b_h = np.zeros(N, np.float32), np.zeros(N, np.float32)
    a_d, b_d = res.malloc(N * 4), res.malloc(N * 4)
    hip.hipStreamBeginCapture(stream, mode)
    if section == "linear":
        capture_linear(a_h, a_d, b_h, b_d, N, stream)
        want = 1
    else:
        capture_branched(a_h, a_d, b_h, b_d, N, stream, res.streams(2), res.events(3))
        want = 2
    status, cid, cgraph, deps = hip.hipStreamGetCaptureInfo_v2(stream)
    assert [hip.hipGraphNodeGetType(d) in _COPY_OR_SET for d in deps] == [True] * want
    assert status == hip.hipStreamCaptureStatusActive
    assert cid > 0
    assert cgraph is not None
    assert len(deps) == want
    capture_compute(mod, a_d, b_h, b_d, N, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    assert hip.hipStreamGetCaptureInfo_v2(stream) == (hip.hipStreamCaptureStatusNone, 0, None, [])
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == float(i) * float(i)).all()


def test_Unit_hipStreamGetCaptureInfo_v2_Positive_UniqueID(mod, res):
    num_streams = 8                       # upstream: 100 (the platform has 16 queues per device)
    streams = res.streams(num_streams)
    ids = []
    for s in streams:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        status, cid, _g, _d = hip.hipStreamGetCaptureInfo_v2(s)
        assert status == hip.hipStreamCaptureStatusActive
        assert cid > 0
        ids.append(cid)
    assert len(set(ids)) == num_streams, f"same identifier returned for two streams: {ids}"
    for s in streams:
        hip.hipGraphDestroy(hip.hipStreamEndCapture(s))
