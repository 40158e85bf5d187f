"""What other HIP calls must respect while a stream capture is in progress: the registry of captures
not yet ended, the per-thread capture mode, ``check_unsafe`` (the capture modes applied to potentially
unsafe calls) and ``capture_wait_event`` (fork and join across streams through events).

The capture object itself (``_capture._Capture``) sits above the memory, module and stream calls;
this module sits below them, so those calls can apply the rules without importing the capture.
"""
from __future__ import annotations

import threading

from ._errors import _api, _raise, hipError_t
from ._graph_types import (_T, hipEventWaitExternal, hipStreamCaptureMode, hipStreamCaptureModeGlobal,
                           hipStreamCaptureModeRelaxed, hipStreamCaptureStatusActive)

__all__ = ["hipThreadExchangeStreamCaptureMode"]

_captures: list = []            # active or invalidated captures not yet ended
_captures_lock = threading.Lock()
_tls = threading.local()        # .mode: this thread's capture mode for potentially unsafe calls


def _thread_mode() -> hipStreamCaptureMode:
    return getattr(_tls, "mode", hipStreamCaptureModeGlobal)


def check_unsafe(api: str) -> None:
    """Called by the potentially unsafe calls (hipMemcpy, hipMemset, hipDeviceSynchronize, hipMalloc,
    hipFree): fail with hipErrorStreamCaptureUnsupported, invalidating the captures that forbid it, as
    CUDA/HIP define the modes: Global forbids them in every thread not in Relaxed mode, ThreadLocal in
    its own thread."""
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
        _raise(hipError_t.hipErrorStreamCaptureUnsupported,
               f"{api} is not permitted while stream capture {bad[0].id} ({bad[0].mode.name}) is active; "
               f"the capture is now invalidated")


def implicit_capture_check(invalidate: bool = True) -> None:
    """Called when a call names the legacy null stream: while a blocking stream is capturing in Global
    mode (any thread) or ThreadLocal mode (this thread), the null stream's implicit order with it
    cannot be captured: hipErrorStreamCaptureImplicit. A call that would submit work (``invalidate``)
    also invalidates those captures, as HIP does; a query (hipStreamIsCapturing,
    hipStreamGetCaptureInfo of the legacy stream) leaves them valid."""
    if not _captures:
        return
    me = threading.get_ident()
    with _captures_lock:
        caps = [c for c in _captures if c.status == hipStreamCaptureStatusActive]
    for c in caps:
        if c.mode == hipStreamCaptureModeRelaxed or (c.mode != hipStreamCaptureModeGlobal and c.thread != me):
            continue
        if any(st.blocking for st in list(c.leaves)):
            if invalidate:
                c.invalidate("the legacy null stream was used during the capture")
            _raise(hipError_t.hipErrorStreamCaptureImplicit,
                   f"the legacy null stream is ordered with blocking streams, and capture {c.id} "
                   f"({c.mode.name}) of a blocking stream is active"
                   + ("; the capture is now invalidated" if invalidate else ""))


def check_device_sync(api: str) -> None:
    """hipDeviceSynchronize while any capture is active (in any mode): that capture's work cannot be
    waited for; hipErrorStreamCaptureUnsupported, and the captures are invalidated (as HIP does)."""
    if not _captures:
        return
    with _captures_lock:
        caps = [c for c in _captures if c.status == hipStreamCaptureStatusActive]
    if caps:
        for c in caps:
            c.invalidate(f"{api} during capture")
        _raise(hipError_t.hipErrorStreamCaptureUnsupported,
               f"{api} is not permitted while stream capture {caps[0].id} ({caps[0].mode.name}) is active; "
               f"the capture is now invalidated")


@_api
def hipThreadExchangeStreamCaptureMode(mode) -> hipStreamCaptureMode:
    """Set this thread's mode for potentially unsafe calls; returns the previous one."""
    try:
        mode = hipStreamCaptureMode(mode)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"mode must be a hipStreamCaptureMode, not {mode!r}")
    old = _thread_mode()
    _tls.mode = mode
    return old


def capture_wait_event(s, ev, flags: int) -> None:
    """hipStreamWaitEvent when the stream is capturing or the event was recorded in a capture."""
    cap_s, cap_e = s.capture, ev.capture
    if cap_e is not None:
        cap_e._live()
        if cap_s is None:                                     # fork: s joins the capture
            if s.null:
                _raise(hipError_t.hipErrorStreamCaptureImplicit, "the null stream cannot join a capture")
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
        _raise(hipError_t.hipErrorStreamCaptureMerge, f"captures {cap_s.id} and {cap_e.id} cannot be merged")
    cap_s._live()
    if flags & hipEventWaitExternal:
        cap_s._append(s, _T.hipGraphNodeTypeWaitEvent, ev)
        return
    if not ev.recorded:
        return
    cap_s.invalidate("waited on an event recorded outside the capture")
    _raise(hipError_t.hipErrorStreamCaptureIsolation,
           f"the event was recorded outside capture {cap_s.id}; pass hipEventWaitExternal for an event-wait node")
