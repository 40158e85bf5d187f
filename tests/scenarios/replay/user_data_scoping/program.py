"""user_data: set at CONFIG ENTER, fresh at every pass, a pass's write visible until it ends, scoped
to its dispatch.

Result: log [[op, phase, dispatch_id, pass, user_data]] of every callback and continue call.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import launch, load, n, upload, x, y0

load()
log = []


def cb(op, phase, d):
    log.append([op, phase, d.dispatch_id, d.current_pass, d.user_data])
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
        d.user_data = {1: "config-1", 2: None}[d.dispatch_id]
    if op == "PASS" and phase == "ENTER":
        d.user_data = f"pass-{d.current_pass}"       # visible until this pass ends, not after


def cont(d):
    log.append(["CONT", "", d.dispatch_id, d.current_pass, d.user_data])
    return True


replay.configure(cb, cont)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
emit(log=log)
