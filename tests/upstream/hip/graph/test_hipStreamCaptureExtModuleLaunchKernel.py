"""hipStreamCaptureExtModuleLaunchKernel.cc: matmulK launched with hipExtModuleLaunchKernel and its
arguments packed in ``extra``, directly and captured into a graph launched on the capturing stream or
another one. Upstream loads the hipMatMul.code object built from graph/hipMatMul.cc; its matmulK is
the graph_matmulK kernel of tests/kernels/upstream.py."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import function

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipStreamCaptureExtModuleLaunchKernel.cc"

N = 64
SIZE = N * N


def _pack_args(a_d, b_d, c, n):
    """struct {void* _Ad; void* _Bd; void* _Cd; int _n;}: three pointers, an int, padding to 8 bytes."""
    return np.array([a_d, b_d, c], np.uint64).tobytes() + np.array([n], np.int32).tobytes() + b"\0" * 4


class GraphModuleLaunchKernel:
    def __init__(self, mod, res):
        self.stream1, self.stream2 = res.streams(2)
        a = np.ones(SIZE, np.int32)
        b = np.ones(SIZE, np.int32)
        self.a_d, self.b_d = res.malloc(SIZE * 4), res.malloc(SIZE * 4)
        self.c_ptr, self.c = res.pinned(np.int32, SIZE)
        self.c[:] = 0
        hip.hipMemcpy(self.a_d, a, SIZE * 4, hip.hipMemcpyHostToDevice)
        hip.hipMemcpy(self.b_d, b, SIZE * 4, hip.hipMemcpyHostToDevice)
        self.args1 = _pack_args(self.a_d, self.b_d, self.c_ptr, N)
        self.mult_kernel = function(mod, "graph_matmulK")

    def _launch(self):
        config1 = [hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, self.args1, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   len(self.args1), hip.HIP_LAUNCH_PARAM_END]
        hip.hipExtModuleLaunchKernel(self.mult_kernel, N, N, 1, 32, 32, 1, 0, self.stream1, None, config1,
                                     None, None, 0)

    def _matches(self):
        return int(np.count_nonzero(self.c.reshape(N, N) != N)) == 0

    def ext_module_kernel_execution_matmul(self):
        self._launch()
        hip.hipStreamSynchronize(self.stream1)
        return self._matches()

    def with_stream_capture(self, res, launch_by_different_stream=False):
        hip.hipStreamBeginCapture(self.stream1, hip.hipStreamCaptureModeGlobal)
        self._launch()
        graph = res.keep(hip.hipStreamEndCapture(self.stream1))
        assert graph is not None
        exe = res.instantiate(graph)
        assert exe is not None
        s = self.stream2 if launch_by_different_stream else self.stream1
        hip.hipGraphLaunch(exe, s)
        hip.hipStreamSynchronize(s)
        return self._matches()


@pytest.mark.parametrize("section", ["direct", "stream_capture", "stream_capture_other_stream"])
def test_Unit_hipStreamCapture_ExtModuleLaunchKernel(mod, res, section):
    hip.hipSetDevice(0)
    k = GraphModuleLaunchKernel(mod, res)
    if section == "direct":
        assert k.ext_module_kernel_execution_matmul()
    else:
        assert k.with_stream_capture(res, section == "stream_capture_other_stream")
