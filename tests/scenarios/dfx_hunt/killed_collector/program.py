"""SIGKILL the DFX collector mid-run (real mode): BEFORE dispatches (argv[1], default 40) run and are
collected, the collector is killed, AFTER more (argv[2], default 200) run. The lane's gates then run
out their short backstop (AFTER is more than a pool of 8 buffers of 16 records holds, and
nothing refills it), find the host gone and drop; at the end the supervisor salvages what was
published. Result: {"before": n, "after": n}.

platform.toml: 1 agent, 1 engine, 1 lane, 16 records per buffer, a 0.3 s backstop.
"""
import os
import signal
import sys
import time

import numpy as np

from hostside import hip
from hostside.hsa import runtime
from shm_layout import dfx as D
from shm_layout import layouts as L
from tests.scenarios.common import emit, kernel_file

BEFORE = int(sys.argv[1]) if len(sys.argv) > 1 else 40
AFTER = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def wait(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


m = hip.hipModuleLoad(kernel_file("basic.py"))
em = hip.hipModuleGetFunction(m, "empty")
s = hip.hipStreamCreate()
plat = runtime().platform
g = plat.topo.dfx
c64 = plat.pm.segs["dfxctl"].u8.view(np.uint64)


def collected():
    return int(c64[g.collected_off // 8:g.collected_off // 8 + g.T * D.N_KINDS].sum())


for _ in range(BEFORE):
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, s, [])
hip.hipStreamSynchronize(s)
wait(lambda: collected() > 0, "the collector to collect records")
role = plat.dfx_roles["collector"][0]
os.kill(plat.procs[role].pid, signal.SIGKILL)
wait(lambda: int(plat.pm.roles[role]["state"]) == L.ROLE_DEAD, "the supervisor to see the collector die")
for _ in range(AFTER):
    hip.hipModuleLaunchKernel(em, 1, 1, 1, 1, 1, 1, 0, s, [])
hip.hipStreamSynchronize(s)
emit(before=BEFORE, after=AFTER)
