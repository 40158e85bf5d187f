"""Replays on two agents run at the same time: each agent's window is agent-scoped.

Both threads launch together; at its first PASS ENTER each agent's window waits (deadline 20 s)
until the other agent's window has begun too. Replays serialised across agents cannot meet there:
the wait runs out, and the test sees windows that do not overlap.

Result: spans {agent: [first PASS ENTER ns, last PASS EXIT ns]}, met {agent: the other was seen in
its window}, ok {agent: y correct}, outcomes.
"""
import threading
import time

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
spans, met, go = {}, {}, threading.Barrier(2)
entered = {0: threading.Event(), 1: threading.Event()}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER":
        if d.agent not in spans:
            spans[d.agent] = [time.monotonic_ns(), 0]
            entered[d.agent].set()
            met[d.agent] = entered[1 - d.agent].wait(20)     # the other agent's window is open too
    if op == "PASS" and phase == "EXIT":
        spans[d.agent][1] = time.monotonic_ns()


replay.configure(cb)
ok = {}


def work(dev):
    hip.hipSetDevice(dev)
    s = hip.hipStreamCreate()
    dx, dy = upload(x), upload(y0)
    go.wait(30)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    ok[dev] = download(dy, n).tolist() == (y0 + 2 * x).tolist()


ts = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
for t in ts:
    t.start()
for t in ts:
    t.join(60)
emit(spans=spans, met=met, ok=ok, outcomes=outcome_dicts())
