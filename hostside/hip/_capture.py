"""Stream capture: the work issued on capturing streams becomes graph nodes.

The launch, copy, memset and event-record calls call the stream's ``capture`` object (``_Capture``)
instead of submitting. Each stream in the capture keeps its current leaf set; a new node depends on
it. An event recorded during capture remembers the leaf set of its stream;
``hipStreamWaitEvent(other, event)`` makes ``other`` join the capture (fork) or merges the set into
its leaves (join): ``_capture_rules.capture_wait_event``. ``hipStreamEndCapture`` refuses a capture
whose forked work was not joined back. Calls that would synchronize with captured work fail with
``hipErrorStreamCaptureUnsupported`` and invalidate the capture; ``_capture_rules.check_unsafe``
applies the capture modes to potentially unsafe calls.
"""
from __future__ import annotations

import itertools
import threading

from ._capture_rules import _captures, _captures_lock
from ._context import _get_stream, _peek_stream
from ._errors import _api, _raise, hipError_t
from ._graph_build import _copy_spec, _fill_spec, _spec_from_launch
from ._graph_types import (_T, hipEventRecordDefault, hipEventRecordExternal, hipGraph_t, hipStreamCaptureMode,
                           hipStreamCaptureModeGlobal, hipStreamCaptureModeRelaxed, hipStreamCaptureStatus,
                           hipStreamCaptureStatusActive, hipStreamCaptureStatusInvalidated,
                           hipStreamCaptureStatusNone)
from ._stream import _event, hipEventRecord
from . import _graph_mem_run

__all__ = ["hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
           "hipEventRecordWithFlags"]

_capture_ids = itertools.count(1)


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
        self.captured = set()             # nodes captured (not added by hand): only these must be joined
        self.removed = []                 # nodes hipStreamSetCaptureDependencies took out of a leaf set

    # -- hooks called by the stream, memory and module calls -----------------------------------------
    def _live(self):
        if self.status != hipStreamCaptureStatusActive:
            _raise(hipError_t.hipErrorStreamCaptureInvalidated,
                   f"stream capture {self.id} was invalidated ({self.why})")

    def _append(self, s, ntype, spec):
        self._live()
        n = self.graph._add(ntype, self.leaves[s], spec)
        self.captured.add(n)
        self.leaves[s] = [n]

    def add_kernel(self, s, f, params, grid, block, shared, dims):
        self._live()
        self._append(s, _T.hipGraphNodeTypeKernel, _spec_from_launch(f, params, grid, block, int(shared), dims))

    def add_memcpy(self, s, dst, src, size, dk, sk):
        self._live()
        self._append(s, _T.hipGraphNodeTypeMemcpy, _copy_spec(dst, src, size, 4))

    def add_memset(self, s, dst, value, size, width=1, rows=1, pitch=0):
        """``size`` bytes of ``width``-byte elements (hipMemset*: 1; hipMemsetD16/D32*: 2/4); ``rows``
        such rows ``pitch`` bytes apart (hipMemset2D/3D*: one node, as HIP captures them)."""
        self._live()
        self._append(s, _T.hipGraphNodeTypeMemset, _fill_spec(dst, value, size, width, rows, pitch))

    def add_child_graph(self, s, spec):
        """hipGraphLaunch on a capturing stream: ``spec`` (a ChildSpec) becomes a child graph node."""
        self._live()
        self._append(s, _T.hipGraphNodeTypeGraph, spec)

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
        _raise(hipError_t.hipErrorStreamCaptureUnsupported, f"{api} is not permitted on a capturing stream; "
                                                            f"capture {self.id} is now invalidated")

    def invalidate(self, why: str):
        if self.status == hipStreamCaptureStatusActive:
            self.status = hipStreamCaptureStatusInvalidated
            self.why = why

    def stream_destroyed(self, s):
        self.invalidate("a capturing stream was destroyed")
        if s is self.origin:
            self._finish()
            self.discard()
        else:
            self.leaves.pop(s, None)
            s.capture = None

    def discard(self):
        """The capture failed: its graph is never handed out (CLR deletes it), so the device blocks its
        alloc nodes reserved (captured hipMallocAsync) go back now."""
        _graph_mem_run.on_graph_destroy(self.graph)

    def _finish(self):
        for st in self.leaves:
            st.capture = None
        for ev in self.events:
            if ev.capture is self:
                ev.capture, ev.capture_nodes = None, ()
        with _captures_lock:
            if self in _captures:
                _captures.remove(self)


@_api
def hipStreamBeginCapture(stream, mode=hipStreamCaptureModeGlobal) -> None:
    s = _peek_stream(stream)
    try:
        mode = hipStreamCaptureMode(mode)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"mode must be a hipStreamCaptureMode, not {mode!r}")
    if s.null:
        _raise(hipError_t.hipErrorStreamCaptureUnsupported, "the null stream cannot be captured")
    if s.capture is not None:
        _raise(hipError_t.hipErrorIllegalState, f"stream is already capturing (capture {s.capture.id})")
    cap = _Capture(hipGraph_t(), mode, s)
    s.capture = cap
    with _captures_lock:
        _captures.append(cap)


@_api
def hipStreamEndCapture(stream) -> hipGraph_t:
    s = _peek_stream(stream)
    cap = s.capture
    if cap is None:
        _raise(hipError_t.hipErrorIllegalState, "stream is not capturing")
    if s is not cap.origin:
        _raise(hipError_t.hipErrorStreamCaptureUnmatched, f"capture {cap.id} was begun on another stream")
    if cap.mode != hipStreamCaptureModeRelaxed and threading.get_ident() != cap.thread:
        _raise(hipError_t.hipErrorStreamCaptureWrongThread,
               f"capture {cap.id} ({cap.mode.name}) was begun in another thread")
    cap._finish()
    if cap.status != hipStreamCaptureStatusActive:
        cap.discard()
        _raise(hipError_t.hipErrorStreamCaptureInvalidated, f"capture {cap.id} was invalidated ({cap.why})")
    # every captured node must be joined back into the origin stream's leaves; as CLR, nodes added by
    # hand, and those a hipStreamSetCaptureDependencies dropped (with what they depend on), need not be
    joined, todo = set(), list(cap.leaves[s]) + list(cap.removed)
    while todo:
        n = todo.pop()
        if id(n) not in joined:
            joined.add(id(n))
            todo.extend(n.deps)
    loose = [n for n in cap.graph.nodes if id(n) not in joined and n in cap.captured]
    if loose:
        streams = [st for st, lv in cap.leaves.items() if st is not s and any(id(n) not in joined for n in lv)]
        cap.discard()
        _raise(hipError_t.hipErrorStreamCaptureUnjoined,
               f"capture {cap.id}: work on {len(streams) or 'a'} forked stream(s) {streams} was not joined back "
               f"into the origin stream (nodes {[n.id for n in loose]}); record an event there and wait for it "
               f"on the origin")
    return cap.graph


@_api
def hipStreamIsCapturing(stream) -> hipStreamCaptureStatus:
    s = _peek_stream(stream)
    return hipStreamCaptureStatusNone if s.capture is None else s.capture.status


@_api
def hipStreamGetCaptureInfo(stream) -> tuple:
    """(status, capture id); the id is 0 when the stream is not capturing."""
    s = _peek_stream(stream)
    return (hipStreamCaptureStatusNone, 0) if s.capture is None else (s.capture.status, s.capture.id)


@_api
def hipEventRecordWithFlags(event, stream=None, flags: int = hipEventRecordDefault) -> None:
    """``hipEventRecordExternal`` during capture makes an event-record node (the event is recorded
    when the graph runs); otherwise like hipEventRecord."""
    s = _get_stream(stream)
    if s.capture is not None and flags & hipEventRecordExternal:
        return s.capture.add_event_record(s, _event(event), external=True)
    return hipEventRecord(event, stream)
