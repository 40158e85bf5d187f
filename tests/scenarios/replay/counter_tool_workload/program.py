"""A workload of five kernels for the counter-collection tool (``hdemu counters -- python
program.py``); it knows nothing about counters. platform.toml: one agent, default counter slots.

Result: y_ok (axpy then axpy2 left y == 2.5 x).
"""
import numpy as np

from hostside import hip
from tests.scenarios.common import emit, kernel_file

m = hip.hipModuleLoad(kernel_file("replay_kernels.py"))


def F(k):
    return hip.hipModuleGetFunction(m, k)


n = 3000
x = np.arange(n, dtype=np.float32)
dx, dy, dz = (hip.hipMalloc(4 * n) for _ in range(3))
hip.hipMemcpy(dx, x, 4 * n, hip.hipMemcpyHostToDevice)
hip.hipMemset(dy, 0, 4 * n)
hip.hipMemset(dz, 0, 4 * n)
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(F("axpy"), 12, 1, 1, 256, 1, 1, 0, s, [dy, dx, 2.0, n])
hip.hipModuleLaunchKernel(F("axpy2"), 24, 1, 1, 128, 1, 1, 64, s, [dy, dz, dx, 0.5, n])
hip.hipModuleLaunchKernel(F("bump"), 1, 1, 1, 16, 1, 1, 0, s, [16])
hip.hipModuleLaunchKernel(F("scale"), 5, 2, 1, 100, 3, 1, 0, s, [dz, 3.0, n])
hip.hipModuleLaunchKernel(F("grid_ids"), 7, 1, 1, 64, 1, 1, 0, s, [dz])
hip.hipStreamSynchronize(s)
y = np.empty(n, np.float32)
hip.hipMemcpy(y, dy, 4 * n, hip.hipMemcpyDeviceToHost)
emit(y_ok=bool(np.array_equal(y, 2.5 * x)))
