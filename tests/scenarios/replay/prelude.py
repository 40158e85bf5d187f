"""What every replay scenario program starts with: the replay test kernels loaded on the embedded
platform, launch / upload / download helpers and the standard inputs (``n``, ``x``, ``y0``).

The replay service is configured once per process, which is why each replay scenario is a program.
``load()`` must come first (before ``replay.configure``), as in the programs' original prelude.
"""
import dataclasses

import numpy as np

from hostside import hip, replay
from tests.paths import kernel_file

n = 1000
x = np.arange(n, dtype=np.float32)
y0 = np.full(n, 3.0, np.float32)
_module = []


def load():
    """Load tests/kernels/replay_kernels.py (once) and return the module."""
    if not _module:
        _module.append(hip.hipModuleLoad(kernel_file("replay_kernels.py")))
    return _module[0]


def F(name):
    return hip.hipModuleGetFunction(load(), name)


def launch(name, grid, block, stream, args, shared=0):
    hip.hipModuleLaunchKernel(F(name), grid, 1, 1, block, 1, 1, shared, stream, args)


def upload(arr):
    p = hip.hipMalloc(arr.nbytes)
    hip.hipMemcpy(p, arr, arr.nbytes, hip.hipMemcpyHostToDevice)
    return p


def download(p, count, dt=np.float32):
    hip.hipDeviceSynchronize()              # the null stream does not wait for other streams here
    out = np.empty(count, dt)
    hip.hipMemcpy(out, p, out.nbytes, hip.hipMemcpyDeviceToHost)
    return out


def outcome_dicts():
    return [dataclasses.asdict(o) for o in replay.outcomes()]
