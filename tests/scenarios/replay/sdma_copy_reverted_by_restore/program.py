"""HAZARD (docs/replay.md), with the copy fence off (``configure(copy_fence=False)``): an async
SDMA copy is not a kernel dispatch, so it does not pass the replay gate. Issued by another thread inside a replay window, it lands between snap() and restore()
and is silently reverted, although the copy itself completed successfully.

Result: copied (the copy completed inside the window), lost (the buffer after the window), later
(after the same copy outside a window), ok.
"""
import threading

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, upload, x, y0

load()
go, done = threading.Event(), threading.Event()


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 2
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        go.set()
        done.wait(30)                          # the other thread's copy completes inside the window


replay.configure(cb, copy_fence=False)           # the old behaviour: copies not fenced
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dw = upload(np.zeros(n, np.float32))
src = hip.hipHostMalloc(4 * n)
hip.host_array(src, np.float32, n)[:] = 7.0


def copier():
    go.wait(30)
    hip.hipMemcpyAsync(dw, src, 4 * n, hip.hipMemcpyHostToDevice, s2)    # SDMA, ungated
    hip.hipStreamSynchronize(s2)
    done.set()


t = threading.Thread(target=copier)
t.start()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
t.join(30)
lost = download(dw, n).tolist()
hip.hipMemcpyAsync(dw, src, 4 * n, hip.hipMemcpyHostToDevice, s2)        # the same copy, no window
hip.hipStreamSynchronize(s2)
emit(copied=done.is_set(), lost=lost, later=download(dw, n).tolist(),
     ok=download(dy, n).tolist() == (y0 + 2 * x).tolist())
