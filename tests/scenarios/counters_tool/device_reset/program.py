"""A workload for ``hdemu counters``: three in-place axpy launches, hipDeviceReset, then the same
three again on fresh allocations (a new runtime). Result: ok (both rounds left y == 3 x)."""
import numpy as np

from hostside import hip
from tests.scenarios.common import emit, kernel_file

n = 1000
x = np.arange(n, dtype=np.float32)


def one_round():
    m = hip.hipModuleLoad(kernel_file("replay_kernels.py"))
    f = hip.hipModuleGetFunction(m, "axpy")
    dx, dy = hip.hipMalloc(4 * n), hip.hipMalloc(4 * n)
    hip.hipMemcpy(dx, x, 4 * n, hip.hipMemcpyHostToDevice)
    hip.hipMemset(dy, 0, 4 * n)
    s = hip.hipStreamCreate()
    for _ in range(3):
        hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, [dy, dx, 1.0, n])
    hip.hipStreamSynchronize(s)
    y = np.empty(n, np.float32)
    hip.hipMemcpy(y, dy, 4 * n, hip.hipMemcpyDeviceToHost)
    return bool(np.array_equal(y, 3 * x))


first = one_round()
hip.hipDeviceReset()
emit(ok=first and one_round())
