"""When the continue callback is asked, and what True and False do, for fixed and open-ended loops.

Result: asked {dispatch_id: [passes it was asked after]}, y, outcomes.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
asked = {}
plans = {1: (4, lambda d: True), 2: (4, lambda d: d.current_pass < 1), 3: (2, lambda d: True),
         4: (0, lambda d: d.current_pass < 5)}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count, c = plans[d.dispatch_id]

        def wrapped(data, c=c):
            asked.setdefault(data.dispatch_id, []).append(data.current_pass)
            return c(data)
        d.continue_callback = wrapped


replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
for k in range(4):
    launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
emit(asked=asked, y=download(dy, n).tolist(), outcomes=outcome_dicts())
