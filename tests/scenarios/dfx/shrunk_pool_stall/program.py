"""Stop the collector (SIGSTOP) for at least 1 s while lane 0's pool is shrunk to one buffer: lane 0
stalls, lane 1 must not (policy block), or every lane shows the gap (common_mode; the test sets
profiling.policy).

Before the stop, the program waits (deadline 20 s) until the collector has collected all the
AicpuTask records of its 8 warm-up kernels, so the stop starts from a drained pipeline. After the
stop it launches stream a's kernels only, waits (deadline 20 s) until lane 0 is stuck: every thread of
the collector stopped, lane 0's AicpuTask pool holds no buffer and has none free (it published the
one it had and waits at its pop gate), and under common_mode the common-stall word raised. Only then
does it launch stream b's kernels, so lane 1 writes its records while lane 0 stalls, however the two
engines and the two lanes are scheduled (with both streams launched at once, lane 1's last record
could come before lane 0's stall, and under common_mode lane 1 then never parked).
platform.toml: 1 agent x 2 engines, 2 lanes, chip_swimlane, pool 0 of 1 buffer, 2 AicpuTask
records per buffer. Result: {"t_stop": ns, "t_cont": ns, "t_stuck": ns} (monotonic: around the stop,
and when lane 0 was seen stuck).
"""
import os
import signal
import time

from hostside import hip
from hostside.dfx import accounting
from hostside.hsa import runtime
from shm_layout import dfx as D
from tests.scenarios.common import emit, kernel_file

STOP_S = 1.0         # how long the collector stays stopped once lane 0 is stuck: the length of the fault
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


def collector_stopped() -> bool:
    """Every thread of the collector is stopped (a SIGSTOP takes effect asynchronously)."""
    states = []
    for tid in os.listdir(f"/proc/{col}/task"):
        try:
            with open(f"/proc/{col}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            continue                    # a thread that just ended
    return all(st in "tT" for st in states)


g = plat.topo.dfx
pool0 = plat.pm.segs["dfxhdr"].view(D.pool_block, g.pool_off(0, D.K_AICPU_TASK), 1)
ctl = plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
common = g.policy[D.K_AICPU_TASK] == "common_mode"


def lane0_stuck() -> bool:
    """Lane 0 cannot write another AicpuTask record until the collector resumes: it published its
    buffer (none current), its free queue is empty and nobody can refill it; under common_mode it
    also holds the common stall (raised inside the pop gate, after the pool state shows)."""
    pb = pool0[0]
    return (collector_stopped() and int(pb["current_buf_ptr"]) == 0 and int(pb["head"]) == int(pb["tail"])
            and (not common or int(ctl["common_stall"][0]) > 0))


os.kill(col, signal.SIGSTOP)
t0 = time.monotonic_ns()
for i in range(30):
    hip.hipModuleLaunchKernel(sl, 1, 1, 1, 1, 1, 1, 0, a, [0.01])
deadline = time.monotonic() + 20
while not lane0_stuck():
    if time.monotonic() > deadline:
        os.kill(col, signal.SIGCONT)
        raise SystemExit(f"lane 0 did not get stuck in 20 s: {accounting(plat.pm)}")
    time.sleep(0.001)
t_stuck = time.monotonic_ns()
for i in range(3):
    hip.hipModuleLaunchKernel(sl, 1, 1, 1, 1, 1, 1, 0, b, [0.01])
hip.hipStreamSynchronize(a)
hip.hipStreamSynchronize(b)
# the rest of the fault's length, counted from when lane 0 was seen stuck: lane 1 (its records come
# 10-30 ms after that) always gets most of STOP_S to reach its first record while lane 0 stalls
time.sleep(max(0.0, STOP_S - (time.monotonic_ns() - t_stuck) / 1e9))
os.kill(col, signal.SIGCONT)
emit(t_stop=t0, t_cont=time.monotonic_ns(), t_stuck=t_stuck)
