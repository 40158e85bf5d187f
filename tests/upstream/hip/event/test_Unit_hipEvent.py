"""Events around a kernel on the null or a created stream: elapsed times of start/stop pairs before and
after they complete (no synchronize, stream synchronize, stop-event synchronize; with and without waiting
for the start first), and the errors for timing-disabled, missing and never-recorded events. The kernel
upstream makes long (10 M elements, 100 rounds) is short here, preceded by a gate while it must be busy."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import launch
from tests.upstream.hip.stream.stream_common import gates

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEvent.cc"

NUM_ELEMENTS = 16 * 1024        # upstream: 10,000,000
COUNT = 100
OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady
INVALID_HANDLE = hip.hipError_t.hipErrorInvalidHandle


def _elapsed(a, b):
    """(error, ms) of hipEventElapsedTime(a, b) as the C call returns them."""
    try:
        return OK, hip.hipEventElapsedTime(a, b)
    except hip.HipError as exc:
        return exc.error, None


def _one(mod, g, c_d, c_ptr, c_h, stream, wait_start, sync_mode):
    hip.hipMemset(c_d, 0, 4 * NUM_ELEMENTS)
    c_h[:] = -1
    never_created = None
    never_recorded = hip.hipEventCreate()
    timing_disabled = hip.hipEventCreateWithFlags(hip.hipEventDisableTiming)
    start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    hip.hipEventRecord(timing_disabled, stream)
    hip.hipEventRecord(start, stream)
    g.launch(stream)            # the running time of upstream's long kernel
    launch(mod, "event_add_count_reverse", [c_d, c_ptr, NUM_ELEMENTS, COUNT], stream, n=NUM_ELEMENTS, block=256)
    hip.hipEventRecord(stop, stream)
    if wait_start:
        hip.hipEventSynchronize(start)
    expected_stop = OK
    if sync_mode == "syncNone":
        expected_stop = NOT_READY
    elif sync_mode == "syncStream":
        g.open()
        hip.hipStreamSynchronize(stream)
    else:
        g.open()
        hip.hipEventSynchronize(stop)
    e, t = _elapsed(start, start)
    assert e == OK or (e == NOT_READY and sync_mode == "syncNone"), e
    if e == OK:
        assert t == 0.0
    e, t = _elapsed(stop, stop)
    assert e == expected_stop
    if e == OK:
        assert t == 0.0
    e, t = _elapsed(start, stop)
    assert e == expected_stop
    if expected_stop == OK:
        assert t > 0.0
    e, t = _elapsed(stop, start)
    assert e == expected_stop
    if expected_stop == OK:
        assert t < 0.0
    assert _elapsed(timing_disabled, stop)[0] == INVALID_HANDLE
    assert _elapsed(start, timing_disabled)[0] == INVALID_HANDLE
    assert _elapsed(never_created, stop)[0] == INVALID_HANDLE
    assert _elapsed(start, never_created)[0] == INVALID_HANDLE
    assert _elapsed(never_recorded, stop)[0] == INVALID_HANDLE
    assert hip.hipGetLastError() == INVALID_HANDLE
    g.open()
    for ev in (never_recorded, timing_disabled, start, stop):
        hip.hipEventDestroy(ev)
    hip.hipDeviceSynchronize()
    assert (c_h == COUNT).all()     # C = A + count with A zeroed
    g.flag[0] = 0                   # shut again for the next sub-test


@pytest.mark.parametrize("wait_start", [1, 0])
def test_Unit_hipEvent(mod, wait_start):
    c_d = hip.hipMalloc(4 * NUM_ELEMENTS)
    c_ptr = hip.hipHostMalloc(4 * NUM_ELEMENTS)
    c_h = hip.host_array(c_ptr, np.int32, NUM_ELEMENTS)
    stream = hip.hipStreamCreateWithFlags(0)
    try:
        with gates(mod, 1) as (g,):
            for s, ws, mode in [(None, 0, "syncNone"), (stream, 0, "syncNone"),
                                (None, wait_start, "syncStream"), (stream, wait_start, "syncStream"),
                                (None, wait_start, "syncStopEvent"), (stream, wait_start, "syncStopEvent")]:
                _one(mod, g, c_d, c_ptr, c_h, s, ws, mode)
    finally:
        hip.hipStreamDestroy(stream)
        hip.hipFree(c_d)
        hip.hipHostFree(c_ptr)
