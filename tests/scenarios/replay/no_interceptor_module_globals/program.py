"""Without replay configured no interceptor is installed; module globals are per agent, zeroed,
and an unknown global is hipErrorNotFound.

Result: before/after [replay configured, no interceptor], c0, c1 (the global on agents 0 and 1),
size, distinct (the two addresses differ), err.
"""
import numpy as np

from hostside import hip, replay
from hostside.clr import interceptor
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load

m = load()
before = [replay.is_configured(), interceptor() is None]
s = hip.hipStreamCreate()
launch("bump", 1, 16, s, [3])
launch("bump", 1, 16, s, [2])
hip.hipStreamSynchronize(s)
p0, size = hip.hipModuleGetGlobal(m, "counter")
hip.hipSetDevice(1)
p1, _ = hip.hipModuleGetGlobal(m, "counter")
launch("bump", 1, 16, None, [1])
hip.hipDeviceSynchronize()
try:
    hip.hipModuleGetGlobal(m, "nope")
    err = None
except hip.HipError as e:
    err = e.name
emit(before=before, after=[replay.is_configured(), interceptor() is None],
     c0=download(p0, 16, np.int32).tolist(), c1=download(p1, 16, np.int32).tolist(), size=size,
     distinct=p0 != p1, err=err)
