"""SIGKILL an AICPU lane mid-run: lane 0 (engine 0's ring) is killed after it has consumed the first
BEFORE dispatches of stream a (argv[1], default 20: fewer than a buffer holds, so its records are all
in its current buffers), then AFTER more (argv[2], default 30) run on each stream. The run must end
balanced: the dead lane's current buffers collected by the host, the dispatches it never saw counted.

platform.toml: 1 agent x 2 engines (stream a -> engine 0 -> lane 0, stream b -> engine 1 -> lane 1), 64
records per buffer. Result: {"before": n, "after": n}.
"""
import os
import signal
import sys
import time

from hostside import hip
from hostside.hsa import runtime
from shm_layout import dfx as D
from shm_layout import layouts as L
from tests.scenarios.common import emit, kernel_file

BEFORE = int(sys.argv[1]) if len(sys.argv) > 1 else 20
AFTER = int(sys.argv[2]) if len(sys.argv) > 2 else 30


def wait(cond, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


m = hip.hipModuleLoad(kernel_file("basic.py"))
em = hip.hipModuleGetFunction(m, "empty")
a, b = hip.hipStreamCreate(), hip.hipStreamCreate()
assert (a.vgpu.queue.engine, b.vgpu.queue.engine) == (0, 1)
plat = runtime().platform
for _ in range(BEFORE):
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, a, [])
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, b, [])
hip.hipStreamSynchronize(a)
hip.hipStreamSynchronize(b)
ring0 = plat.pm.segs["dfxctl"].view(D.task_ring_header, plat.topo.dfx.task_ring_off(0), 1)[0]
wait(lambda: int(ring0["head"]) == BEFORE, "lane 0 to consume the first dispatches")
role = plat.dfx_roles["lanes"][0]
os.kill(plat.procs[role].pid, signal.SIGKILL)
wait(lambda: int(plat.pm.roles[role]["state"]) == L.ROLE_DEAD, "the supervisor to see lane 0 die")
for _ in range(AFTER):
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, a, [])
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, b, [])
hip.hipStreamSynchronize(a)
hip.hipStreamSynchronize(b)
emit(before=BEFORE, after=AFTER)
