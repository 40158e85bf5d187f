"""A persistent kernel on a sibling queue (the gate kernel of tests/kernels/basic.py, opened only once
the replayed launch returned) keeps the agent drain from finishing: with policy ``decline`` (argv[1])
the dispatch runs once; with ``fatal`` the process aborts (SIGABRT) naming the wait, leaving its
command processors to notice their supervisor is gone (they end without waiting for the gate).

Usage: program.py decline|fatal. Prints ``CPS {"pids": [...]}`` first (the command processors).
Result (decline only): took (s the replayed launch took), held (the persistent kernel was still running
when the launch returned: it did not wait for it), ok, outcomes.
"""
import sys
import time

import numpy as np

from hostside import hip, replay
from tests.paths import kernel_file
from tests.scenarios.common import announce, emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

POLICY = sys.argv[1]
load()
hold = hip.hipModuleLoad(kernel_file("basic.py"))     # the gate kernel


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 3


replay.configure(cb, policy=POLICY, agent_drain_timeout_s=0.4, queue_sync_slice_s=0.2, pass_drain_slices=2)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
rt = s1.vgpu.rt
announce("CPS", pids=[ag.cp_pid for ag in rt.agents])
flag = hip.hipHostMalloc(4)
opened = hip.host_array(flag, np.uint32, 1)
opened[0] = 0
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(hold, "gate"), 1, 1, 1, 1, 1, 1, 0, s2, [flag, 60.0])
t0 = time.monotonic()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
took = time.monotonic() - t0
held = hip.hipStreamQuery(s2) == hip.hipError_t.hipErrorNotReady    # the gate still shut: not waited for
opened[0] = 1
hip.hipStreamSynchronize(s1)
emit(took=took, held=held, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), outcomes=outcome_dicts())
