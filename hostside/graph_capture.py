"""Stream capture: the work issued on capturing streams becomes graph nodes (public face: hostside.hip).

hip.py's launch, copy, memset and event-record paths call the stream's ``capture`` object
(``_Capture``) instead of submitting. Each stream in the capture keeps its current leaf set; a new
node depends on it. An event recorded during capture remembers the leaf set of its stream;
``hipStreamWaitEvent(other, event)`` makes ``other`` join the capture (fork) or merges the set into
its leaves (join). ``hipStreamEndCapture`` refuses a capture whose forked work was not joined back.
Calls that would synchronize with captured work fail with ``hipErrorStreamCaptureUnsupported`` and
invalidate the capture; ``check_unsafe`` applies the capture modes to potentially unsafe calls.
"""
from __future__ import annotations

import itertools
import threading

from .graph import (_T, _api, _copy_spec, _err, _fill_spec, _H, _spec_from_launch, hipEventRecordDefault,
                    hipEventRecordExternal,
                    hipEventWaitExternal, hipGraph_t, hipStreamCaptureMode, hipStreamCaptureModeGlobal,
                    hipStreamCaptureModeRelaxed, hipStreamCaptureStatus, hipStreamCaptureStatusActive,
                    hipStreamCaptureStatusInvalidated, hipStreamCaptureStatusNone)

# -- stream capture ------------------------------------------------------------------------------------
_captures: list = []            # active or invalidated captures not yet ended
_captures_lock = threading.Lock()
_capture_ids = itertools.count(1)
_tls = threading.local()


class _Capture:
    """One capture sequence: the graph being built and, per joined stream, its current leaves."""

    def __init__(self, graph, mode, origin):
        self.graph, self.mode, self.origin = graph, hipStreamCaptureMode(mode), origin
        self.thread = threading.get_ident()
        self.status = hipStreamCaptureStatusActive
        self.leaves = {origin: []}        # stream -> nodes the next operation depends on
        self.events = []
        self.id = next(_capture_ids)
        self.why = ""

    # -- hooks called by hostside.hip ------------------------------------------------------------
    def _live(self):
        if self.status != hipStreamCaptureStatusActive:
            _err("hipErrorStreamCaptureInvalidated", f"stream capture {self.id} was invalidated ({self.why})")

    def _append(self, s, ntype, spec):
        self._live()
        n = self.graph._add(ntype, self.leaves[s], spec)
        self.leaves[s] = [n]

    def add_kernel(self, s, f, params, grid, block, shared, dims):
        self._live()
        self._append(s, _T.hipGraphNodeTypeKernel, _spec_from_launch(f, params, grid, block, int(shared), dims))

    def add_memcpy(self, s, dst, src, size, dk, sk):
        self._live()
        self._append(s, _T.hipGraphNodeTypeMemcpy, _copy_spec(dst, src, size, 4))

    def add_memset(self, s, dst, value, size):
        self._live()
        self._append(s, _T.hipGraphNodeTypeMemset, _fill_spec(dst, value, size, 1))

    def add_event_record(self, s, ev, external=False):
        self._live()
        if external:
            self._append(s, _T.hipGraphNodeTypeEventRecord, ev)
        ev.capture = self
        ev.capture_nodes = tuple(self.leaves[s])
        self.events.append(ev)

    def illegal(self, api: str):
        """A call that would synchronize with captured work: invalidate and fail."""
        self.invalidate(f"{api} during capture")
        _err("hipErrorStreamCaptureUnsupported", f"{api} is not permitted on a capturing stream; "
                                                 f"capture {self.id} is now invalidated")

    def invalidate(self, why: str):
        if self.status == hipStreamCaptureStatusActive:
            self.status = hipStreamCaptureStatusInvalidated
            self.why = why

    def stream_destroyed(self, s):
        self.invalidate("a capturing stream was destroyed")
        if s is self.origin:
            self._finish()
        else:
            self.leaves.pop(s, None)
            s.capture = None

    def _finish(self):
        for st in self.leaves:
            st.capture = None
        for ev in self.events:
            if ev.capture is self:
                ev.capture, ev.capture_nodes = None, ()
        with _captures_lock:
            if self in _captures:
                _captures.remove(self)


def _thread_mode() -> hipStreamCaptureMode:
    return getattr(_tls, "mode", hipStreamCaptureModeGlobal)


def check_unsafe(api: str) -> None:
    """Called by hip.py's potentially unsafe calls (sync copies, device sync, malloc/free): fail with
    hipErrorStreamCaptureUnsupported, invalidating the captures that forbid it, as CUDA/HIP define
    the modes: Global forbids them in every thread not in Relaxed mode, ThreadLocal in its own thread."""
    if not _captures:
        return
    tmode = _thread_mode()
    if tmode == hipStreamCaptureModeRelaxed:
        return
    me = threading.get_ident()
    with _captures_lock:
        caps = [c for c in _captures if c.status == hipStreamCaptureStatusActive]
    bad = [c for c in caps if (c.thread == me and c.mode != hipStreamCaptureModeRelaxed)
           or (tmode == hipStreamCaptureModeGlobal and c.mode == hipStreamCaptureModeGlobal)]
    if bad:
        for c in bad:
            c.invalidate(f"{api} during capture")
        _err("hipErrorStreamCaptureUnsupported",
             f"{api} is not permitted while stream capture {bad[0].id} ({bad[0].mode.name}) is active; "
             f"the capture is now invalidated")


@_api
def hipStreamBeginCapture(stream, mode=hipStreamCaptureModeGlobal) -> None:
    s = _H()._stream(stream)
    try:
        mode = hipStreamCaptureMode(mode)
    except ValueError:
        _err("hipErrorInvalidValue", f"mode must be a hipStreamCaptureMode, not {mode!r}")
    if s.null:
        _err("hipErrorStreamCaptureUnsupported", "the null stream cannot be captured")
    if s.capture is not None:
        _err("hipErrorIllegalState", f"stream is already capturing (capture {s.capture.id})")
    cap = _Capture(hipGraph_t(), mode, s)
    s.capture = cap
    with _captures_lock:
        _captures.append(cap)


@_api
def hipStreamEndCapture(stream) -> hipGraph_t:
    s = _H()._stream(stream)
    cap = s.capture
    if cap is None:
        _err("hipErrorIllegalState", "stream is not capturing")
    if s is not cap.origin:
        _err("hipErrorStreamCaptureUnmatched", f"capture {cap.id} was begun on another stream")
    if cap.mode != hipStreamCaptureModeRelaxed and threading.get_ident() != cap.thread:
        _err("hipErrorStreamCaptureWrongThread", f"capture {cap.id} ({cap.mode.name}) was begun in another thread")
    cap._finish()
    if cap.status != hipStreamCaptureStatusActive:
        _err("hipErrorStreamCaptureInvalidated", f"capture {cap.id} was invalidated ({cap.why})")
    # every captured node must be joined back into the origin stream's leaves
    joined, todo = set(), list(cap.leaves[s])
    while todo:
        n = todo.pop()
        if id(n) not in joined:
            joined.add(id(n))
            todo.extend(n.deps)
    loose = [n for n in cap.graph.nodes if id(n) not in joined]
    if loose:
        streams = [st for st, lv in cap.leaves.items() if st is not s and any(id(n) not in joined for n in lv)]
        _err("hipErrorStreamCaptureUnjoined",
             f"capture {cap.id}: work on {len(streams) or 'a'} forked stream(s) {streams} was not joined back into "
             f"the origin stream (nodes {[n.id for n in loose]}); record an event there and wait for it on the origin")
    return cap.graph


@_api
def hipStreamIsCapturing(stream) -> hipStreamCaptureStatus:
    s = _H()._stream(stream)
    return hipStreamCaptureStatusNone if s.capture is None else s.capture.status


@_api
def hipStreamGetCaptureInfo(stream) -> tuple:
    """(status, capture id); the id is 0 when the stream is not capturing."""
    s = _H()._stream(stream)
    return (hipStreamCaptureStatusNone, 0) if s.capture is None else (s.capture.status, s.capture.id)


@_api
def hipThreadExchangeStreamCaptureMode(mode) -> hipStreamCaptureMode:
    """Set this thread's mode for potentially unsafe calls; returns the previous one."""
    try:
        mode = hipStreamCaptureMode(mode)
    except ValueError:
        _err("hipErrorInvalidValue", f"mode must be a hipStreamCaptureMode, not {mode!r}")
    old = _thread_mode()
    _tls.mode = mode
    return old


@_api
def hipEventRecordWithFlags(event, stream=None, flags: int = hipEventRecordDefault) -> None:
    """``hipEventRecordExternal`` during capture makes an event-record node (the event is recorded
    when the graph runs); otherwise like hipEventRecord."""
    h = _H()
    s = h._stream(stream)
    if s.capture is not None and flags & hipEventRecordExternal:
        return s.capture.add_event_record(s, h._event(event), external=True)
    return h.hipEventRecord(event, stream)


def capture_wait_event(s, ev, flags: int) -> None:
    """hipStreamWaitEvent when the stream is capturing or the event was recorded in a capture."""
    cap_s, cap_e = s.capture, ev.capture
    if cap_e is not None:
        cap_e._live()
        if cap_s is None:                                     # fork: s joins the capture
            if s.null:
                _err("hipErrorStreamCaptureImplicit", "the null stream cannot join a capture")
            s.capture = cap_e
            cap_e.leaves[s] = list(ev.capture_nodes)
            return
        if cap_s is cap_e:                                    # join: merge the event's leaves
            cap_s._live()
            cur = cap_s.leaves[s]
            cap_s.leaves[s] = cur + [n for n in ev.capture_nodes if n not in cur]
            return
        cap_s.invalidate("waited on an event of another capture")
        cap_e.invalidate("its event was waited on by another capture")
        _err("hipErrorStreamCaptureMerge", f"captures {cap_s.id} and {cap_e.id} cannot be merged")
    cap_s._live()
    if flags & hipEventWaitExternal:
        cap_s._append(s, _T.hipGraphNodeTypeWaitEvent, ev)
        return
    if not ev.recorded:
        return
    cap_s.invalidate("waited on an event recorded outside the capture")
    _err("hipErrorStreamCaptureIsolation",
         f"the event was recorded outside capture {cap_s.id}; pass hipEventWaitExternal for an event-wait node")
