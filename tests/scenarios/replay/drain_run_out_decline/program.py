"""The per-pass drain and the queue drain run out (policy decline): a replayed kernel that
outlives its pass drain gets no second pass and no restore; an earlier kernel on the same queue
that outlives the queue drain declines the next dispatch.

Result: enters [[kernel, pass]], v [signal after launch, after sync], ok, outcomes.
"""
import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import F, download, launch, load, n, outcome_dicts, upload, x, y0

load()
enters = []


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 1 if d.user_data is None and d.kernel == "span" and d.grid[0] == 2 else 3
    if op == "PASS" and phase == "ENTER":
        enters.append((d.kernel, d.current_pass))


replay.configure(cb, policy="decline", queue_sync_slice_s=0.2, queue_drain_slices=2, pass_drain_slices=2)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(8, np.uint64))
# a replayed kernel that outlives the per-pass drain: no second pass, no restore
launch("span", 1, 1, s, [dout, 0, 1.0])
sig1 = s.vgpu.last_signal
v_after_launch = sig1.load()
hip.hipStreamSynchronize(s)
v_after_sync = sig1.load()
# an earlier (not replayed) kernel on the same queue outlives the queue drain
hip.hipModuleLaunchKernel(F("span"), 1, 1, 1, 2, 1, 1, 0, s, [dout, 1, 1.0])
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
emit(enters=enters, v=[v_after_launch, v_after_sync], ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
     outcomes=outcome_dicts())
