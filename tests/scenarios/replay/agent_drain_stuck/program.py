"""A persistent kernel on a sibling queue keeps the agent drain from finishing: with policy
``decline`` (argv[1]) the dispatch runs once; with ``fatal`` the process aborts (SIGABRT) naming
the wait, leaving its command processors to notice their supervisor is gone.

Usage: program.py decline|fatal. Prints ``CPS {"pids": [...]}`` first (the command processors).
Result (decline only): took (s the replayed launch took), ok, outcomes.
"""
import sys
import time

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import announce, emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

POLICY = sys.argv[1]
load()


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 3


replay.configure(cb, policy=POLICY, agent_drain_timeout_s=0.4, queue_sync_slice_s=0.2, pass_drain_slices=2)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))
rt = s1.vgpu.rt
announce("CPS", pids=[ag.cp_pid for ag in rt.agents])
launch("span", 1, 1, s2, [dout, 0, 3.0])          # a persistent kernel on a sibling queue
t0 = time.monotonic()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
took = time.monotonic() - t0
hip.hipStreamSynchronize(s1)
emit(took=took, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), outcomes=outcome_dicts())
