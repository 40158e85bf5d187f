"""The copy fence (the default): an async SDMA copy another thread issues inside a replay window
waits until the window has closed, so no restore reverts it.

Result: held (the copy was seen waiting at the fence during pass 0), during (the copy had not
completed when the last pass ended), kept (the buffer after the window), ok, outcome.
"""
import threading

import numpy as np

from hostside import hip, replay
from hostside.replay._fence import FENCE
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0
from tests.upstream.hipkit import wait_until

load()
go, done = threading.Event(), threading.Event()
seen = {}


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 2
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        go.set()
        wait_until(lambda: FENCE.copies_waiting(0) == 1, 30, "the copy to wait at the fence")
        seen["held"] = True
    if op == "PASS" and phase == "EXIT" and d.current_pass == 1:
        seen["during"] = done.is_set()


replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dw = upload(np.zeros(n, np.float32))
src = hip.hipHostMalloc(4 * n)
hip.host_array(src, np.float32, n)[:] = 7.0


def copier():
    go.wait(30)
    hip.hipMemcpyAsync(dw, src, 4 * n, hip.hipMemcpyHostToDevice, s2)    # waits for the window
    hip.hipStreamSynchronize(s2)
    done.set()


t = threading.Thread(target=copier)
t.start()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
t.join(30)
emit(held=seen.get("held"), during=seen.get("during"), kept=download(dw, n).tolist() == [7.0] * n,
     ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), outcome=outcome_dicts()[-1])
