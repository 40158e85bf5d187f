"""The application's completion signal is suppressed during every pass and fires once, after the
last: a fixed count, an early stop and an open-ended loop.

Result: seen {dispatch_id: [[phase, pass, signal value]]}, res [[signal value after, y correct]],
outcomes.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
seen = {}
plans = {1: (3, None), 2: (5, lambda d: d.current_pass < 1), 3: (0, lambda d: d.current_pass < 3)}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count, c = plans[d.dispatch_id]
        if c is not None:
            d.continue_callback = c
    if op == "PASS":
        seen.setdefault(d.dispatch_id, []).append((phase, d.current_pass, d.completion_signal.load()))


replay.configure(cb)
s = hip.hipStreamCreate()
dx = upload(x)
res = []
for k in range(3):
    dy = upload(y0)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    sig = s.vgpu.last_signal
    res.append([sig.load(), download(dy, n).tolist() == (y0 + 2 * x).tolist()])
emit(seen=seen, res=res, outcomes=outcome_dicts())
