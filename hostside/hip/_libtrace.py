"""``hdemuTraceLibraryCall``: how a library standing on the HIP face (``hostside.miopen``) puts its
calls into the platform trace, the way rocprofiler shows a library's API calls beside HIP's. Not a
HIP function: hdemu's own, named so.

One call is one ``EV_LIBRARY_CALL`` event in this process's trace ring, on track ``TRACK_LIBRARY``:
its start (CLOCK_MONOTONIC ns), its duration and the level that answered it (``LIBRARY_LEVELS``).
The trace export (``hostside.platform``) makes it a slice on a "library calls" track of the process.
"""
from __future__ import annotations

from shm_layout import layouts as L

from ._context import _st
from ._errors import _api, _raise, hipError_t

__all__ = ["hdemuTraceLibraryCall"]

_LEVEL = {name: i for i, name in enumerate(L.LIBRARY_LEVELS)}


def hdemuTraceLibraryCall(level: str, start_ns: int, end_ns: int) -> None:
    """Record one library call answered at ``level`` (one of ``shm_layout.layouts.LIBRARY_LEVELS``)
    from ``start_ns`` to ``end_ns`` (CLOCK_MONOTONIC, e.g. ``time.monotonic_ns()``) in the trace."""
    i = _LEVEL.get(level)
    if i is None or type(start_ns) is not int or type(end_ns) is not int or not 0 <= start_ns <= end_ns:
        _refuse(level, start_ns, end_ns)
    tr = _st().rt.trace                  # (a library's hot path: no more than the checks and the record)
    if tr is not None:
        tr.record(_EV, _TRACK, i, end_ns - start_ns, start_ns)


_EV, _TRACK = L.EV_LIBRARY_CALL, L.TRACK_LIBRARY


@_api
def _refuse(level, start_ns, end_ns) -> None:
    if level not in _LEVEL:
        _raise(hipError_t.hipErrorInvalidValue, f"level must be one of {', '.join(L.LIBRARY_LEVELS)}, not {level!r}")
    _raise(hipError_t.hipErrorInvalidValue, f"start_ns and end_ns must be ints with 0 <= start <= end, "
                                            f"not {start_ns!r} and {end_ns!r}")
