"""What the ported snapshot suites share (snap_restore.cpp, snap_allocator_patterns.cpp,
memory_tracker_test.cpp): the platform with tests/kernels/replay_kernels.py loaded, upstream's
``kernel_launch`` helpers (snap_kernels.hpp) and device reads. The snapshot itself is
``hostside.replay._snapshot`` driven directly, as upstream drives ``memory_snapshot::snap`` and
``restore`` without a replay window."""
from __future__ import annotations

import numpy as np

from hostside import hip, hsa
from tests.paths import kernel_file
from tests.upstream.hipkit import CONFIG


def platform_module():
    """Body of a module-scoped fixture: yields the loaded replay kernels on a fresh embedded platform."""
    hip.hipDeviceReset()
    hsa.configure(dict(CONFIG))
    hip.hipGetLastError()       # a fresh process's last error: what earlier tests of this worker left goes
    try:
        yield hip.hipModuleLoad(kernel_file("replay_kernels.py"))
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()


def gpu_agent() -> int:
    """The agent hipMalloc allocates on (the current device)."""
    return hip.hipGetDevice()


def _launch(mod, name, args, n):
    block = 1024
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, name), max(1, -(-n // block)), 1, 1,
                              min(block, max(n, 1)), 1, 1, 0, None, args)


def sync_ok() -> None:
    assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
    hip.hipDeviceSynchronize()


def fill(mod, d, val, n):
    _launch(mod, "fill", [d, float(val), n], n)
    sync_ok()


def iota(mod, d, base, n):
    _launch(mod, "iota", [d, float(base), n], n)
    sync_ok()


def add(mod, d, delta, n):
    _launch(mod, "add", [d, float(delta), n], n)
    sync_ok()


def saxpy(mod, y, x, a, n):
    _launch(mod, "saxpy", [y, x, float(a), n], n)
    sync_ok()


def read_device(d, n, dtype=np.float32) -> np.ndarray:
    out = np.empty(n, dtype)
    hip.hipMemcpy(out, d, out.nbytes, hip.hipMemcpyDeviceToHost)
    return out


def set_module_counter(mod, value: int) -> None:
    ptr, _size = hip.hipModuleGetGlobal(mod, "counter")
    v = np.array([value], np.int32)
    hip.hipMemcpy(ptr, v, v.nbytes, hip.hipMemcpyHostToDevice)


def read_module_counter(mod) -> int:
    ptr, _size = hip.hipModuleGetGlobal(mod, "counter")
    return int(read_device(ptr, 1, np.int32)[0])


def bump_module_counter(mod) -> None:
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "bump"), 1, 1, 1, 1, 1, 1, 0, None, [1])
