"""A well-behaved client: a vector add on the null stream, copied back and checked.

Result: {"ok": c == 2a}.
"""
import numpy as np

from hostside import hip
from tests.scenarios.common import emit, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
n = 1000
a = np.arange(n, dtype=np.float32)
da, dc = hip.hipMalloc(4 * n), hip.hipMalloc(4 * n)
hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyHostToDevice)
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "vadd"), 4, 1, 1, 256, 1, 1, 0, None, [da, da, dc, n])
c = np.empty(n, np.float32)
hip.hipMemcpy(c, dc, 4 * n, hip.hipMemcpyDeviceToHost)
emit(ok=bool(np.array_equal(c, 2 * a)))
