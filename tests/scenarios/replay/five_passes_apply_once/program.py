"""Five passes of in-place updates (one buffer, two buffers, a module global) apply once: memory is
restored between passes.

Result: y, y2, z, counter (the device global), gsize, passes [[dispatch_id, pass, total]], outcomes,
stats (replay.statistics()).
"""
import dataclasses

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, outcome_dicts, upload, x, y0

m = load()
passes = []


def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 5
    if op == "PASS" and phase == "ENTER":
        passes.append((d.dispatch_id, d.current_pass, d.total_passes))


replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy, dz = upload(x), upload(y0), upload(np.zeros(n, np.float32))
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])                  # one buffer
dy2 = upload(y0)
launch("axpy2", 4, 256, s, [dy2, dz, dx, 0.5, n])            # two buffers
launch("bump", 1, 16, s, [10])                                # a module-level device global
hip.hipStreamSynchronize(s)
g, gsize = hip.hipModuleGetGlobal(m, "counter")
emit(y=download(dy, n).tolist(), y2=download(dy2, n).tolist(), z=download(dz, n).tolist(),
     counter=download(g, 16, np.int32).tolist(), gsize=gsize, passes=passes, outcomes=outcome_dicts(),
     stats=dataclasses.asdict(replay.statistics()))
