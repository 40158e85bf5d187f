"""hipStreamGetCaptureInfo and hipStreamGetCaptureInfo_v2 (the older file): status and id through a
capture, on forked streams, from another thread and on the null stream; unique ids."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import N, expect_error, launch, run_threads

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamGetCaptureInfo_old.cc"

E = hip.hipError_t
NB = N * 4
ACTIVE, NONE = hip.hipStreamCaptureStatusActive, hip.hipStreamCaptureStatusNone


def _info(api, stream):
    """(status, id) through hipStreamGetCaptureInfo or hipStreamGetCaptureInfo_v2."""
    return tuple(api(stream)[:2])


APIS = pytest.mark.parametrize("api", [hip.hipStreamGetCaptureInfo, hip.hipStreamGetCaptureInfo_v2],
                               ids=["v1", "v2"])


def _validate(mod, res, mstream):
    a_h = (3.146 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(NB), res.malloc(NB)
    launch_stream = res.stream()
    s1, s2 = res.streams(2)
    ev1, ev2, fork = res.events(3)
    hip.hipStreamBeginCapture(mstream, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, mstream)
    hip.hipStreamWaitEvent(s1, fork, 0)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemsetAsync(a_d, 0, NB, s1)
    hip.hipEventRecord(ev1, s1)
    hip.hipMemsetAsync(c_d, 0, NB, s2)
    hip.hipEventRecord(ev2, s2)
    hip.hipStreamWaitEvent(mstream, ev1, 0)
    hip.hipStreamWaitEvent(mstream, ev2, 0)
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, mstream)
    launch(mod, "vector_square", [a_d, c_d, N], mstream, n=N, block=256)
    status, cid = hip.hipStreamGetCaptureInfo(mstream)
    assert status == ACTIVE and cid > 0
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, mstream)
    graph = res.keep(hip.hipStreamEndCapture(mstream))
    assert hip.hipStreamGetCaptureInfo(mstream) == (NONE, 0)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, launch_stream)
    hip.hipStreamSynchronize(launch_stream)
    assert (c_h == a_h * a_h).all()


def test_Unit_hipStreamGetCaptureInfo_BasicFunctional(mod, res):
    _validate(mod, res, res.stream())


def test_Unit_hipStreamGetCaptureInfo_hipStreamPerThread(mod, res):
    _validate(mod, res, hip.hipStreamPerThread)


def test_Unit_hipStreamGetCaptureInfo_UniqueID(mod, res):
    num_streams = 8                       # upstream: 100 (the platform has 16 queues per device)
    streams = res.streams(num_streams)
    ids = []
    for s in streams:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        status, cid = hip.hipStreamGetCaptureInfo(s)
        assert status == ACTIVE and cid > 0
        ids.append(cid)
    assert len(set(ids)) == num_streams
    for s in streams:
        hip.hipGraphDestroy(hip.hipStreamEndCapture(s))


def test_Unit_hipStreamGetCaptureInfo_ArgValidation(mod, res):
    # "Capture ID location as nullptr": the status alone; "Capture Status location as nullptr" is a
    # null out-pointer
    assert hip.hipStreamGetCaptureInfo(res.stream())[0] == NONE


@pytest.mark.parametrize("section", ["v1_before_end", "v2_before_end", "v1_after_end", "v2_after_end"])
def test_Unit_hipStreamGetCaptureInfo_ParentAndForkedStrm_CaptureStatus(mod, res, section):
    api = hip.hipStreamGetCaptureInfo if section.startswith("v1") else hip.hipStreamGetCaptureInfo_v2
    host = [np.ones(N, np.float32) for _ in range(4)]
    a_d, b_d, c_d, d_d = (res.malloc(NB) for _ in range(4))
    s1, s2 = res.streams(2)
    ev2, fork = res.events(2)
    hip.hipStreamBeginCapture(s1, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork, s1)
    hip.hipStreamWaitEvent(s2, fork, 0)
    hip.hipMemcpyAsync(a_d, host[0], NB, hip.hipMemcpyHostToDevice, s1)
    hip.hipMemcpyAsync(b_d, host[1], NB, hip.hipMemcpyHostToDevice, s2)
    launch(mod, "vector_square", [a_d, c_d, N], s1, n=N, block=256)
    launch(mod, "vector_square", [b_d, d_d, N], s2, n=N, block=256)
    hip.hipMemcpyAsync(host[2], c_d, NB, hip.hipMemcpyDeviceToHost, s1)
    hip.hipMemcpyAsync(host[3], d_d, NB, hip.hipMemcpyDeviceToHost, s2)
    if section.endswith("before_end"):
        (st1, id1), (st2, id2) = _info(api, s1), _info(api, s2)
        assert id1 == id2
        assert st1 == st2 == ACTIVE
    hip.hipEventRecord(ev2, s2)
    hip.hipStreamWaitEvent(s1, ev2, 0)
    res.keep(hip.hipStreamEndCapture(s1))
    if section.endswith("after_end"):
        assert _info(api, s1)[0] == _info(api, s2)[0] == NONE


@APIS
def test_Unit_hipStreamGetCaptureInfo_CaptureStatus_InThread(mod, res, api):
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    mine = _info(api, stream)
    seen = []
    run_threads(lambda: seen.append(_info(api, stream)))
    assert seen == [mine]
    assert mine[0] == ACTIVE
    res.keep(hip.hipStreamEndCapture(stream))


def test_Unit_hipStreamGetCaptureInfo_CaptureStatus_Througout_Capture(mod, res):
    a_h, b_h = np.ones(N, np.float32), np.ones(N, np.float32)
    c_h, d_h = np.zeros(N, np.float32), np.zeros(N, np.float32)
    a_d, b_d, c_d, d_d = (res.malloc(NB) for _ in range(4))
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    first = [_info(hip.hipStreamGetCaptureInfo, stream), _info(hip.hipStreamGetCaptureInfo_v2, stream)]
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, stream)
    launch(mod, "vector_square", [a_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, stream)
    assert [_info(hip.hipStreamGetCaptureInfo, stream), _info(hip.hipStreamGetCaptureInfo_v2, stream)] == first
    hip.hipMemcpyAsync(b_d, b_h, NB, hip.hipMemcpyHostToDevice, stream)
    launch(mod, "vectorADD", [a_d, b_d, d_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(d_h, d_d, NB, hip.hipMemcpyDeviceToHost, stream)
    assert [_info(hip.hipStreamGetCaptureInfo, stream), _info(hip.hipStreamGetCaptureInfo_v2, stream)] == first
    res.keep(hip.hipStreamEndCapture(stream))


@pytest.mark.parametrize("section", ["v1_during", "v2_during", "v1_after_end", "v2_after_end"])
def test_Unit_hipStreamGetCaptureInfo_Nullstream_CaptureInfo(mod, res, section):
    api = hip.hipStreamGetCaptureInfo if section.startswith("v1") else hip.hipStreamGetCaptureInfo_v2
    stream, graph_stream = res.streams(2)
    a_h = (1.0 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(NB), res.malloc(NB)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    if section.endswith("during"):
        expect_error(E.hipErrorStreamCaptureImplicit, api, 0)
    assert hip.hipStreamIsCapturing(stream) == ACTIVE
    hip.hipMemcpyAsync(a_d, a_h, NB, hip.hipMemcpyHostToDevice, stream)
    launch(mod, "vector_square", [a_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, NB, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    if section.endswith("after_end"):
        api(0)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, graph_stream)
    hip.hipStreamSynchronize(graph_stream)
    assert (c_h == a_h * a_h).all()
