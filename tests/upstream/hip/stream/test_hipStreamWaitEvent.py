"""hipStreamWaitEvent: bad events and flags, an unknown stream, a stream waiting on its own event, and a
stream held back by an event of another stream (upstream's delays are gates)."""
import pytest

from hostside import hip

from .stream_common import STREAM_KINDS, drop_stream, gates, make_stream

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamWaitEvent.cc"

OK = hip.hipError_t.hipSuccess
NOT_READY = hip.hipError_t.hipErrorNotReady


@pytest.mark.parametrize("section", ["invalid_event", "invalid_flags"])
@pytest.mark.parametrize("kind", STREAM_KINDS)
def test_Unit_hipStreamWaitEvent_Negative(mod, kind, section):
    stream = make_stream(kind)
    event = hip.hipEventCreate()
    assert (stream is not None) != (kind == "null")
    assert event is not None
    if section == "invalid_event":
        with pytest.raises(hip.HipError) as ei:
            hip.hipStreamWaitEvent(stream, None, 0)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle
    else:
        flag = 0xFFFFFFFF       # ~0u
        with pytest.raises(hip.HipError) as ei:
            hip.hipStreamWaitEvent(stream, event, flag)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    hip.hipEventDestroy(event)
    drop_stream(kind, stream)


def test_Unit_hipStreamWaitEvent_UninitializedStream_Negative(mod):
    event = hip.hipEventCreate()
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamWaitEvent(0xFFFF, event, 0)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidHandle
    hip.hipEventDestroy(event)


def test_Unit_hipStreamWaitEvent_Default(mod):
    s = hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    assert s is not None and ev is not None
    with gates(mod, 1) as (g,):
        g.launch(s)
        hip.hipEventRecord(ev, s)
        assert hip.hipEventQuery(ev) == NOT_READY       # the stream is still busy
        hip.hipStreamWaitEvent(s, ev, 0)
        g.open()
        hip.hipStreamSynchronize(s)
    hip.hipStreamDestroy(s)
    hip.hipEventDestroy(ev)


def test_Unit_hipStreamWaitEvent_DifferentStreams(mod):
    blocked_a, blocked_on_a, unblocking = hip.hipStreamCreate(), hip.hipStreamCreate(), hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    with gates(mod, 2) as (ga, gb):      # upstream: 3000 ms on stream A, then 2000 ms on the waiting stream
        ga.launch(blocked_a)
        hip.hipEventRecord(ev, blocked_a)
        assert hip.hipEventQuery(ev) == NOT_READY
        hip.hipStreamWaitEvent(blocked_on_a, ev, 0)
        gb.launch(blocked_on_a)
        hip.hipStreamSynchronize(unblocking)
        ga.open()
        hip.hipStreamSynchronize(blocked_a)
        assert hip.hipStreamQuery(blocked_on_a) == NOT_READY   # it waited for the event, then its own delay
        gb.open()
        hip.hipStreamSynchronize(blocked_on_a)
        assert hip.hipStreamQuery(blocked_a) == OK
        assert hip.hipStreamQuery(blocked_on_a) == OK
    for s in (blocked_a, blocked_on_a, unblocking):
        hip.hipStreamDestroy(s)
    hip.hipEventDestroy(ev)
