"""Declines: pinned host memory (untracked_memory), a footprint over the budget (footprint_budget)
and a snapshot that cannot be taken (snapshot_failed); one dispatch within the budget is replayed.

Result: pinned_ok, ok, outcomes.
"""
import numpy as np

from hostside import hip, replay
from hostside.replay import _state
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 4


replay.configure(cb, policy="decline", footprint_budget=64 << 10)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
ph = hip.hipHostMalloc(4 * n)
hip.host_array(ph, np.float32, n)[:] = y0
launch("axpy", 4, 256, s, [ph, dx, 2.0, n])          # pinned host memory is not snapshotted
hip.hipStreamSynchronize(s)
pinned_ok = hip.host_array(ph, np.float32, n).tolist() == (y0 + 2 * x).tolist()
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])          # fits the budget: replayed
big = hip.hipMalloc(1 << 20)
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])          # the footprint now exceeds the budget
replay._service.footprint_budget = 0


def boom(*a):
    raise MemoryError("no room for the snapshot")


_state._Agent.snap = boom
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
emit(pinned_ok=pinned_ok, ok=download(dy, n).tolist() == (y0 + 6 * x).tolist(), outcomes=outcome_dicts())
