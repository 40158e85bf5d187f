"""What the ported hip-tests share: the embedded platform fixture body, launch helpers and ``Gate``.

Convention for a ported file (docs/upstream.md is generated from it by scripts/upstream_table.py):

* one module per upstream file, ``tests/upstream/hip/<dir>/test_<UpstreamBase>.py``, with
  ``UPSTREAM = "ROCm/hip-tests:catch/unit/<dir>/<file>.cc"``;
* one test function per upstream TEST_CASE, named ``test_<UpstreamTestName>``; SECTIONs become
  parameters or separate checks inside it;
* what hdemu does not support is ``@pytest.mark.xfail(strict=True, reason="hdemu: ...")``.
"""
from __future__ import annotations

import time

import numpy as np

from hostside import hip, hsa
from tests.paths import kernel_file

#: the platform the ported suites run on: two devices (multi-device cases), two engines each
CONFIG = {"agents": 2, "memory_mib": 32, "host_pool_mib": 32, "engines": 2}


def platform_module(config: dict | None = None):
    """Body of a module-scoped fixture: ``yield from platform_module()`` yields the loaded
    ``tests/kernels/upstream.py`` module on a fresh embedded platform, torn down afterwards."""
    hip.hipDeviceReset()
    hsa.configure(dict(CONFIG, **(config or {})))
    hip.hipGetLastError()       # a fresh process's last error: what earlier tests of this worker left goes
    try:
        yield hip.hipModuleLoad(kernel_file("upstream.py"))
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()


def devices_healthy() -> bool:
    """Every device synchronises without error (a test left no failed queue behind); device 0 and no
    last error afterwards."""
    try:
        for d in range(hip.hipGetDeviceCount()):
            hip.hipSetDevice(d)
            hip.hipDeviceSynchronize()
        hip.hipSetDevice(0)
        hip.hipGetLastError()
        return True
    except hip.HipError:
        return False


def function(mod, name: str):
    return hip.hipModuleGetFunction(mod, name)


def launch(mod, name: str, args, stream=None, n: int = 1, block: int = 64) -> None:
    """Launch kernel ``name`` of ``mod`` over ``n`` work-items (1-D) on ``stream``."""
    grid = max(1, (n + block - 1) // block)
    hip.hipModuleLaunchKernel(function(mod, name), grid, 1, 1, min(block, max(n, 1)), 1, 1, 0, stream, args)


class Gate:
    """Device work that runs until the test opens it: ``g = Gate(mod); g.launch(stream); ...; g.open()``.
    The flag is pinned host memory; ``close()`` frees it (open first, so no kernel is left waiting)."""

    def __init__(self, mod, limit_s: float = 30.0):
        self.mod = mod
        self.limit_s = limit_s
        self.ptr = hip.hipHostMalloc(4)
        self.flag = hip.host_array(self.ptr, np.uint32, 1)
        self.flag[0] = 0

    def launch(self, stream=None) -> None:
        hip.hipModuleLaunchKernel(function(self.mod, "gate"), 1, 1, 1, 1, 1, 1, 0, stream,
                                  [self.ptr, self.limit_s])

    def open(self) -> None:
        self.flag[0] = 1

    def close(self) -> None:
        self.open()
        hip.hipDeviceSynchronize()
        hip.hipHostFree(self.ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def wait_until(pred, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``pred`` until it is true (no sleep as synchronisation: a deadline on a positive condition)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.001)
