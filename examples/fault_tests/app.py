"""The program under test: a small pipeline on hdemu's HIP API (copy in, four kernels, copy out,
synchronise, check), round after round for ``--seconds``. It exits 0 when every round checked, 1 when
a result was wrong; a HIP failure (a dead device, a wait that ran out) propagates as ``HipError``.

``python app.py --seconds 2`` runs it on its own (an embedded platform); the tests run it, or its
``workload`` function, against a platform with faults injected (test_app_faults.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from hostside import hip

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("f32* x, u32 n")
def scale(ctx, x, n):
    x[:n] = x[:n] * 2 + 1
'''
#: kernels per round: x becomes 2**K * (x + 1) - 1
K = 4


def pipeline(seconds: float, n: int = 4096, on_round=None) -> int:
    """Run rounds for ``seconds``; returns how many checked. ``on_round(i)`` after each good round."""
    mod = hip.hipModuleLoadData(KERNELS, "app_kernels.py")
    scale = hip.hipModuleGetFunction(mod, "scale")
    stream = hip.hipStreamCreate()
    dev = hip.hipMalloc(4 * n)
    host_in, host_out = np.empty(n, np.float32), np.empty(n, np.float32)
    rounds, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        host_in[:] = rounds % 100
        hip.hipMemcpyHtoDAsync(dev, host_in, 4 * n, stream)
        for _ in range(K):
            hip.hipModuleLaunchKernel(scale, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, [dev, n])
        hip.hipMemcpyDtoHAsync(host_out, dev, 4 * n, stream)
        hip.hipStreamSynchronize(stream)
        want = 2 ** K * (rounds % 100 + 1) - 1
        if not np.all(host_out == want):
            raise SystemExit(f"round {rounds}: wrong result {host_out[:4]}, expected {want}")
        rounds += 1
        if on_round is not None:
            on_round(rounds)
    hip.hipFree(dev)
    hip.hipStreamDestroy(stream)
    hip.hipModuleUnload(mod)
    return rounds


def workload(events) -> bool:
    """The same pipeline as an entry point of hdemu_faults (called in the workload's process with an
    ``Events`` object): each checked round is a ``sync`` event of stream 0, so promises such as
    ``others_served`` can see the work go on after a fault."""
    seconds = float(os.environ.get("APP_SECONDS", "1.5"))
    rounds = pipeline(seconds, on_round=lambda i: events.record("sync", stream=0, round=i))
    events.record("rounds", rounds=rounds)
    return rounds > 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    rounds = pipeline(ap.parse_args(argv).seconds)
    print(f"{rounds} rounds checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
