"""Dispatches from inside tool callbacks (CONFIG ENTER, PASS ENTER on the same and a sibling
stream, a counter record on the async-handler thread) are declined as reentrant and never deadlock.

Result: ok, c (the inc kernels' counter), outcomes.
"""
import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

load()
state = {"cfg": 0, "pass": 0, "rec": 0}
ctx = replay.Context("c")
ctx.start()


def on_record(rec):                                   # runs on the async-handler thread
    if rec.kernel == "axpy" and not state["rec"]:
        state["rec"] = 1
        launch("inc", 1, 1, s2, [dc, 1])


replay.DispatchCounting(ctx, ["WAVEFRONTS"], on_record)


def cb(op, phase, d):
    if d.kernel != "axpy":
        return
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
        if not state["cfg"]:
            state["cfg"] = 1
            launch("inc", 1, 1, s2, [dc, 1])          # from CONFIG ENTER
    if op == "PASS" and phase == "ENTER" and d.current_pass == 2 and not state["pass"]:
        state["pass"] = 1
        launch("inc", 1, 1, s1, [dc, 1])              # same stream, writer lock held by this thread
        launch("inc", 1, 1, s2, [dc, 1])              # sibling stream of the same agent


replay.configure(cb, policy="decline")
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy, dc = upload(x), upload(y0), upload(np.zeros(4, np.int32))
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
hip.hipDeviceSynchronize()
replay.flush()
hip.hipDeviceSynchronize()
emit(ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), c=int(download(dc, 4, np.int32)[0]),
     outcomes=outcome_dicts())
