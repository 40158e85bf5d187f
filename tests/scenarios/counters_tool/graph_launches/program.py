"""A workload for ``hdemu counters``: a two-kernel graph (stream capture of inc, inc) launched three
times, then one ordinary inc launch. Result: x0 (7: every kernel ran once)."""
import numpy as np

from hostside import hip
from tests.scenarios.common import emit, kernel_file

m = hip.hipModuleLoad(kernel_file("replay_kernels.py"))
f = hip.hipModuleGetFunction(m, "inc")
s = hip.hipStreamCreate()
d = hip.hipMalloc(64)
hip.hipMemset(d, 0, 64)
hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
ge = hip.hipGraphInstantiate(hip.hipStreamEndCapture(s))
for _ in range(3):
    hip.hipGraphLaunch(ge, s)
hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
hip.hipStreamSynchronize(s)
x = np.empty(16, np.int32)
hip.hipMemcpy(x, d, 64, hip.hipMemcpyDeviceToHost)
emit(x0=int(x[0]))
