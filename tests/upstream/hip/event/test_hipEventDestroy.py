"""hipEventDestroy: destroying an event whose record has not completed (on the null stream, and on a
stream that keeps running), no event, and an event destroyed twice (upstream's delays are gates)."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch, wait_until
from tests.upstream.hip.stream.stream_common import gates

UPSTREAM = "ROCm/hip-tests:catch/unit/event/hipEventDestroy.cc"

VECTOR_SIZE = 1024
NOT_READY = hip.hipError_t.hipErrorNotReady


class _Vectors:
    """HipTest::initArraysForHost(..., usePinnedHost=true): pinned A, B, C; the kernel uses the host
    pointers themselves (hipHostGetDevicePointer is the identity on AMD)."""

    def __init__(self):
        self.ptrs = [hip.hipHostMalloc(4 * VECTOR_SIZE) for _ in range(3)]
        self.a, self.b, self.c = (hip.host_array(p, np.float32, VECTOR_SIZE) for p in self.ptrs)
        self.a[:] = np.arange(VECTOR_SIZE, dtype=np.float32) + np.float32(3.146)
        self.b[:] = np.arange(VECTOR_SIZE, dtype=np.float32) + np.float32(1.618)
        self.c[:] = 0

    def check_and_free(self):
        assert np.array_equal(self.c, self.a + self.b)
        for p in self.ptrs:
            hip.hipHostFree(p)


def _launch_vector_add(mod, gate, stream=None):
    v = _Vectors()
    gate.launch(stream)
    launch(mod, "vectorADD", [v.ptrs[0], v.ptrs[1], v.ptrs[2], VECTOR_SIZE], stream, n=1, block=1)
    return v


class _DestroyInThread:
    """hipEventDestroy(event) from a helper thread. ``returned()``: it came back while the gate is still
    shut (a bounded wait for the positive outcome, 25 s: under the gate's 30 s limit; no wall-clock
    assertion); ``join()`` after the gate
    opened reaps the thread either way and re-raises what the call raised."""

    def __init__(self, event):
        self.result = []
        self.thread = threading.Thread(target=self._run, args=(event,))
        self.thread.start()

    def _run(self, event):
        try:
            self.result.append(hip.hipEventDestroy(event))
        except Exception as exc:    # reported by join()
            self.result.append(exc)

    def returned(self) -> bool:
        try:
            wait_until(lambda: self.result, timeout=25.0, what="hipEventDestroy to return")
        except AssertionError:
            return False
        return True

    def join(self) -> None:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()
        if isinstance(self.result[0], Exception):
            raise self.result[0]


def test_Unit_hipEventDestroy_Unfinished(mod):
    ev = hip.hipEventCreate()
    with gates(mod, 1) as (g,):
        v = _launch_vector_add(mod, g)
        hip.hipEventRecord(ev)
        assert hip.hipEventQuery(ev) == NOT_READY
        d = _DestroyInThread(ev)
        returned = d.returned()
        g.open()
        d.join()
        hip.hipDeviceSynchronize()
        v.check_and_free()
        assert returned, "hipEventDestroy did not return while its record was pending"


def test_Unit_hipEventDestroy_WithWaitingStream(mod):
    ev = hip.hipEventCreate()
    s = hip.hipStreamCreate()
    with gates(mod, 1) as (g,):
        v = _launch_vector_add(mod, g, s)
        hip.hipEventRecord(ev, s)
        assert hip.hipEventQuery(ev) == NOT_READY
        assert hip.hipStreamQuery(s) == NOT_READY
        d = _DestroyInThread(ev)
        returned = d.returned()
        still_busy = hip.hipStreamQuery(s)
        g.open()
        d.join()
        assert returned, "hipEventDestroy did not return while its record was pending"
        assert still_busy == NOT_READY
        hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)
    v.check_and_free()


@pytest.mark.parametrize("section", ["invalid_event", "destroy_twice"])
def test_Unit_hipEventDestroy_Negative(mod, section):
    if section == "invalid_event":
        with pytest.raises(hip.HipError) as ei:
            hip.hipEventDestroy(None)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle
    else:
        ev = hip.hipEventCreate()
        hip.hipEventDestroy(ev)
        with pytest.raises(hip.HipError) as ei:
            hip.hipEventDestroy(ev)
        assert ei.value.error == hip.hipError_t.hipErrorContextIsDestroyed
