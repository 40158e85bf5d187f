"""Pass counts None, 1, 3, 0 (with and without a continue callback), -2 and "x": which dispatches
are replayed, and how often.

Result: passes {dispatch_id: PASS ENTER count}, ok [y correct per dispatch], outcomes.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
table = {1: None, 2: 1, 3: 3, 4: 0, 5: 0, 6: -2, 7: "x"}
passes = {}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        v = table[d.dispatch_id]
        if v is not None:
            d.replay_pass_count = v
        if d.dispatch_id == 5:
            d.continue_callback = None          # 0 without a continue callback: refused
    if op == "PASS" and phase == "ENTER":
        passes[d.dispatch_id] = passes.get(d.dispatch_id, 0) + 1


replay.configure(cb, continue_callback=lambda d: d.current_pass < 2)
s = hip.hipStreamCreate()
dx = upload(x)
ok = []
for k in range(7):
    dy = upload(y0)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    ok.append(download(dy, n).tolist() == (y0 + 2 * x).tolist())
emit(passes=passes, ok=ok, outcomes=outcome_dicts())
