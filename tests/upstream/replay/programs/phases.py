"""Child program of test_replay_phases.py: the three upstream cases of replay_phases.cpp driven
through the real service (configure is once per process, so they share one child).

Prints one JSON object: obs1 / obs2 (what each callback saw of user_data, per dispatch) and calls
(the continue callback's calls of case 3).
"""
import json

from hostside import hip, replay
from tests.scenarios.replay.prelude import launch, load, n, upload, x, y0

SENTINEL = 0xDEADDEADDEADDEAD
CONFIG_ENTER_VALUE = 0x00C0FFEE
PASS_1_ENTER_VALUE = 0x0000BEEF

load()
plan = {}          # dispatch index -> what the tool does
obs = {}
calls = []


def continue_always(d):
    calls.append([d.dispatch_id, d.current_pass, d.user_data, 1])
    return True


def stop_now(d):
    calls.append([d.dispatch_id, d.current_pass, d.user_data, 0])
    return False


def cb(op, phase, d):
    p = plan[d.dispatch_id]
    o = obs.setdefault(d.dispatch_id, {"config_exit_seen": SENTINEL, "passes": {}})
    if op == "CONFIG":
        if phase == "ENTER":
            d.replay_pass_count = p["passes"]
            d.user_data = CONFIG_ENTER_VALUE
            if p.get("continue"):
                d.continue_callback = continue_always
        else:
            o["config_exit_seen"] = d.user_data
        return
    po = o["passes"].setdefault(d.current_pass, {"enter_seen": SENTINEL, "exit_seen": SENTINEL})
    if phase == "ENTER":
        po["enter_seen"] = d.user_data
        w = p.get("pass_enter_writes", {}).get(d.current_pass)
        if w is not None:
            d.user_data = w
    else:
        po["exit_seen"] = d.user_data
        if p.get("continue") and d.current_pass == 1:
            d.continue_callback = stop_now          # the per-pass override, made in PASS EXIT


replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
plan[1] = {"passes": 3}
plan[2] = {"passes": 3, "pass_enter_writes": {1: PASS_1_ENTER_VALUE}}
plan[3] = {"passes": 5, "continue": True, "pass_enter_writes": {1: PASS_1_ENTER_VALUE}}
plan[4] = {"passes": 2, "continue": True}
for _ in plan:
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
print(json.dumps({"obs": {str(k): {"config_exit_seen": v["config_exit_seen"],
                                   "passes": [v["passes"][i] for i in sorted(v["passes"])]}
                          for k, v in obs.items()},
                  "calls": calls,
                  "executed": {str(o.dispatch_id): o.executed for o in replay.outcomes()}}))
