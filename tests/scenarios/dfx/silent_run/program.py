"""A run that is silent for longer than the backpressure timeout (1 s against 0.3 s) before it
launches 20 empty kernels: silence must not count as a stall.

platform.toml: 1 agent x 1 engine, 1 lane, backpressure_timeout_s 0.3. Result: {"launched": 20}.
"""
import time

from hostside import hip
from tests.scenarios.common import emit, kernel_file

SILENCE_S = 1.0      # the idle time under test, not a wait for anything

m = hip.hipModuleLoad(kernel_file("basic.py"))
time.sleep(SILENCE_S)
e = hip.hipModuleGetFunction(m, "empty")
for _ in range(20):
    hip.hipModuleLaunchKernel(e, 1, 1, 1, 1, 1, 1, 0, None, [])
hip.hipDeviceSynchronize()
emit(launched=20)
