"""A client of a standalone platform (HDEMU_PLATFORM): five empty kernels on the null stream.

Result: {"launched": 5}.
"""
from hostside import hip
from tests.scenarios.common import emit, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
e = hip.hipModuleGetFunction(m, "empty")
for _ in range(5):
    hip.hipModuleLaunchKernel(e, 1, 1, 1, 1, 1, 1, 0, None, [])
hip.hipDeviceSynchronize()
emit(launched=5)
