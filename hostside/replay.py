"""Kernel replay: re-execute one kernel dispatch several times, restoring device memory between
passes so every pass sees the same inputs (modelled on rocprofiler-sdk's experimental kernel replay;
the spec is ``../shared/seeds/000_*.txt``, the user guide ``docs/replay.md``).

The service lives in the host process, on the queue write path: ``VirtualGPU.launch`` hands every
kernel dispatch to an interceptor (``hostside._replay_window``) once a tool has called
``configure()`` (or created a ``DispatchCounting`` service). A process that never does takes no lock
and pays one global load per launch.

Tool-facing API (all of it in this module):

* ``configure(callback, continue_callback=None, *, policy, footprint_budget, bounds...)`` once per
  process (a second call raises ``ReplayError``).
* ``callback(op, phase, data)``: ``op`` is ``CONFIG`` (once per candidate dispatch, ENTER before the
  window, where the tool sets ``data.replay_pass_count``/``data.user_data``/``data.continue_callback``,
  and EXIT after it with ``data.outcome``) or ``PASS`` (ENTER and EXIT around every executed pass,
  with ``data.current_pass`` and ``data.total_passes``, 0 for an open-ended loop).
* ``continue_callback(data) -> bool``: asked after each PASS EXIT except after the last pass of a
  fixed loop; False ends the loop (it can only end it early).
* ``Context`` (a profiling context) with ``start()``/``stop()``. Inside a replay loop those are
  *local* toggles of the replaying thread, legal only during PASS ENTER, sticky across passes,
  scoped to the loop, last write wins, and a context that was not active when the loop began cannot
  be started. ``DispatchCounting(context, counters, callback)`` reads emulated counters for every
  dispatch during which its context is active.

Pass-count table (``data.replay_pass_count`` at CONFIG ENTER):

==============================  ==========================================================
None (untouched) or 1           no replay: the dispatch runs once through the ordinary path
N > 1                           N passes; the continue callback may stop earlier
0 with a continue callback      passes until the continue callback returns False
0 without one, or negative      refused with a warning: the dispatch runs once
==============================  ==========================================================
"""
from __future__ import annotations

import dataclasses
import sys
import threading
import traceback
import warnings

from shm_layout import counters as _C

#: One slice of a queue sync (rocprofiler-sdk ``Queue::sync()``: a 5 s HSA signal timeout hint). An
#: expired slice warns with the number of kernels still active on the queue.
QUEUE_SYNC_SLICE_S = 5.0
#: Slices of ``QUEUE_SYNC_SLICE_S`` the per-pass async-handler drain may take (``replay_drain_or_fatal``,
#: about 60 s in all) before the policy applies (``pass_drain_stuck``).
PASS_DRAIN_SLICES = 12
#: Slices the queue drain (barrier packet on the replaying queue) may take. The document leaves this
#: wait unbounded; hdemu bounds every wait, so it gets the per-pass bound (``queue_drain_stuck``).
QUEUE_DRAIN_SLICES = 12
#: Deadline of the agent-wide drain (``replay_drain_agent_or_fatal``) and its poll period; the
#: queue list is read afresh on every poll and no lock is held across the sleep (``agent_drain_stuck``).
AGENT_DRAIN_TIMEOUT_S = 60.0
AGENT_DRAIN_POLL_S = 2e-3
#: Safety cap of an open-ended loop (pass count 0): the loop ends with a warning after this many passes.
OPEN_LOOP_MAX_PASSES = 100_000
#: A dispatch from inside a tool callback never waits for a replay gate; it waits at most this long
#: for its stream's lock (held only briefly, except by a thread stuck behind the gate) and then fails.
REENTRANT_LOCK_TIMEOUT_S = 5.0

CONFIG, PASS = "CONFIG", "PASS"
ENTER, EXIT = "ENTER", "EXIT"
POLICIES = ("fatal", "decline")
DECLINE_REASONS = ("untracked_memory", "footprint_budget", "snapshot_failed", "queue_drain_stuck",
                   "agent_drain_stuck", "pass_drain_stuck", "reentrant_dispatch", "graph_launch")


class ReplayError(RuntimeError):
    """Misuse of the replay API (second configure, a toggle outside PASS ENTER, ...)."""


@dataclasses.dataclass
class Bounds:
    """The named bounds of the replay window; configure() takes any of them as keywords."""
    queue_sync_slice_s: float = QUEUE_SYNC_SLICE_S
    pass_drain_slices: int = PASS_DRAIN_SLICES
    queue_drain_slices: int = QUEUE_DRAIN_SLICES
    agent_drain_timeout_s: float = AGENT_DRAIN_TIMEOUT_S
    agent_drain_poll_s: float = AGENT_DRAIN_POLL_S
    open_loop_max_passes: int = OPEN_LOOP_MAX_PASSES


class ReplayData:
    """The one flat payload of the CONFIG and PASS callbacks (unused fields are None)."""

    __slots__ = ("dispatch_id", "agent", "queue", "kernel", "kernel_object", "grid", "block",
                 "replay_pass_count", "continue_callback", "user_data", "current_pass", "total_passes",
                 "completion_signal", "outcome")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        return "ReplayData(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                                         if k not in ("continue_callback",)) + ")"


@dataclasses.dataclass
class Outcome:
    """What became of one dispatch that passed through the service."""
    dispatch_id: int
    agent: int
    kernel: str
    status: str                  # replayed | declined | not_replayed | failed
    reason: str = ""             # a DECLINE_REASONS entry, or why it was not replayed / failed
    requested: int | None = None  # replay_pass_count as set by the tool (0 = open-ended)
    executed: int = 1            # passes that ran on the device
    footprint_bytes: int = 0
    regions: int = 0
    restores: int = 0

    def line(self) -> str:
        req = "-" if self.requested is None else self.requested
        return (f"hdemu replay: dispatch {self.dispatch_id} agent {self.agent} kernel {self.kernel} "
                f"{self.status} reason={self.reason or '-'} requested={req} executed={self.executed} "
                f"footprint={self.footprint_bytes}B regions={self.regions} restores={self.restores}")


class _Service:
    def __init__(self, callback, continue_callback, policy, footprint_budget, bounds, log, keep):
        self.callback = callback
        self.continue_callback = continue_callback
        self.policy = policy
        self.footprint_budget = footprint_budget
        self.bounds = bounds
        self.log = log
        self.outcomes = []
        self.keep = keep
        self.lock = threading.Lock()

    def record(self, out: Outcome) -> None:
        with self.lock:
            self.outcomes.append(out)
            if len(self.outcomes) > self.keep:
                del self.outcomes[:len(self.outcomes) - self.keep]
        line = out.line()
        if self.log is not None:
            self.log(line)
        elif out.status in ("declined", "failed"):
            print(line, file=sys.stderr, flush=True)


_service: _Service | None = None
_configure_lock = threading.Lock()
_tls = threading.local()


def configure(callback, continue_callback=None, *, policy: str = "fatal", footprint_budget: int = 0,
              log=None, keep_outcomes: int = 100_000, **bounds) -> None:
    """Configure the replay service for this process (once).

    ``policy``: what an expired drain does: ``"fatal"`` (the document's: the process aborts with a
    message naming the wait) or ``"decline"`` (the dispatch runs once and the reason is reported).
    ``footprint_budget``: bytes; a dispatch whose snapshot would exceed it is declined (0 = unlimited).
    ``log``: callable receiving every outcome line (default: declined and failed ones go to stderr).
    ``bounds``: any field of ``Bounds`` (``queue_sync_slice_s=0.2`` ...), for tests and slow machines.
    """
    global _service
    if not callable(callback):
        raise ReplayError(f"callback must be callable, not {callback!r}")
    if continue_callback is not None and not callable(continue_callback):
        raise ReplayError(f"continue_callback must be callable or None, not {continue_callback!r}")
    if policy not in POLICIES:
        raise ReplayError(f"policy must be one of {POLICIES}, not {policy!r}")
    if not isinstance(footprint_budget, int) or footprint_budget < 0:
        raise ReplayError(f"footprint_budget must be a non-negative int (bytes), not {footprint_budget!r}")
    try:
        b = Bounds(**bounds)
    except TypeError:
        raise ReplayError(f"unknown bounds {sorted(set(bounds) - set(Bounds.__dataclass_fields__))}; "
                          f"known: {sorted(Bounds.__dataclass_fields__)}") from None
    with _configure_lock:
        if _service is not None:
            raise ReplayError("the kernel-replay service is already configured in this process "
                              "(it can be configured once)")
        _service = _Service(callback, continue_callback, policy, footprint_budget, b, log, keep_outcomes)
        from . import _replay_window
        _replay_window.install()


def is_configured() -> bool:
    """True once a tool has configured the replay service in this process (graphs' hook)."""
    return _service is not None


def record_graph_launch(agent: int, nodes: int) -> None:
    """A graph launch while the service is configured: it runs once, never replayed; reported as
    declined with reason ``graph_launch`` (called by hostside.graph)."""
    if _service is not None:
        _service.record(Outcome(dispatch_id=-1, agent=agent, kernel=f"<graph of {nodes} nodes>",
                                status="declined", reason="graph_launch", requested=None, executed=1))


def outcomes() -> list[Outcome]:
    """The outcome of every dispatch the service saw (the last ``keep_outcomes``)."""
    svc = _service
    if svc is None:
        return []
    with svc.lock:
        return list(svc.outcomes)


def statistics() -> dict:
    """Counters of the replay machinery (windows, passes, snapshots, restores, bytes, times)."""
    from . import _replay_window
    return dict(_replay_window.STATS)


def flush(timeout_s: float = 10.0) -> bool:
    """Wait until every counter record of dispatches already submitted has been delivered."""
    from . import _replay_window
    return _replay_window.flush(timeout_s)


# -- profiling contexts and localized context control ---------------------------------------------
class Context:
    """A profiling context (rocprofiler_context_id_t). Services attached to it observe dispatches
    while it is active. ``start``/``stop`` change the global state, except on a thread inside a
    replay loop, where they are local toggles (see the module docstring)."""

    _all: list["Context"] = []
    _all_lock = threading.Lock()

    def __init__(self, name: str = ""):
        self.name = name
        self._active = False
        self.services = []
        with Context._all_lock:
            Context._all.append(self)

    def _toggle(self, on: bool) -> None:
        ov = getattr(_tls, "overrides", None)
        if ov is None:
            self._active = on
            return
        if not getattr(_tls, "armed", False):
            raise ReplayError(f"context {self.name!r}: start/stop inside a replay loop is legal only during "
                              f"the PASS ENTER callback")
        if on and not _tls.base.get(self, False):
            raise ReplayError(f"context {self.name!r} was not active when the replay loop began; a pass "
                              f"cannot start it")
        ov[self] = on                      # last write wins; sticky for the rest of the loop

    def start(self) -> None:
        self._toggle(True)

    def stop(self) -> None:
        self._toggle(False)

    @property
    def active(self) -> bool:
        """Active for dispatches submitted by this thread (the loop's override, else global)."""
        ov = getattr(_tls, "overrides", None)
        if ov:
            return ov.get(self, self._active)
        return self._active

    @property
    def globally_active(self) -> bool:
        return self._active

    def __repr__(self):
        return f"<Context {self.name!r} {'active' if self._active else 'inactive'}>"


@dataclasses.dataclass
class CounterRecord:
    """Counters of one dispatch (or one pass of a replayed dispatch) for one DispatchCounting."""
    dispatch_id: int             # the service's dispatch id (the same on every pass)
    device_dispatch_id: int      # agent << 56 | queue << 44 | packet index of the executed packet
    agent: int
    kernel: str
    replay_pass: int | None      # current_pass, or None outside a replay loop
    values: dict                 # counter name -> value, or None when the device had no slot left


class DispatchCounting:
    """Dispatch counter collection on a context: for every dispatch during which ``context`` is
    active, the device reads ``counters`` (names or ids) and ``callback(CounterRecord)`` is called on
    the async-handler thread. Counters of all active services share the device's ``counter_slots``;
    those beyond it read as None."""

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
        context.services.append(self)
        from . import _replay_window
        _replay_window.install()


def _call_tool(fn, *args, armed: bool = False):
    """Call a tool callback: marks the thread as inside a callback (its dispatches are reentrant),
    arms the toggles for PASS ENTER through a guard, and reports (does not propagate) exceptions."""
    depth = getattr(_tls, "in_callback", 0)
    _tls.in_callback = depth + 1
    prev = getattr(_tls, "armed", False)
    _tls.armed = armed
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - a broken tool must not break the application's dispatch
        warnings.warn("kernel replay: a tool callback raised:\n" + traceback.format_exc(), RuntimeWarning,
                      stacklevel=2)
        return None
    finally:
        _tls.armed = prev
        _tls.in_callback = depth
