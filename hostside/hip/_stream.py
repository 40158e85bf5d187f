"""Streams and events: create, destroy, synchronize, query, record and wait.

Streams are ``hipStream_t`` objects; ``None`` or 0 is the current device's null stream. An event is
a signal: a record is a marker packet that takes it from 1 to 0, a wait a BARRIER_AND on it.

Every packet that names an event's signal is listed in the event's ``waiters`` (the barriers of
hipStreamWaitEvent and of graph event-wait nodes, and the SDMA command that follows a record on its
stream: ``VirtualGPU.marker(waiters=)``); a re-record moves the event to a fresh signal while one of
them has not been passed (``_event_rearm``), and a destroyed event's signals are released only once
nobody can wait on them (``_sweep_buried``). Each event has a lock: record, wait, synchronize, query
and destroy of one event from several threads take turns (lock order: event, then stream).
"""
from __future__ import annotations

import threading

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
    st = _st()
    with st.lock:
        if s.destroyed:             # another thread destroyed it meanwhile
            _raise(hipError_t.hipErrorInvalidHandle, f"stream {s!r} was destroyed")
        s.destroyed = True
        st.streams.discard(s)
    if s.capture is not None:
        s.capture.stream_destroyed(s)
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
    v = s.vgpu
    with ev.lock:               # the record, its signal and its waiter list stay together
        if not ev.recorded:
            return
        if ev.stream is not None and ev.stream is not v:
            ev.stream.flush()
        with v.lock:
            v.marker([ev.signal.handle])
            _add_waiter(ev.waiters, v.queue, v.queue.next_id - 1)


# -- events ----------------------------------------------------------------------------------------
class hipEvent_t:
    def __init__(self, signal):
        self.signal = signal
        self.recorded = False
        self.stream = None
        self.destroyed = False
        self.capture = None         # the capture it was last recorded in (graphs), while it is open
        self.capture_nodes = ()     # that capture's nodes the record stands for
        self.waiters = []           # (queue, packet id) of packets waiting on this record's signal
        self.retired = []           # (signal, waiters, stream) of earlier records still waited on
        self.lock = threading.Lock()    # record, wait, sync, query, destroy: one at a time


def _add_waiter(ws: list, q, idx: int) -> None:
    """Note that packet ``idx`` of ``q`` waits on the signal ``ws`` belongs to (pruned in place: the
    command layer may hold this very list as its stream's ``last_waiters``)."""
    if len(ws) > 32:
        ws[:] = [(wq, i) for wq, i in ws if not wq.destroyed and wq.load_read_index() <= i]
    ws.append((q, idx))


def _pending(ws) -> bool:
    """A packet listed in ``ws`` has not been passed by the device yet."""
    return any(not q.destroyed and q.load_read_index() <= i for q, i in ws)


def _reusable(sig, ws, v) -> bool:
    """Nobody can wait on ``sig`` any more: it is 0, every packet that named it has been passed, and
    it is not the last signal of ``v`` (the stream it was recorded on: its next SDMA command would
    name it)."""
    return (sig.load() == 0 and not _pending(ws)
            and (v is None or v.queue.destroyed or v.last_signal is not sig))


def _event_rearm(ev: hipEvent_t, v=None) -> None:
    """Called (under ``ev.lock``) before a new record on stream ``v`` stores 1 into the event's signal.
    The signal is re-armed in place only if nobody can still wait on it (``_reusable``; the record
    stream being ``v`` itself is fine: the new marker follows the old one on its queue). Otherwise the
    previous record has not completed (its marker would take the new value to 0 early, and the new
    marker to -1), or a packet that waits on it has not been passed yet (a barrier of
    hipStreamWaitEvent, the stream's next SDMA command: it would wait for the new record instead, and
    deadlock when that record sits behind it), and the event moves to a fresh signal (one of its
    retired ones, once nobody can still use it)."""
    old_v = None if ev.stream is v else ev.stream
    if _reusable(ev.signal, ev.waiters, old_v):
        ev.waiters[:] = []
        return
    fresh = None
    for j, (sig, ws, rv) in enumerate(ev.retired):
        if _reusable(sig, ws, rv):
            fresh = ev.retired.pop(j)[0]
            break
    ev.retired.append((ev.signal, ev.waiters, ev.stream))
    ev.signal = fresh if fresh is not None else _st().rt.signals.create(0, kind=2)
    ev.waiters = []


#: Event signals of destroyed events that a packet or a stream may still name (sig, waiters, stream):
#: released by ``_sweep_buried`` once ``_reusable``.
_buried: list = []
_buried_lock = threading.Lock()


def _sweep_buried(more=()) -> None:
    with _buried_lock:
        _buried.extend(more)
        keep = []
        for sig, ws, v in _buried:
            if sig.rt.closed or sig.destroyed:
                continue
            if _reusable(sig, ws, v):
                sig.destroy()
            else:
                keep.append((sig, ws, v))
        _buried[:] = keep


@_api
def hipEventCreate() -> hipEvent_t:
    if _buried:
        _sweep_buried()
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
    with ev.lock, v.lock:
        if ev.recorded and ev.stream is not v and ev.signal.load() != 0:
            ev.stream.sync_signal(ev.signal)
        _event_rearm(ev, v)
        v.marker(signal=ev.signal, waiters=ev.waiters)
        ev.recorded = True
        ev.stream = v
        ev.capture, ev.capture_nodes = None, ()


def _recorded(ev: hipEvent_t):
    """(stream, signal) of the event's last record, or None if it was never recorded."""
    with ev.lock:
        if ev.capture is not None:
            _raise(hipError_t.hipErrorCapturedEvent, "the event was last recorded in a capturing stream")
        return (ev.stream, ev.signal) if ev.recorded else None


@_api
def hipEventSynchronize(event: hipEvent_t) -> None:
    r = _recorded(_event(event))
    if r is not None:
        r[0].sync_signal(r[1])


@_api
def hipEventQuery(event: hipEvent_t) -> hipError_t:
    r = _recorded(_event(event))
    if r is None:
        return hipError_t.hipSuccess
    v, sig = r
    v.flush()
    if sig.load() == 0:
        return hipError_t.hipSuccess
    v.check()
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
    """Waits for the event's last record; its signals are released once nobody can wait on them
    (until then they stay claimed: ``_sweep_buried``)."""
    ev = _event(event)
    with ev.lock:
        if ev.destroyed:
            _raise(hipError_t.hipErrorInvalidHandle, "the event was destroyed")
        if ev.recorded and ev.signal.load() != 0:
            ev.stream.sync_signal(ev.signal)
        ev.destroyed = True
        dead = [(ev.signal, ev.waiters, ev.stream)] + ev.retired
        ev.retired = []
    _sweep_buried(dead)
