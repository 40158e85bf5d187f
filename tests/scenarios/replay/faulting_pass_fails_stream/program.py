"""A pass that faults fails its stream (hipErrorIllegalAddress), not the process: the agent still
replays on other streams.

Result: err, ok, outcomes.
"""
import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import launch, load, n, outcome_dicts, upload, x, y0

load()


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3


replay.configure(cb)
s = hip.hipStreamCreate()
dc = upload(np.zeros(4, np.int32))
launch("overrun", 1, 1, s, [dc, 4])
try:
    hip.hipStreamSynchronize(s)
    err = None
except hip.HipError as e:
    err = e.name
s2 = hip.hipStreamCreate()                          # the agent still replays on other streams
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s2, [dy, dx, 2.0, n])
y = np.empty(n, np.float32)
hip.hipMemcpyAsync(y, dy, 4 * n, hip.hipMemcpyDeviceToHost, s2)   # not hipDeviceSynchronize: s failed
emit(err=err, ok=y.tolist() == (y0 + 2 * x).tolist(), outcomes=outcome_dicts())
