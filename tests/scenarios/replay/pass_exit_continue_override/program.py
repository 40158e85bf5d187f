"""A continue callback replaced during PASS EXIT decides that same pass (rocprofiler-sdk
replay_phases ``replay_continue_per_pass_override_and_pass_scoped_user_data``): the CONFIG default
keeps going; pass 1's EXIT installs one that stops, and it is asked right away with that pass's
user_data; the final pass of a fixed loop asks no one.

Result: calls ([pass, user_data, returned, who]), outcome, ok.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
calls = []


def keep_going(d):
    calls.append([d.current_pass, d.user_data, True, "config"])
    return True


def stop_now(d):
    calls.append([d.current_pass, d.user_data, False, "pass"])
    return False


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 5
        d.user_data = "config"
        d.continue_callback = keep_going
    if op == "PASS" and phase == "ENTER" and d.current_pass == 1:
        d.user_data = "pass-1"
    if op == "PASS" and phase == "EXIT" and d.current_pass == 1:
        d.continue_callback = stop_now


replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
emit(calls=calls, outcome=outcome_dicts()[-1], ok=download(dy, n).tolist() == (y0 + 2 * x).tolist())
