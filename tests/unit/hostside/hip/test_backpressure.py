"""A host a whole signal ring ahead of its device (``hostside.clr._vgpu``, ``_drain_wait``): it sleeps
until a quarter of the ring has drained instead of waiting (and spinning) for one command after
another, but never longer than ``BACKPRESSURE_WAIT_S`` for that quarter: a command there that only
the host can let through (a kernel gated by a flag the host sets later) does not hold up a
submission that the signal-reuse rule allows."""
import threading

import numpy as np
import pytest

from hostside import hip
from hostside.clr import _vgpu
from tests.paths import kernel_file
from tests.upstream.hipkit import Gate, function, platform_module, wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from platform_module({"engines": 1})


def test_submissions_past_the_ring_are_not_held_up_by_a_gate_in_the_drained_quarter(mod, monkeypatch):
    """The host laps the ring deterministically: the first command is a gate (``first``) the test opens
    only once the host waited a quarter ring (``_drain_wait`` called); the gate under test follows 29
    slow kernels, in the quarter the host then drains past."""
    ring = _vgpu.SIGNALS_PER_STREAM
    slow, tail = 29, ring - 6          # the first gate, 29 slow kernels, the gate, enough to reuse ~24 slots
    drains = []
    real = _vgpu.VirtualGPU._drain_wait
    monkeypatch.setattr(_vgpu.VirtualGPU, "_drain_wait", lambda self, far: (drains.append(far), real(self, far)))
    s = hip.hipStreamCreate()
    basic = hip.hipModuleLoad(kernel_file("basic.py"))
    sleep, empty = function(basic, "sleep"), function(mod, "empty")
    done = threading.Event()
    errors = []

    for _ in range(ring):              # the ring grown to its full size first (signals created once)
        hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, [])
    hip.hipStreamSynchronize(s)

    def submit(first, gate):
        try:
            first.launch(s)
            for _ in range(slow):
                hip.hipModuleLaunchKernel(sleep, 1, 1, 1, 1, 1, 1, 0, s, [0.005])
            gate.launch(s)
            for _ in range(tail):
                hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, [])
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        done.set()

    try:
        with Gate(mod, limit_s=60.0) as first, Gate(mod, limit_s=60.0) as gate:
            t = threading.Thread(target=submit, args=(first, gate))
            t.start()
            try:
                # the host a ring ahead: its command on the first gate's slot waits a quarter ring
                wait_until(lambda: drains or done.is_set(), 60.0, "the host to wait a quarter ring")
                assert drains, "the host never waited a quarter ring (the test did not reach the path)"
                first.open()
                # every submission is allowed by the signal-reuse rule (no slot at or past the gate is
                # reused), so the submitter finishes while the gate is still closed
                assert done.wait(60), "the submitter was held up by the gated command"
                assert not errors, errors
                assert hip.hipStreamQuery(s) == hip.hipError_t.hipErrorNotReady
            finally:
                first.open()
                gate.open()
                t.join(60)
            hip.hipStreamSynchronize(s)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipModuleUnload(basic)


def test_a_pipeline_far_past_the_ring_keeps_order(mod):
    """2,000 launches on one stream, never synchronised until the end: each adds one, in order."""
    n = 64
    s = hip.hipStreamCreate()
    b = hip.hipMalloc(4 * n)
    try:
        hip.hipMemsetAsync(b, 0, 4 * n, s)
        inc = function(mod, "increment")
        for _ in range(2000):
            hip.hipModuleLaunchKernel(inc, 1, 1, 1, n, 1, 1, 0, s, [b, n])
        out = np.zeros(n, np.int32)
        hip.hipMemcpyAsync(out, b, 4 * n, hip.hipMemcpyDeviceToHost, s)
        hip.hipStreamSynchronize(s)
        assert (out == 2000).all()
    finally:
        hip.hipFree(b)
        hip.hipStreamDestroy(s)
