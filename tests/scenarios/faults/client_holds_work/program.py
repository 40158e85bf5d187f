"""A client of a standalone platform (HDEMU_PLATFORM) that owns a queue full of published work (a
0.5 s sleep kernel, then 200 increments), allocations and signals, then holds until it is killed.

Prints ``READY {}`` once everything is submitted; then holds (stdin). No result: it is SIGKILLed.
"""
from hostside import hip
from tests.scenarios.common import announce, hold, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
d = hip.hipMalloc(1 << 20)
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1, 1, 1, 1, 1, 1, 0, s, [0.5])
for _ in range(200):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "inc"), 1, 1, 1, 1, 1, 1, 0, s, [d, 1])
announce("READY")
hold()
