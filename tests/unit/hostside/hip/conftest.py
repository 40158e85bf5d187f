"""Fixtures the HIP unit tests share; each test module defines its own module-scoped ``mod`` (the
platform and the loaded kernels, ``embedded.embedded_module``) that these depend on."""
import pytest

from hostside import hip


@pytest.fixture
def stream(mod):
    """A created stream, destroyed afterwards (a capture left open on it is ended first)."""
    s = hip.hipStreamCreate()
    yield s
    if hip.hipStreamIsCapturing(s) != hip.hipStreamCaptureStatusNone:
        try:
            hip.hipStreamEndCapture(s)
        except hip.HipError:
            pass
    hip.hipStreamDestroy(s)


@pytest.fixture
def dmem(mod):
    """dmem(nbytes, host=False, flags=0) -> a device (or pinned host) pointer; all freed at the end."""
    ptrs = []

    def alloc(n, host=False, flags=0):
        p = hip.hipHostMalloc(n, flags) if host else hip.hipMalloc(n)
        ptrs.append((p, host))
        return p
    yield alloc
    for p, host in ptrs:
        (hip.hipHostFree if host else hip.hipFree)(p)
