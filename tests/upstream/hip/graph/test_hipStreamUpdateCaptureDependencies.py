"""hipStreamUpdateCaptureDependencies: replacing (Set) and extending (Add) a capture's dependency set
with nodes added by hand to the capture graph, and the argument checks."""
import numpy as np
import pytest

from hostside import hip
from tests.paths import kernel_file
from tests.upstream.hip.graph._common import (LAUNCH_ITERS, MODES, STREAM_TYPES, N, capture_branched,
                                              expect_error, kparams, launch)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamUpdateCaptureDependencies.cc"

E = hip.hipError_t


@pytest.fixture(scope="module")
def kmod(mod):
    """The file's own kernels (vectorSet, vectorSum)."""
    m = hip.hipModuleLoad(kernel_file("upstream_capture.py"))
    yield m
    hip.hipModuleUnload(m)


def _buffers(res):
    nbytes = N * 4
    host = [np.zeros(N, np.float32) for _ in range(3)]
    return host, [res.malloc(nbytes) for _ in range(3)]


def _begin(res, stream, mode, a_h, a_d, b_h, b_d):
    hip.hipStreamBeginCapture(stream, mode)
    capture_branched(a_h, a_d, b_h, b_d, N, stream, res.streams(2), res.events(3))
    status, _cid, cgraph, deps = hip.hipStreamGetCaptureInfo_v2(stream)
    assert status == hip.hipStreamCaptureStatusActive
    assert cgraph is not None
    assert len(deps) == 2
    return cgraph, deps


def _replay(res, stream, graph, a_h, c_h, b_h, want):
    exe = res.instantiate(graph)
    for i in range(LAUNCH_ITERS):
        a_h[:] = float(i)
        c_h[:] = float(i)
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        assert (b_h == want(float(i))).all()


@pytest.mark.parametrize("section", ["memcpy_node", "kernel_node"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamSetCaptureDependencies_Positive_Functional(mod, res, stream_type, mode, section):
    stream = res.stream(stream_type)
    (a_h, b_h, c_h), (a_d, b_d, c_d) = _buffers(res)
    cgraph, deps = _begin(res, stream, mode, a_h, a_d, b_h, b_d)
    if section == "memcpy_node":
        node = hip.hipGraphAddMemcpyNode(cgraph, None, hip.hipMemcpyNodeParams(c_d, c_h, N * 4,
                                                                              hip.hipMemcpyHostToDevice))
    else:
        node = hip.hipGraphAddKernelNode(cgraph, deps[0], kparams(mod, "vector_square", [a_d, c_d, N], 16, 256))
    hip.hipStreamUpdateCaptureDependencies(stream, [node], hip.hipStreamSetCaptureDependencies)
    _s, _i, _g, now = hip.hipStreamGetCaptureInfo_v2(stream)
    assert now == [node]
    if section == "memcpy_node":
        launch(mod, "vector_square", [c_d, c_d, N], stream, n=N, block=256)
    hip.hipMemcpyAsync(b_h, c_d, N * 4, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    _replay(res, stream, graph, a_h, c_h, b_h, lambda i: i * i)


@pytest.mark.parametrize("section", ["memcpy_node", "kernel_node"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamAddCaptureDependencies_Positive_Functional(mod, kmod, res, stream_type, mode, section):
    stream = res.stream(stream_type)
    (a_h, b_h, c_h), (a_d, b_d, c_d) = _buffers(res)
    cgraph, deps = _begin(res, stream, mode, a_h, a_d, b_h, b_d)
    if section == "memcpy_node":
        node = hip.hipGraphAddMemcpyNode(cgraph, None, hip.hipMemcpyNodeParams(c_d, c_h, N * 4,
                                                                              hip.hipMemcpyHostToDevice))
    else:
        f = hip.hipModuleGetFunction(kmod, "vectorSet")
        node = hip.hipGraphAddKernelNode(cgraph, deps[0], hip.hipKernelNodeParams(f, 16, 256, 0, [a_d, c_d, N]))
    hip.hipStreamUpdateCaptureDependencies(stream, [node], hip.hipStreamAddCaptureDependencies)
    _s, _i, _g, now = hip.hipStreamGetCaptureInfo_v2(stream)
    assert len(now) == 3
    f = hip.hipModuleGetFunction(kmod, "vectorSum")
    hip.hipModuleLaunchKernel(f, 16, 1, 1, 256, 1, 1, 0, stream, [a_d, c_d, b_d, N])
    hip.hipMemcpyAsync(b_h, b_d, N * 4, hip.hipMemcpyDeviceToHost, stream)
    graph = res.keep(hip.hipStreamEndCapture(stream))
    assert graph is not None
    _replay(res, stream, graph, a_h, c_h, b_h, lambda i: i * 2)


@pytest.mark.parametrize("flag", [hip.hipStreamAddCaptureDependencies, hip.hipStreamSetCaptureDependencies],
                         ids=["Add", "Set"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream_type", STREAM_TYPES)
def test_Unit_hipStreamUpdateCaptureDependencies_Positive_Parameters(mod, res, stream_type, mode, flag):
    stream = res.stream(stream_type)
    hip.hipStreamBeginCapture(stream, mode)
    hip.hipStreamUpdateCaptureDependencies(stream, None, flag)
    hip.hipGraphDestroy(hip.hipStreamEndCapture(stream))


@pytest.mark.parametrize("section", ["invalid_flag", "not_capturing"])
def test_Unit_hipStreamUpdateCaptureDependencies_Negative_Parameters(mod, res, section):
    # "Dependencies as nullptr and numDeps as nonzero" has no Python form (a list carries its length);
    # the numDeps / uninitialised node sections are HT_NVIDIA only (hdemu refuses both: unit tests)
    nbytes = 100
    a_d = res.malloc(nbytes)
    stream = res.stream()
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemsetAsync(a_d, 0, nbytes, stream)
    _s, _i, cgraph, deps = hip.hipStreamGetCaptureInfo_v2(stream)
    node = hip.hipGraphAddMemsetNode(cgraph, deps, hip.hipMemsetParams(a_d, 1, 0, 1, width=nbytes, height=1))
    if section == "invalid_flag":
        expect_error(E.hipErrorInvalidValue, hip.hipStreamUpdateCaptureDependencies, stream, [node], 20)
    hip.hipStreamUpdateCaptureDependencies(stream, [node], hip.hipStreamAddCaptureDependencies)     # HT_AMD
    res.keep(hip.hipStreamEndCapture(stream))
    if section == "not_capturing":
        expect_error(E.hipErrorIllegalState, hip.hipStreamUpdateCaptureDependencies, stream, [node],
                     hip.hipStreamAddCaptureDependencies)
