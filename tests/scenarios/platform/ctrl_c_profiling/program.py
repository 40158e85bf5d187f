"""A terminal Ctrl-C in a profiled program: it runs work, says READY, then keeps launching and
synchronising until the SIGINT (sent by the test to its whole process group) interrupts it.

platform.toml: 1 agent x 2 engines, profiling on with 2 lanes (the test sets profiling.output_dir).
No result line: the program ends with the user's own KeyboardInterrupt.
"""
import numpy as np

from hostside import hip
from tests.scenarios.common import announce, kernel_file

m = hip.hipModuleLoad(kernel_file("basic.py"))
inc = hip.hipModuleGetFunction(m, "inc")
d = hip.hipMalloc(64)
hip.hipMemset(d, 0, 64)
s = hip.hipStreamCreate()


def burst(n: int) -> None:
    for _ in range(n):
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
    hip.hipStreamSynchronize(s)


burst(50)
out = np.zeros(16, np.int32)
hip.hipMemcpy(out, d, 64, hip.hipMemcpyDeviceToHost)
announce("READY", launched=50, value=int(out[0]))
while True:           # work until the Ctrl-C
    burst(10)
