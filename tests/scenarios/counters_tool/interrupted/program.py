"""A workload for ``hdemu counters`` that a test interrupts with SIGINT (Ctrl-C): it launches inc
kernels on one stream, prints ``READY {}`` after the 20th and keeps launching (at most 200 000, so
an uninterrupted run still ends). No JSON result."""
from hostside import hip
from tests.scenarios.common import announce, kernel_file

m = hip.hipModuleLoad(kernel_file("replay_kernels.py"))
f = hip.hipModuleGetFunction(m, "inc")
s = hip.hipStreamCreate()
d = hip.hipMalloc(64)
hip.hipMemset(d, 0, 64)
for i in range(200_000):
    hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
    if i == 19:
        announce("READY")
