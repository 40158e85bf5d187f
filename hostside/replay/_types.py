"""The replay service's vocabulary: bounds, callback constants, the error, the records the tool sees
(``ReplayData``, ``Outcome``, ``CounterRecord``) and the statistics (a frozen ``ReplayStatistics``
snapshot of counters kept behind a lock). Pure data: imports ``shm_layout`` and ``_diagnostics`` (the outcome line)."""
from __future__ import annotations

import dataclasses
import threading

from shm_layout import errors as _errors

from . import _diagnostics as _diag

__all__ = ["QUEUE_SYNC_SLICE_S", "PASS_DRAIN_SLICES", "QUEUE_DRAIN_SLICES", "AGENT_DRAIN_TIMEOUT_S",
           "AGENT_DRAIN_POLL_S", "OPEN_LOOP_MAX_PASSES", "REENTRANT_LOCK_TIMEOUT_S", "COPY_FENCE_TIMEOUT_S", "CONFIG", "PASS", "ENTER",
           "EXIT", "POLICIES", "DECLINE_REASONS", "ReplayError", "Bounds", "ReplayData", "Outcome",
           "CounterRecord", "ReplayStatistics", "StatCounters"]

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
#: How long a window waits for the async copies already in flight on its agent (the copy fence,
#: rocprofiler-sdk ``copy_fence::open_window``: 5 s) before it declines (``copy_fence_stuck``).
COPY_FENCE_TIMEOUT_S = 5.0

CONFIG, PASS = "CONFIG", "PASS"
ENTER, EXIT = "ENTER", "EXIT"
POLICIES = ("fatal", "decline")
DECLINE_REASONS = ("untracked_memory", "footprint_budget", "snapshot_failed", "queue_drain_stuck",
                   "agent_drain_stuck", "pass_drain_stuck", "reentrant_dispatch", "copy_fence_stuck", "graph_launch")
#: ``ReplayError.status`` values (rocprofiler-sdk's status codes for a local context toggle)
CONTEXT_ERROR, CONTEXT_NOT_STARTED = "CONTEXT_ERROR", "CONTEXT_NOT_STARTED"


class ReplayError(_errors.ReplayError):
    """Misuse of the replay API (second configure, a toggle outside PASS ENTER, ...); an
    ``shm_layout.errors.ReplayError``, so an ``HdemuError``. ``status`` names rocprofiler-sdk's
    status for a rejected local toggle (``CONTEXT_ERROR``: not armed; ``CONTEXT_NOT_STARTED``: the
    context was not active when the loop began), else None."""

    def __init__(self, *args, status: str | None = None):
        super().__init__(*args)
        self.status = status


@dataclasses.dataclass
class Bounds:
    """The named bounds of the replay window; configure() takes any of them as keywords."""
    queue_sync_slice_s: float = QUEUE_SYNC_SLICE_S
    pass_drain_slices: int = PASS_DRAIN_SLICES
    queue_drain_slices: int = QUEUE_DRAIN_SLICES
    agent_drain_timeout_s: float = AGENT_DRAIN_TIMEOUT_S
    agent_drain_poll_s: float = AGENT_DRAIN_POLL_S
    open_loop_max_passes: int = OPEN_LOOP_MAX_PASSES
    copy_fence_timeout_s: float = COPY_FENCE_TIMEOUT_S


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
    reentrancy: bool = False     # a tool callback dispatched (or copied) into this window: not trustworthy
    untracked_bytes: int = 0     # pointer arguments outside the snapshot (upstream's untracked pool class)
    untracked_regions: int = 0
    untracked_vmem_bytes: int = 0  # virtual-memory mappings (hdemu has none: always 0)
    untracked_vmem_regions: int = 0
    snap_seconds: float = 0.0
    restore_seconds: float = 0.0
    skipped_regions: int = 0     # regions a restore left alone: no longer the captured allocation

    def line(self) -> str:
        """The outcome line (``_diagnostics.format_outcome``)."""
        return "hdemu replay: " + _diag.format_outcome(self)


@dataclasses.dataclass
class CounterRecord:
    """Counters of one dispatch (or one pass of a replayed dispatch) for one DispatchCounting."""
    dispatch_id: int             # the service's dispatch id (the same on every pass)
    device_dispatch_id: int      # agent << 56 | queue << 44 | packet index of the executed packet
    agent: int
    kernel: str
    replay_pass: int | None      # current_pass, or None outside a replay loop
    values: dict                 # counter name -> value, or None when the device had no slot left


@dataclasses.dataclass(frozen=True, slots=True)
class ReplayStatistics:
    """A snapshot of the replay machinery's counters (``replay.statistics()``), process-wide since
    the first dispatch the interceptor saw. ``dataclasses.asdict(stats)`` gives a plain dict."""
    windows: int = 0             # replay windows entered (writer lock and stream lock taken)
    replayed: int = 0            # outcomes by status (graph launches are not counted here)
    declined: int = 0
    not_replayed: int = 0
    failed: int = 0
    reentrant: int = 0           # dispatches from inside a tool callback (declined, counted above too)
    ordinary: int = 0            # dispatches the tool did not ask to replay (run under the reader lock)
    counted: int = 0             # dispatches counted outside a window (their handler forwards completion)
    passes: int = 0              # passes submitted inside windows
    snaps: int = 0
    restores: int = 0
    snap_bytes: int = 0
    snap_ns: int = 0
    restore_bytes: int = 0
    restore_ns: int = 0
    queue_drain_ns: int = 0
    agent_drain_ns: int = 0
    pass_kernel_ns: int = 0      # device time of the passes' kernels (signal timestamps)
    slice_warnings: int = 0      # expired queue-sync slices (queue drain and pass drains)


_STAT_FIELDS = tuple(f.name for f in dataclasses.fields(ReplayStatistics))


class StatCounters:
    """The live counters behind ``ReplayStatistics``: updated from the submitting threads and the
    async-handler thread, so every update and every snapshot takes the lock."""

    __slots__ = ("_lock", "_v")

    def __init__(self):
        self._lock = threading.Lock()
        self._v = dict.fromkeys(_STAT_FIELDS, 0)

    def add(self, **amounts: int) -> None:
        """Add to one or more counters at once (``add(snaps=1, snap_bytes=n)``); unknown names raise."""
        with self._lock:
            v = self._v
            for k, n in amounts.items():
                v[k] += n                   # KeyError on a misspelt counter: a bug, never silent

    def snapshot(self) -> ReplayStatistics:
        with self._lock:
            return ReplayStatistics(**self._v)
