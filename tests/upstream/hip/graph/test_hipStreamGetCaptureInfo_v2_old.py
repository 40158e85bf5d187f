"""hipStreamGetCaptureInfo_v2 (the older file): the dependency set of a capture joined from two forked
streams, what is returned after the capture, unique ids, and the argument checks."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import N, expect_error, launch

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamGetCaptureInfo_v2_old.cc"

_COPY_OR_SET = (hip.hipGraphNodeType.hipGraphNodeTypeMemset, hip.hipGraphNodeType.hipGraphNodeTypeMemcpy)


def _validate(mod, res, mstream):
    nbytes = N * 4
    a_h = (3.146 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, np.float32)
    a_d, c_d = res.malloc(nbytes), res.malloc(nbytes)
    launch_stream = res.stream()
    s1, s2 = res.streams(2)
    memcpy_ev, memset_ev, fork_ev = res.events(3)
    hip.hipStreamBeginCapture(mstream, hip.hipStreamCaptureModeGlobal)
    hip.hipEventRecord(fork_ev, mstream)
    hip.hipStreamWaitEvent(s1, fork_ev, 0)
    hip.hipStreamWaitEvent(s2, fork_ev, 0)
    hip.hipMemsetAsync(a_d, 0, nbytes, s1)
    hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, s1)
    hip.hipEventRecord(memcpy_ev, s1)
    hip.hipMemsetAsync(c_d, 0, nbytes, s2)
    hip.hipEventRecord(memset_ev, s2)
    hip.hipStreamWaitEvent(mstream, memcpy_ev, 0)
    hip.hipStreamWaitEvent(mstream, memset_ev, 0)
    status, cid, cgraph, deps = hip.hipStreamGetCaptureInfo_v2(mstream)
    assert status == hip.hipStreamCaptureStatusActive
    assert cid > 0
    assert cgraph is not None
    assert len(deps) == 2
    assert all(hip.hipGraphNodeGetType(d) in _COPY_OR_SET for d in deps)
    launch(mod, "vector_square", [a_d, c_d, N], mstream, n=N, block=256)
    hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, mstream)
    graph = res.keep(hip.hipStreamEndCapture(mstream))
    assert graph is not None
    assert hip.hipStreamGetCaptureInfo_v2(mstream) == (hip.hipStreamCaptureStatusNone, 0, None, [])
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, launch_stream)              # LAUNCH_ITERS = 1 upstream
    hip.hipStreamSynchronize(launch_stream)
    assert (c_h == a_h * a_h).all()


def test_Unit_hipStreamGetCaptureInfo_v2_BasicFunctional(mod, res):
    _validate(mod, res, res.stream())


def test_Unit_hipStreamGetCaptureInfo_v2_hipStreamPerThread(mod, res):
    _validate(mod, res, hip.hipStreamPerThread)


def test_Unit_hipStreamGetCaptureInfo_v2_UniqueID(mod, res):
    num_streams = 8                       # upstream: 100 (the platform has 16 queues per device)
    streams = res.streams(num_streams)
    ids = []
    for s in streams:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        status, cid, _g, _d = hip.hipStreamGetCaptureInfo_v2(s)
        assert status == hip.hipStreamCaptureStatusActive and cid > 0
        ids.append(cid)
    assert len(set(ids)) == num_streams
    for s in streams:
        hip.hipGraphDestroy(hip.hipStreamEndCapture(s))


def test_Unit_hipStreamGetCaptureInfo_v2_ParamValidation(mod, res):
    # "Capture Status location as nullptr" is a null out-pointer; "Stream as nullptr" remains
    a_d = res.malloc(100)
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemsetAsync(a_d, 0, 100, stream)
    expect_error(hip.hipError_t.hipErrorStreamCaptureImplicit, hip.hipStreamGetCaptureInfo_v2, None)
    res.keep(hip.hipStreamEndCapture(stream))
