"""Localized context control inside a replay loop (start/stop legal only in PASS ENTER, sticky for
this thread, last write wins, the global state untouched) and configure() only once.

Result: errors (what raised ReplayError), views, records (replay_pass of each counter record),
after [A global, B global, A local], configured, global_stop.
"""
import threading

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import launch, load, n, upload, x, y0

load()
A, B = replay.Context("A"), replay.Context("B")
A.start()
errors, views, records = [], [], []
replay.DispatchCounting(A, ["WORKITEMS"], lambda rec: records.append(rec.replay_pass))


def try_(what, fn):
    try:
        fn()
    except replay.ReplayError:
        errors.append(what)


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER":
        if d.current_pass == 0:
            A.stop()
            try_("start B", B.start)                 # B was not active when the loop began
        if d.current_pass == 1:
            other = []
            t = threading.Thread(target=lambda: other.append(A.active))
            t.start()
            t.join()
            views.append(["pass1 before", A.active, other[0]])   # sticky here, global elsewhere
            A.start()
            A.stop()
            A.start()                                # last write wins
            views.append(["pass1 after", A.active])
    if op == "PASS" and phase == "EXIT":
        try_(f"toggle in EXIT {d.current_pass}", A.stop)


replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
replay.flush()
after = [A.globally_active, B.globally_active, A.active]
try_("configure twice", lambda: replay.configure(cb))
A.stop()
emit(errors=errors, views=views, records=sorted(records), after=after, configured=replay.is_configured(),
     global_stop=A.globally_active)
