"""A graph launch while replay is configured warns once, runs once and is reported declined
(graph_launch).

Result: y, warns (replay warnings), outcomes.
"""
import warnings

import numpy as np

from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import F, download, load, n, outcome_dicts, upload, x

load()
replay.configure(lambda op, phase, d: setattr(d, "replay_pass_count", 3) if (op, phase) == ("CONFIG", "ENTER")
                 else None)
s = hip.hipStreamCreate()
dy = upload(np.zeros(n, np.float32))
g = hip.hipGraphCreate()
p = hip.hipKernelNodeParams(func=F("axpy"), gridDim=(4, 1, 1), blockDim=(256, 1, 1), sharedMemBytes=0,
                            kernelParams=[dy, upload(x), 1.0, n])
hip.hipGraphAddKernelNode(g, [], p)
ex = hip.hipGraphInstantiate(g)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    hip.hipGraphLaunch(ex, s)
    hip.hipGraphLaunch(ex, s)
hip.hipStreamSynchronize(s)
emit(y=download(dy, n).tolist(), warns=[str(m.message) for m in w if "replay" in str(m.message)],
     outcomes=outcome_dicts())
