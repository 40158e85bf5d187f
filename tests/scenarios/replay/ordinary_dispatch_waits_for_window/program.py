"""An ordinary dispatch from another thread, submitted while a replay window runs on its agent,
waits at the agent's gate until the window has ended.

The window does not end before the other thread is blocked at the gate: the last PASS EXIT polls
that thread's stack for the gate's read acquisition (or for its launch having returned, which the
test then reports as a failure), with a deadline.

Result: marks {other_launch, other_returned, last_exit} (monotonic ns), stamp (device time the
ordinary kernel ran), ok, status (of both outcomes).
"""
import sys
import threading
import time

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, upload, x, y0

GATE_WAIT = "acquire_read"      # the agent gate's reader side (the replay package's RWLock)
load()
in_window = threading.Event()
marks = {}
other_thread = []


def blocked_at_gate(ident) -> bool:
    f = sys._current_frames().get(ident)
    while f is not None:
        if f.f_code.co_name == GATE_WAIT:
            return True
        f = f.f_back
    return False


def other_is_waiting_or_done(deadline_s=20.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if "other_returned" in marks or (other_thread and blocked_at_gate(other_thread[0].ident)):
            return
        time.sleep(0.001)


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        in_window.set()
    if op == "PASS" and phase == "EXIT":
        if d.current_pass == d.total_passes - 1:
            other_is_waiting_or_done()
        marks["last_exit"] = time.monotonic_ns()


replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))


def other():
    in_window.wait(30)
    marks["other_launch"] = time.monotonic_ns()
    launch("stamp", 1, 1, s2, [dout, 0])            # an ordinary dispatch on the same agent
    marks["other_returned"] = time.monotonic_ns()
    hip.hipStreamSynchronize(s2)


t = threading.Thread(target=other)
other_thread.append(t)
t.start()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
t.join(30)
stamp = int(download(dout, 4, np.uint64)[0])
emit(marks=marks, stamp=stamp, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
     status=[o.status for o in replay.outcomes()])
