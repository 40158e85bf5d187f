"""Streams and events: create, destroy, synchronize, query, record and wait.

Streams are ``hipStream_t`` objects; ``None`` or 0 is the current device's null stream. An event is
a signal: a record is a marker packet that takes it from 1 to 0, a wait a BARRIER_AND on it.

Every packet that names an event's signal is listed in the event's ``waiters`` (the barriers of
hipStreamWaitEvent and of graph event-wait nodes, and the SDMA command that follows a record on its
stream: ``VirtualGPU.marker(waiters=)``); a re-record moves the event to a fresh signal while one of
them has not been passed (``_event_rearm``), and a destroyed event's signals are released only once
nobody can wait on them (``_order.sweep_buried``). Each event has a lock: record, wait, synchronize,
query and destroy of one event from several threads take turns (lock order: event, then stream).

Streams take commands through ``_get_stream`` (the legacy null stream's ordering: ``_context``);
queries and synchronisations through ``_peek_stream``. ``hipStreamSynchronize(0)`` and
``hipStreamQuery(0)`` cover the device's blocking streams too, as the legacy null stream does.

Host functions (``hipLaunchHostFunc``, ``hipStreamAddCallback``) are a marker whose own signal the
runtime's async-handler thread watches (it then runs the function) followed by a barrier on a host
signal that the handler takes to 0 once the function returned: later work of the stream waits for it.
"""
from __future__ import annotations

import threading
import warnings

from ..hsa import HSA_SIGNAL_CONDITION_EQ, HsaError
from ._capture_rules import capture_wait_event, check_unsafe
from ._context import (_blocking_streams, _current_device, _forget_stream, _get_stream, _new_stream, _peek_stream,
                       _st, _synchronize_all, hipStream_t, hipStreamDefault, hipStreamNonBlocking, hipStreamPerThread)
from ._device import _properties
from ._errors import _api, _is_int, _raise, hipError_t
from ._graph_types import _T, HostSpec, hipEventWaitExternal
from ._order import add_waiter as _add_waiter
from ._order import bury, fresh_signal, has_buried, reusable, sweep_buried

__all__ = ["hipStreamCreate", "hipStreamCreateWithFlags", "hipStreamCreateWithPriority",
           "hipDeviceGetStreamPriorityRange", "hipStreamGetPriority", "hipStreamGetFlags", "hipStreamGetDevice",
           "hipStreamDestroy", "hipStreamSynchronize", "hipStreamQuery", "hipStreamWaitEvent",
           "hipLaunchHostFunc", "hipStreamAddCallback", "hipExtStreamCreateWithCUMask", "hipExtStreamGetCUMask",
           "hipEvent_t", "hipEventCreate", "hipEventCreateWithFlags", "hipEventDefault", "hipEventBlockingSync",
           "hipEventDisableTiming", "hipEventInterprocess", "hipEventDisableSystemFence", "hipEventReleaseToDevice",
           "hipEventReleaseToSystem", "hipEventRecord", "hipEventSynchronize",
           "hipEventQuery", "hipEventElapsedTime", "hipEventDestroy"]

#: hipDeviceGetStreamPriorityRange: (least, greatest) as ROCm reports them; a lower number is a
#: higher priority, and a priority outside the range is clamped into it (as HIP does)
PRIORITY_LEAST, PRIORITY_GREATEST = 0, -1


# -- streams ---------------------------------------------------------------------------------------
def _check_flags(flags) -> int:
    if type(flags) is not int or flags not in (hipStreamDefault, hipStreamNonBlocking):
        _raise(hipError_t.hipErrorInvalidValue,
               f"flags must be hipStreamDefault (0) or hipStreamNonBlocking (1), not {flags!r}")
    return flags


@_api
def hipStreamCreate() -> hipStream_t:
    """A blocking stream of the current device (ordered with the legacy null stream)."""
    return _new_stream(_current_device(), hipStreamDefault, 0)


@_api
def hipStreamCreateWithFlags(flags: int = hipStreamDefault) -> hipStream_t:
    """``hipStreamNonBlocking``: a stream not ordered with the legacy null stream."""
    return _new_stream(_current_device(), _check_flags(flags), 0)


@_api
def hipStreamCreateWithPriority(flags: int = hipStreamDefault, priority: int = 0) -> hipStream_t:
    """As hipStreamCreateWithFlags, with a priority (clamped into hipDeviceGetStreamPriorityRange).
    hdemu records it; the command processor serves its queues round-robin whatever their priority."""
    flags = _check_flags(flags)
    if type(priority) is not int:
        _raise(hipError_t.hipErrorInvalidValue, f"priority must be an int, not {priority!r}")
    priority = min(max(priority, PRIORITY_GREATEST), PRIORITY_LEAST)
    return _new_stream(_current_device(), flags, priority)


@_api
def hipDeviceGetStreamPriorityRange() -> tuple[int, int]:
    """(leastPriority, greatestPriority)."""
    _st()
    return PRIORITY_LEAST, PRIORITY_GREATEST


@_api
def hipStreamGetPriority(stream=None) -> int:
    return _peek_stream(stream).priority


@_api
def hipStreamGetFlags(stream) -> int:
    if stream is None or (type(stream) is int and stream == 0):
        _raise(hipError_t.hipErrorInvalidValue, "the null stream has no flags (pass a created stream)")
    return _peek_stream(stream).flags


@_api
def hipStreamGetDevice(stream=None) -> int:
    return _peek_stream(stream).device


# -- CU masks (hipamd/src/hip_stream.cpp) ----------------------------------------------------------------
def _cu_count(device: int) -> int:
    return _properties(_st().rt, device)["multiProcessorCount"]


def _default_cu_mask(cus: int) -> list[int]:
    """Every CU of the device enabled: bit i of word i // 32 for each of its ``cus`` CUs."""
    return [(1 << min(32, cus - 32 * w)) - 1 for w in range(-(-cus // 32))]


@_api
def hipExtStreamCreateWithCUMask(cuMaskSize: int, cuMask) -> hipStream_t:
    """A blocking stream of the current device (normal priority) that may run only on the CUs whose
    bits ``cuMask`` sets (``cuMaskSize`` 32-bit words, bit i of word w for CU 32*w + i). As in CLR,
    ``cuMaskSize`` 0 or no mask is hipErrorInvalidValue and the mask is kept as given (an all-zero
    mask or bits past the device's CUs are accepted: hipExtStreamGetCUMask reports what applies).
    hdemu records it; the command processor runs a dispatch on whichever engine it runs on.
    A ``cuMask`` shorter than ``cuMaskSize`` or a word outside uint32 is hipErrorInvalidValue too."""
    if not _is_int(cuMaskSize) or cuMaskSize <= 0 or cuMaskSize >= 2**32:
        _raise(hipError_t.hipErrorInvalidValue, f"cuMaskSize must be a positive uint32, not {cuMaskSize!r}")
    if cuMask is None:
        _raise(hipError_t.hipErrorInvalidValue, "cuMask is null")
    try:
        words = [cuMask[i] for i in range(int(cuMaskSize))]
    except (TypeError, IndexError, KeyError) as exc:
        _raise(hipError_t.hipErrorInvalidValue, f"cuMask must hold cuMaskSize ({cuMaskSize}) uint32 words", exc)
    if not all(_is_int(w) and 0 <= w < 2**32 for w in words):
        _raise(hipError_t.hipErrorInvalidValue, f"cuMask words must be uint32, not {words!r}")
    s = _new_stream(_current_device(), hipStreamDefault, 0)
    s.cu_mask = tuple(int(w) for w in words)
    return s


@_api
def hipExtStreamGetCUMask(stream, cuMaskSize: int) -> list[int]:
    """The CU mask ``stream`` runs with, as ``cuMaskSize`` 32-bit words (CLR's hipExtStreamGetCUMask:
    the words past the mask are left as the caller had them; here they are 0). ``cuMaskSize`` must
    cover the current device's multiProcessorCount (hipErrorInvalidValue). The null stream, a stream
    created without a mask, or one whose mask enables none of the device's CUs, report every CU."""
    if not _is_int(cuMaskSize) or cuMaskSize < 0 or cuMaskSize >= 2**32:
        _raise(hipError_t.hipErrorInvalidValue, f"cuMaskSize must be a uint32, not {cuMaskSize!r}")
    cus = _cu_count(_current_device())
    default = _default_cu_mask(cus)
    if cuMaskSize < len(default):
        _raise(hipError_t.hipErrorInvalidValue,
               f"cuMaskSize {cuMaskSize} is too small for {cus} CUs: it must be at least {len(default)}")
    mask = default
    if stream is not None and stream is not hipStreamPerThread and not (type(stream) is int and stream == 0):
        own = getattr(_peek_stream(stream), "cu_mask", ())
        anded = [a & b for a, b in zip(own, default)]
        if any(anded):
            mask = anded
    return mask + [0] * (int(cuMaskSize) - len(mask))


@_api
def hipStreamDestroy(stream: hipStream_t) -> None:
    if stream is hipStreamPerThread:        # CLR: hipErrorInvalidResourceHandle, like hipStreamLegacy
        _raise(hipError_t.hipErrorInvalidHandle, "hipStreamPerThread cannot be destroyed")
    s = _peek_stream(stream)
    if s.null or stream is None or stream == 0:
        _raise(hipError_t.hipErrorInvalidHandle, "the null stream cannot be destroyed")
    st = _st()
    with st.lock:
        if s.destroyed:             # another thread destroyed it meanwhile
            _raise(hipError_t.hipErrorContextIsDestroyed, f"stream {s!r} was destroyed")
        s.destroyed = True
        _forget_stream(s)
    if s.capture is not None:
        s.capture.stream_destroyed(s)
    s.vgpu.destroy()
    s.point.release()


@_api
def hipStreamSynchronize(stream=None) -> None:
    """Wait for the stream's work; on the legacy null stream, for the device's blocking streams too
    (a failed one's error is raised once the others' work is done)."""
    s = _peek_stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamSynchronize")
    check_unsafe("hipStreamSynchronize")
    if s.null:
        _synchronize_all([b.vgpu for b in _blocking_streams(s.device) if b.capture is None] + [s.vgpu])
    else:
        s.vgpu.synchronize()


@_api
def hipStreamQuery(stream=None) -> hipError_t:
    """hipSuccess once the stream's work is done (the legacy null stream: and the device's blocking
    streams'), else hipErrorNotReady."""
    s = _peek_stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamQuery")
    if not s.vgpu.query():
        return hipError_t.hipErrorNotReady
    if s.null:
        for b in _blocking_streams(s.device):
            if b.capture is None and not b.vgpu.query():
                return hipError_t.hipErrorNotReady
    return hipError_t.hipSuccess


def _host_call(stream, run, api: str, node=None) -> None:
    """Enqueue ``run(status)`` on the stream: it runs once the stream's earlier work is done, and the
    stream's later work waits for it (see the module docstring). During capture ``node`` (fn,
    userData) becomes a host node; without one the call is not capturable."""
    s = _get_stream(stream)
    if s.capture is not None:
        if node is None:
            _raise(hipError_t.hipErrorStreamCaptureUnsupported, f"{api} during stream capture is not supported")
        s.capture._live()
        s.capture._append(s, _T.hipGraphNodeTypeHost, HostSpec(*node))
        return
    rt = _st().rt
    if has_buried():
        sweep_buried()
    v = s.vgpu
    done = rt.signals.create(0, kind=2)     # the marker's: 0 once the earlier work is done
    host = rt.signals.create(1, kind=2)     # the handler's: 0 once run returned
    waiters: list = []
    with v.lock:
        v.marker(signal=done, waiters=[])
        v.marker([host.handle])
        _add_waiter(waiters, v.queue, v.queue.next_id - 1)

    def handler(_value, _arg):
        try:
            run(hipError_t.hipSuccess)
        except Exception as exc:  # noqa: BLE001 - a host function's failure must not hang the stream
            warnings.warn(f"{api} function raised {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=1)
        finally:
            host.subtract(1)
            bury([(done, [], v)])       # released by a later sweep, never inside its own handler
        return False

    rt.async_handler.register(done, HSA_SIGNAL_CONDITION_EQ, 0, handler)
    sweep_buried([(host, waiters, v)])


@_api
def hipLaunchHostFunc(stream, fn, userData=None) -> None:
    """Run ``fn(userData)`` on a runtime thread once the stream's earlier work is done; the stream's
    later work waits for it to return. ``fn`` must not call HIP functions that wait (as in HIP).
    During stream capture it becomes a host node."""
    if not callable(fn):
        _raise(hipError_t.hipErrorInvalidValue, f"fn must be callable, not {fn!r}")
    _host_call(stream, lambda _status: fn(userData), "hipLaunchHostFunc", (fn, userData))


@_api
def hipStreamAddCallback(stream, callback, userData=None, flags: int = 0) -> None:
    """Run ``callback(stream, status, userData)`` once the stream's earlier work is done; the stream's
    later work waits for it to return. ``flags`` must be 0."""
    if not callable(callback):
        _raise(hipError_t.hipErrorInvalidValue, f"callback must be callable, not {callback!r}")
    if flags != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0, not {flags!r}")
    _host_call(stream, lambda status: callback(stream, status, userData), "hipStreamAddCallback")


@_api
def hipStreamWaitEvent(stream, event, flags: int = 0) -> None:
    """Later work on ``stream`` waits for the event's last record (a BARRIER_AND on the event's
    signal). During capture: joins the capture (fork) or adds a dependency (``capture_wait_event``)."""
    if type(stream) is int and stream not in (0, 1, 2):
        _raise(hipError_t.hipErrorInvalidHandle, f"{stream:#x} is not the handle of a live stream")
    ev = _event(event)
    s = _get_stream(stream)
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
            v.depend_on(ev.signal, ev.stream)


# -- events ----------------------------------------------------------------------------------------
hipEventDefault = 0x0
hipEventBlockingSync = 0x1
hipEventDisableTiming = 0x2
hipEventInterprocess = 0x4
hipEventDisableSystemFence = 0x20000000
hipEventReleaseToDevice = 0x40000000
hipEventReleaseToSystem = 0x80000000
_EVENT_FLAGS = (hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess | hipEventDisableSystemFence
                | hipEventReleaseToDevice | hipEventReleaseToSystem)


class hipEvent_t:
    def __init__(self, signal, flags: int = 0, device: int = 0):
        self.flags = flags
        self.device = device        # the device current when it was created
        self.signal = signal
        self.recorded = False
        self.stream = None
        self.destroyed = False
        self.capture = None         # the capture it was last recorded in (graphs), while it is open
        self.capture_nodes = ()     # that capture's nodes the record stands for
        self.waiters = []           # (queue, packet id) of packets waiting on this record's signal
        self.retired = []           # (signal, waiters, stream) of earlier records still waited on
        self.lock = threading.Lock()    # record, wait, sync, query, destroy: one at a time


def _event_rearm(ev: hipEvent_t, v=None) -> None:
    """Called (under ``ev.lock``) before a new record on stream ``v`` stores 1 into the event's signal.
    The signal is re-armed in place only if nobody can still wait on it (``reusable``; the record
    stream being ``v`` itself is fine: the new marker follows the old one on its queue). Otherwise the
    previous record has not completed (its marker would take the new value to 0 early, and the new
    marker to -1), or a packet that waits on it has not been passed yet (a barrier of
    hipStreamWaitEvent, the stream's next SDMA command: it would wait for the new record instead, and
    deadlock when that record sits behind it), and the event moves to a fresh signal (one of its
    retired ones, once nobody can still use it)."""
    old_v = None if ev.stream is v else ev.stream
    if reusable(ev.signal, ev.waiters, old_v):
        ev.waiters[:] = []
        return
    fresh = fresh_signal(ev.retired, _st().rt)
    ev.retired.append((ev.signal, ev.waiters, ev.stream))
    ev.signal = fresh
    ev.waiters = []


@_api
def hipEventCreate() -> hipEvent_t:
    return hipEventCreateWithFlags(hipEventDefault)


@_api
def hipEventCreateWithFlags(flags: int = hipEventDefault) -> hipEvent_t:
    """``flags``: hipEventDefault or an OR of hipEventBlockingSync (a synchronize blocks instead of
    spinning: hdemu's waits always block after a short spin), hipEventDisableTiming (no timestamps:
    hipEventElapsedTime refuses it), hipEventInterprocess (only with hipEventDisableTiming),
    hipEventDisableSystemFence and one of hipEventReleaseToDevice / hipEventReleaseToSystem."""
    if type(flags) is not int or flags < 0 or flags & ~_EVENT_FLAGS:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be an OR of the hipEvent* flags, not {flags!r}")
    if flags & hipEventInterprocess and not flags & hipEventDisableTiming:
        _raise(hipError_t.hipErrorInvalidValue, "hipEventInterprocess needs hipEventDisableTiming")
    if flags & hipEventReleaseToDevice and flags & hipEventReleaseToSystem:
        _raise(hipError_t.hipErrorInvalidValue, "hipEventReleaseToDevice and hipEventReleaseToSystem exclude each other")
    if has_buried():
        sweep_buried()
    return hipEvent_t(_st().rt.signals.create(0, kind=2), flags, _current_device())


def _event(ev) -> hipEvent_t:
    if type(ev) is not hipEvent_t:
        _raise(hipError_t.hipErrorInvalidResourceHandle, f"event must be a hipEvent_t, not {ev!r}")
    if ev.destroyed:
        _raise(hipError_t.hipErrorContextIsDestroyed, "the event was destroyed")
    if ev.signal.rt.closed:     # a record would name a signal of the runtime before it: a queue error
        _raise(hipError_t.hipErrorContextIsDestroyed, "the event was created before hipDeviceReset")
    return ev


@_api
def hipEventRecord(event: hipEvent_t, stream=None) -> None:
    ev = _event(event)
    s = _get_stream(stream)
    if ev.device != s.device:
        _raise(hipError_t.hipErrorInvalidHandle,
               f"the event belongs to device {ev.device}, the stream to device {s.device}")
    if s.capture is not None:
        return s.capture.add_event_record(s, ev)
    v = s.vgpu
    with ev.lock, v.lock:
        _event_rearm(ev, v)     # a record still in flight (on any stream) moves the event to a fresh signal
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
    if (a.flags | b.flags) & hipEventDisableTiming:
        _raise(hipError_t.hipErrorInvalidHandle, "an event created with hipEventDisableTiming has no timestamps")
    if a.device != b.device:
        _raise(hipError_t.hipErrorInvalidHandle,
               f"the events belong to different devices ({a.device} and {b.device})")
    if not a.recorded or not b.recorded:
        _raise(hipError_t.hipErrorInvalidHandle, "both events must have been recorded")
    if a.capture is not None or b.capture is not None:
        _raise(hipError_t.hipErrorInvalidHandle, "an event was recorded in a capturing stream")
    if a.signal.load() != 0 or b.signal.load() != 0:
        _raise(hipError_t.hipErrorNotReady, "an event has not completed yet")
    return (b.signal.end_ts - a.signal.end_ts) / 1e6


@_api
def hipEventDestroy(event: hipEvent_t) -> None:
    """Returns at once (as HIP does: a record still in flight completes on its own); the event's
    signals are released once nobody can wait on them (until then they stay claimed:
    ``_order.sweep_buried``). An event created before hipDeviceReset can still be destroyed."""
    if type(event) is not hipEvent_t:
        _raise(hipError_t.hipErrorInvalidResourceHandle, f"event must be a hipEvent_t, not {event!r}")
    ev = event
    with ev.lock:
        if ev.destroyed:
            _raise(hipError_t.hipErrorContextIsDestroyed, "the event was destroyed")
        ev.destroyed = True
        dead = [(ev.signal, ev.waiters, ev.stream)] + ev.retired
        ev.retired = []
    sweep_buried(dead)
