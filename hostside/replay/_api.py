"""Kernel replay's tool-facing service: ``configure`` and the queries on it, and ``DispatchCounting``
(public face: ``hostside.replay``; the user guide is ``docs/replay.md``).

The service lives in the host process, on the queue write path: ``VirtualGPU.launch`` hands every
kernel dispatch to the interceptor (``_window``) once a tool has called ``configure()`` (or created a
``DispatchCounting`` service); this module installs it through ``clr.set_interceptor``. A process that
never does takes no lock and pays one global load per launch.

Pass-count table (``data.replay_pass_count`` at CONFIG ENTER):

==============================  ==========================================================
None (untouched) or 1           no replay: the dispatch runs once through the ordinary path
N > 1                           N passes; the continue callback may stop earlier
0 with a continue callback      passes until the continue callback returns False
0 without one, or negative      refused with a warning: the dispatch runs once
==============================  ==========================================================
"""
from __future__ import annotations

import threading

from shm_layout import counters as _C

from .. import clr as _clr
from . import _diagnostics, _state, _window
from ._fence import FENCE
from ._context import Context
from ._types import POLICIES, Bounds, Outcome, ReplayError, ReplayStatistics

__all__ = ["configure", "is_configured", "record_graph_launch", "outcomes", "statistics", "flush",
           "DispatchCounting", "current"]


class _Service:
    """The configured tool: its callbacks, policy, budget, bounds, log, and the outcomes seen
    (``outcomes`` behind ``lock``). Configuration is set once by ``configure``."""

    def __init__(self, callback, continue_callback, policy, footprint_budget, bounds, log, keep, copy_fence=True):
        self.callback = callback
        self.continue_callback = continue_callback
        self.policy = policy
        self.footprint_budget = footprint_budget
        self.bounds = bounds
        self.log = log
        self.outcomes = []
        self.keep = keep
        self.lock = threading.Lock()
        self.copy_fence = copy_fence

    def record(self, out: Outcome) -> None:
        with self.lock:
            self.outcomes.append(out)
            if len(self.outcomes) > self.keep:
                del self.outcomes[:len(self.outcomes) - self.keep]
        _diagnostics.log_outcome(out, self.log)


_service: _Service | None = None    # set once, by configure(), under _lock
_lock = threading.Lock()            # configure(), and every install of the interceptor


def current() -> _Service | None:
    """The configured service, or None."""
    with _lock:
        return _service


def configure(callback, continue_callback=None, *, policy: str = "fatal", footprint_budget: int = 0,
              log=None, keep_outcomes: int = 100_000, copy_fence: bool = True, **bounds) -> None:
    """Configure the replay service for this process (once).

    ``policy``: what an expired drain does: ``"fatal"`` (the document's: the process aborts with a
    message naming the wait) or ``"decline"`` (the dispatch runs once and the reason is reported).
    ``footprint_budget``: bytes; a dispatch whose snapshot would exceed it is declined (0 = unlimited).
    ``log``: callable receiving every outcome line (default: declined and failed ones go to stderr).
    ``copy_fence``: hold async copies and fills out of replay windows (the default, as
    rocprofiler-sdk does); False leaves them unfenced: a copy into the agent's memory during a window
    is reverted by the next restore (the SDMA hazard of docs/replay.md).
    ``bounds``: any field of ``Bounds`` (``queue_sync_slice_s=0.2`` ...), for tests and slow machines.
    """
    global _service
    if not callable(callback):
        raise ReplayError(f"callback must be callable, not {callback!r}")
    if continue_callback is not None and not callable(continue_callback):
        raise ReplayError(f"continue_callback must be callable or None, not {continue_callback!r}")
    if policy not in POLICIES:
        raise ReplayError(f"policy must be one of {POLICIES}, not {policy!r}")
    if not isinstance(copy_fence, bool):
        raise ReplayError(f"copy_fence must be True or False, not {copy_fence!r}")
    if not isinstance(footprint_budget, int) or footprint_budget < 0:
        raise ReplayError(f"footprint_budget must be a non-negative int (bytes), not {footprint_budget!r}")
    unknown = set(bounds) - set(Bounds.__dataclass_fields__)
    if unknown:
        raise ReplayError(f"unknown bounds {sorted(unknown)}; known: {sorted(Bounds.__dataclass_fields__)}")
    b = Bounds(**bounds)
    with _lock:
        if _service is not None:
            raise ReplayError("the kernel-replay service is already configured in this process "
                              "(it can be configured once)")
        _service = _Service(callback, continue_callback, policy, footprint_budget, b, log, keep_outcomes,
                            copy_fence)
        _window.install(_service)
        if copy_fence:
            _clr.set_copy_fence(FENCE)


def is_configured() -> bool:
    """True once a tool has configured the replay service in this process (graphs' hook)."""
    return current() is not None


def record_graph_launch(agent: int, nodes: int) -> None:
    """A graph launch while the service is configured: it runs once, never replayed; reported as
    declined with reason ``graph_launch`` (called by hostside.graph)."""
    svc = current()
    if svc is not None:
        svc.record(Outcome(dispatch_id=-1, agent=agent, kernel=f"<graph of {nodes} nodes>",
                           status="declined", reason="graph_launch", requested=None, executed=1))


def outcomes() -> list[Outcome]:
    """The outcome of every dispatch the service saw (the last ``keep_outcomes``)."""
    svc = current()
    if svc is None:
        return []
    with svc.lock:
        return list(svc.outcomes)


def statistics() -> ReplayStatistics:
    """A frozen snapshot of the replay machinery's counters (windows, passes, snapshots, restores,
    bytes, times); ``dataclasses.asdict()`` of it is a plain dict."""
    return _window.STATS.snapshot()


def flush(timeout_s: float = 10.0) -> bool:
    """Wait until every counter record of dispatches already submitted has been delivered."""
    return _state.flush(timeout_s)


class DispatchCounting:
    """Dispatch counter collection on a context: for every dispatch during which ``context`` is
    active, the device reads ``counters`` (names or ids) and ``callback(CounterRecord)`` is called on
    the async-handler thread. Counters of all active services share the device's ``counter_slots``;
    those beyond it read as None. Works without ``configure()`` (no gate then); the service lasts as
    long as its context (``Context.destroy()`` ends it)."""

    def __init__(self, context: Context, counters, callback):
        if not isinstance(context, Context):
            raise ReplayError(f"context must be a Context, not {context!r}")
        if not callable(callback):
            raise ReplayError(f"callback must be callable, not {callback!r}")
        try:
            self.ids = list(dict.fromkeys(_C.counter_id(c) for c in counters))
        except ValueError as exc:
            raise ReplayError(str(exc)) from None
        self.context = context
        self.callback = callback
        context._attach(self)
        with _lock:
            _window.install(_service)
