"""Dispatch counting without the replay service: the device reads only counter_slots (4 by default)
of the six requested counters; the rest are None.

Result: got [values of each record], configured (replay service), ok.
"""
from hostside import hip, replay
from tests.scenarios.common import emit
from tests.scenarios.replay.prelude import download, launch, load, n, upload, x, y0

load()
got = []
ctx = replay.Context("c")
ctx.start()
replay.DispatchCounting(ctx, ["WORKGROUPS", "WAVEFRONTS", "WORKITEMS", "INACTIVE_LANES", "KERNARG_BYTES",
                              "POINTER_ARGS"], lambda rec: got.append(rec.values))
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 3, 100, s, [dy, dx, 2.0, 250])
hip.hipStreamSynchronize(s)
replay.flush()
emit(got=got, configured=replay.is_configured(),
     ok=download(dy, n)[:250].tolist() == (y0 + 2 * x)[:250].tolist())
