"""Streams and events: create, destroy, synchronize, query, record and wait.

Streams are ``hipStream_t`` objects; ``None`` or 0 is the current device's null stream. An event is
a signal: a record is a marker packet that takes it from 1 to 0, a wait a BARRIER_AND on it.
"""
from __future__ import annotations

from ..clr import VirtualGPU
from ._capture_rules import capture_wait_event
from ._context import _current_device, _get_stream, _st, hipStream_t
from ._errors import _api, _raise, hipError_t
from ._graph_types import hipEventWaitExternal

__all__ = ["hipStreamCreate", "hipStreamDestroy", "hipStreamSynchronize", "hipStreamQuery", "hipStreamWaitEvent",
           "hipEvent_t", "hipEventCreate", "hipEventRecord", "hipEventSynchronize", "hipEventQuery",
           "hipEventElapsedTime", "hipEventDestroy"]


# -- streams ---------------------------------------------------------------------------------------
@_api
def hipStreamCreate() -> hipStream_t:
    st = _st()
    dev = _current_device()
    s = hipStream_t(dev, VirtualGPU(st.rt, dev))
    with st.lock:
        st.streams.add(s)
    return s


@_api
def hipStreamDestroy(stream: hipStream_t) -> None:
    s = _get_stream(stream)
    if s.null:
        _raise(hipError_t.hipErrorInvalidHandle, "the null stream cannot be destroyed")
    if s.capture is not None:
        s.capture.stream_destroyed(s)
    s.destroyed = True
    st = _st()
    with st.lock:
        st.streams.discard(s)
    s.vgpu.destroy()


@_api
def hipStreamSynchronize(stream=None) -> None:
    s = _get_stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamSynchronize")
    s.vgpu.synchronize()


@_api
def hipStreamQuery(stream=None) -> hipError_t:
    s = _get_stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamQuery")
    return hipError_t.hipSuccess if s.vgpu.query() else hipError_t.hipErrorNotReady


@_api
def hipStreamWaitEvent(stream, event, flags: int = 0) -> None:
    """Later work on ``stream`` waits for the event's last record (a BARRIER_AND on the event's
    signal). During capture: joins the capture (fork) or adds a dependency (``capture_wait_event``)."""
    s = _get_stream(stream)
    ev = _event(event)
    if flags not in (0, hipEventWaitExternal):
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0 or hipEventWaitExternal, not {flags!r}")
    if s.capture is not None or ev.capture is not None:
        return capture_wait_event(s, ev, flags)
    if not ev.recorded:
        return
    if ev.stream is not None and ev.stream is not s.vgpu:
        ev.stream.flush()
    v = s.vgpu
    with v.lock:
        v.marker([ev.signal.handle])
        if len(ev.waiters) > 32:
            ev.waiters = [(q, i) for q, i in ev.waiters if not q.destroyed and q.load_read_index() <= i]
        ev.waiters.append((v.queue, v.queue.load_write_index() - 1))


# -- events ----------------------------------------------------------------------------------------
class hipEvent_t:
    def __init__(self, signal):
        self.signal = signal
        self.recorded = False
        self.stream = None
        self.destroyed = False
        self.capture = None         # the capture it was last recorded in (graphs), while it is open
        self.capture_nodes = ()     # that capture's nodes the record stands for
        self.waiters = []           # (queue, packet id) of barriers waiting on this record's signal
        self.retired = []           # (signal, waiters, stream) of earlier records still waited on


def _event_rearm(ev: hipEvent_t) -> None:
    """Called before a new record stores 1 into the event's signal. If the previous record has
    not completed (its marker would take the new value to 0 early, and the new marker to -1), or a
    barrier that hipStreamWaitEvent placed for it has not been passed yet (it would wait for the new
    record instead, and deadlock when that record sits behind it), the event moves to a fresh signal
    (one of its retired ones, once nobody can still use it)."""
    def pending(ws):
        return any(not q.destroyed and q.load_read_index() <= i for q, i in ws)
    if ev.signal.load() == 0 and not (ev.waiters and pending(ev.waiters)):
        ev.waiters = []
        return
    fresh = None
    for j, (sig, ws, v) in enumerate(ev.retired):
        if sig.load() == 0 and not pending(ws) and (v is None or v.last_signal is not sig):
            fresh = ev.retired.pop(j)[0]
            break
    ev.retired.append((ev.signal, ev.waiters, ev.stream))
    ev.signal = fresh if fresh is not None else _st().rt.signals.create(0, kind=2)
    ev.waiters = []


@_api
def hipEventCreate() -> hipEvent_t:
    return hipEvent_t(_st().rt.signals.create(0, kind=2))


def _event(ev) -> hipEvent_t:
    if not isinstance(ev, hipEvent_t) or ev.destroyed:
        _raise(hipError_t.hipErrorInvalidHandle, f"event must be a live hipEvent_t, not {ev!r}")
    return ev


@_api
def hipEventRecord(event: hipEvent_t, stream=None) -> None:
    ev = _event(event)
    s = _get_stream(stream)
    if s.capture is not None:
        return s.capture.add_event_record(s, ev)
    v = s.vgpu
    with v.lock:
        if ev.recorded and ev.stream is not v and ev.signal.load() != 0:
            ev.stream.sync_signal(ev.signal)
        _event_rearm(ev)
        v.marker(signal=ev.signal)
    ev.recorded = True
    ev.stream = v
    ev.capture, ev.capture_nodes = None, ()


@_api
def hipEventSynchronize(event: hipEvent_t) -> None:
    ev = _event(event)
    if ev.capture is not None:
        _raise(hipError_t.hipErrorCapturedEvent, "the event was last recorded in a capturing stream")
    if not ev.recorded:
        return
    ev.stream.sync_signal(ev.signal)


@_api
def hipEventQuery(event: hipEvent_t) -> hipError_t:
    ev = _event(event)
    if ev.capture is not None:
        _raise(hipError_t.hipErrorCapturedEvent, "the event was last recorded in a capturing stream")
    if not ev.recorded:
        return hipError_t.hipSuccess
    ev.stream.flush()
    if ev.signal.load() == 0:
        return hipError_t.hipSuccess
    ev.stream.check()
    return hipError_t.hipErrorNotReady


@_api
def hipEventElapsedTime(start: hipEvent_t, stop: hipEvent_t) -> float:
    a, b = _event(start), _event(stop)
    if not a.recorded or not b.recorded:
        _raise(hipError_t.hipErrorInvalidHandle, "both events must have been recorded")
    if a.signal.load() != 0 or b.signal.load() != 0:
        _raise(hipError_t.hipErrorNotReady, "an event has not completed yet")
    return (b.signal.end_ts - a.signal.end_ts) / 1e6


@_api
def hipEventDestroy(event: hipEvent_t) -> None:
    ev = _event(event)
    if ev.recorded and ev.signal.load() != 0:
        ev.stream.sync_signal(ev.signal)
    ev.destroyed = True
    ev.signal.destroy()
    for sig, ws, _v in ev.retired:      # a signal a barrier may still read stays claimed (never reused)
        if not any(not q.destroyed and q.load_read_index() <= i for q, i in ws):
            sig.destroy()
    ev.retired = []
