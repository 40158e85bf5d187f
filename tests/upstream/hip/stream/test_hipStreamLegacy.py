"""hipStreamGetCaptureInfo on hipStreamLegacy while another stream captures in global mode (an implicit
capture dependency: hipErrorStreamCaptureImplicit) and after the capture ended (hipSuccess); the
captured copy, kernel, copy graph then runs; the same with hipStreamGetCaptureInfo_v2. The other
TEST_CASEs are in NOT_PORTED.md."""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamLegacy.cc"

N = 1024
NBYTES = N * 4


@pytest.mark.parametrize("section", ["hipStreamGetCaptureInfo with hipStreamLegacy",
                                     "hipStreamGetCaptureInfo_v2 with hipStreamLegacy",
                                     "hipStreamGetCaptureInfo with hipStreamLegacy after End capture",
                                     "hipStreamGetCaptureInfo_v2 with hipStreamLegacy after End capture"])
def test_Unit_hipStreamGetCaptureInfo_hipStreamLegacy_CaptureInfo(mod, section):
    info = hip.hipStreamGetCaptureInfo_v2 if "_v2" in section else hip.hipStreamGetCaptureInfo
    stream, stream_for_graph = hip.hipStreamCreate(), hip.hipStreamCreate()
    a_h = (1.0 + np.arange(N)).astype(np.float32)
    c_h = np.zeros(N, dtype=np.float32)
    a_d, c_d = hip.hipMalloc(NBYTES), hip.hipMalloc(NBYTES)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    if not section.endswith("after End capture"):
        with pytest.raises(hip.HipError) as ei:
            info(hip.hipStreamLegacy)
        assert ei.value.error == hip.hipError_t.hipErrorStreamCaptureImplicit
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusActive
    hip.hipMemcpyAsync(a_d, a_h, NBYTES, hip.hipMemcpyHostToDevice, stream)
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), (N + 255) // 256, 1, 1, 256, 1, 1,
                              0, stream, [a_d, c_d, N])
    hip.hipMemcpyAsync(c_h, c_d, NBYTES, hip.hipMemcpyDeviceToHost, stream)
    graph = hip.hipStreamEndCapture(stream)
    assert graph is not None
    if section.endswith("after End capture"):
        info(hip.hipStreamLegacy)                               # hipSuccess: returns without raising
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream_for_graph)
    hip.hipStreamSynchronize(stream_for_graph)
    assert np.array_equal(c_h, a_h * a_h)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(graph)
    hip.hipStreamDestroy(stream)
    hip.hipStreamDestroy(stream_for_graph)
    hip.hipFree(a_d)
    hip.hipFree(c_d)
