"""Stop the collector (SIGSTOP) for at least 1 s while lane 0's pool is shrunk to one buffer: lane 0
stalls, lane 1 must not (policy block), or every lane shows the gap (common_mode; the test sets
profiling.policy).

Before the stop, the program waits (deadline 20 s) until the collector has collected all the
AicpuTask records of its 8 warm-up kernels, so the stop starts from a drained pipeline.
platform.toml: 1 agent x 2 engines, 2 lanes, chip_swimlane, pool 0 of 1 buffer, 2 AicpuTask
records per buffer. Result: {"t_stop": ns, "t_cont": ns} (monotonic, around the stop).
"""
import os
import signal
import time

from hostside import hip
from hostside.dfx import accounting
from hostside.hsa import runtime
from tests.scenarios.common import emit, kernel_file

STOP_S = 1.0         # how long the collector stays stopped: the length of the fault
WARMUP = 8           # 4 empty kernels on each of the two streams

m = hip.hipModuleLoad(kernel_file("basic.py"))
sl, em = hip.hipModuleGetFunction(m, "sleep"), hip.hipModuleGetFunction(m, "empty")
a, b = hip.hipStreamCreate(), hip.hipStreamCreate()       # engine 0 -> thread 0, engine 1 -> thread 1
assert (a.vgpu.queue.engine, b.vgpu.queue.engine) == (0, 1)
plat = runtime().platform
col = plat.procs[plat.dfx_roles["collector"][0]].pid
for _ in range(WARMUP // 2):
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, a, [])
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, b, [])
hip.hipStreamSynchronize(a)
hip.hipStreamSynchronize(b)


def warmup_collected() -> bool:
    pools = [p for p in accounting(plat.pm)["pools"] if p["kind"] == "aicpu_task"]
    return sum(p["total"] for p in pools) == WARMUP and sum(p["collected"] for p in pools) == WARMUP


deadline = time.monotonic() + 20
while not warmup_collected():
    if time.monotonic() > deadline:
        raise SystemExit(f"the warm-up records were not collected in 20 s: {accounting(plat.pm)}")
    time.sleep(0.01)
os.kill(col, signal.SIGSTOP)
t0 = time.monotonic_ns()
for i in range(30):
    hip.hipModuleLaunchKernel(sl, 1, 1, 1, 1, 1, 1, 0, a, [0.01])
    if i % 10 == 0:
        hip.hipModuleLaunchKernel(sl, 1, 1, 1, 1, 1, 1, 0, b, [0.01])
hip.hipStreamSynchronize(a)
hip.hipStreamSynchronize(b)
time.sleep(max(0.0, STOP_S - (time.monotonic_ns() - t0) / 1e9))     # the rest of the fault's length
os.kill(col, signal.SIGCONT)
emit(t_stop=t0, t_cont=time.monotonic_ns())
