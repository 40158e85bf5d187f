"""A kernel in flight on a sibling stream of the agent finishes before the replay's snapshot.

Result: marks {pass0} (monotonic ns at PASS ENTER 0), t0, span [start, end] written by the sibling
kernel, ok, engines [engine of s1, engine of s2].
"""
import time

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, upload, x, y0

load()
marks = {}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 2
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        marks["pass0"] = time.monotonic_ns()


replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))
launch("span", 1, 1, s2, [dout, 0, 0.6])             # in flight on a sibling stream of agent 0
t0 = time.monotonic_ns()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
hip.hipDeviceSynchronize()
span = download(dout, 4, np.uint64).tolist()
emit(marks=marks, t0=t0, span=span, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
     engines=[s1.vgpu.queue.engine, s2.vgpu.queue.engine])
