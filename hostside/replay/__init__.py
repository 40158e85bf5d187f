"""Kernel replay: re-execute one kernel dispatch several times, restoring device memory between
passes so every pass sees the same inputs (modelled on rocprofiler-sdk's experimental kernel replay;
the spec is ``../shared/seeds/000_*.txt``, the user guide ``docs/replay.md``).

Public face of ``hostside.replay``; the modules behind it are private:
``_types`` (bounds, constants, ``ReplayError``, the records and ``ReplayStatistics``), ``_context``
(profiling contexts, localized context control, tool-callback calls), ``_state`` (per-agent gate,
snapshot buffer, signal and counter-block pools), ``_snapshot`` (the agent-scoped inventory with
generation stamps, snap/restore and the restore identity gate), ``_window`` (the interceptor on the queue write
path and the replay window), ``_api`` (``configure`` and the queries, ``DispatchCounting``).
``hostside.replay.counters`` is the counter-collection tool (``hdemu counters``), not imported here.
Imports ``hostside.clr``, ``hostside.hsa`` and ``shm_layout`` only; the interceptor is installed
through ``clr.set_interceptor``.

Tool-facing API:

* ``configure(callback, continue_callback=None, *, policy, footprint_budget, log, bounds...)`` once
  per process (a second call raises ``ReplayError``).
* ``callback(op, phase, data)``: ``op`` is ``CONFIG`` (once per candidate dispatch, ENTER before the
  window, where the tool sets ``data.replay_pass_count``/``data.user_data``/``data.continue_callback``,
  and EXIT after it with ``data.outcome``) or ``PASS`` (ENTER and EXIT around every executed pass,
  with ``data.current_pass`` and ``data.total_passes``, 0 for an open-ended loop).
* ``continue_callback(data) -> bool``: asked after each PASS EXIT except after the last pass of a
  fixed loop; False ends the loop (it can only end it early).
* ``Context`` (a profiling context) with ``start()``/``stop()``/``destroy()``. Inside a replay loop
  start and stop are *local* toggles of the replaying thread, legal only during PASS ENTER, sticky
  across passes, scoped to the loop, last write wins, and a context that was not active when the loop
  began can be neither started nor stopped (``ReplayError.status`` ``CONTEXT_NOT_STARTED``).
  ``DispatchCounting(context, counters, callback)`` reads emulated counters for every dispatch
  during which its context is active.
* ``outcomes()``, ``statistics()`` (a frozen ``ReplayStatistics``), ``flush()``, ``is_configured()``.
"""
from . import _api
from ._api import DispatchCounting, configure, flush, is_configured, outcomes, record_graph_launch, statistics
from ._context import Context
from ._types import (AGENT_DRAIN_POLL_S, AGENT_DRAIN_TIMEOUT_S, CONFIG, CONTEXT_ERROR, CONTEXT_NOT_STARTED,
                     COPY_FENCE_TIMEOUT_S, DECLINE_REASONS, ENTER, EXIT,
                     OPEN_LOOP_MAX_PASSES, PASS, PASS_DRAIN_SLICES, POLICIES, QUEUE_DRAIN_SLICES,
                     QUEUE_SYNC_SLICE_S, REENTRANT_LOCK_TIMEOUT_S, Bounds, CounterRecord, Outcome, ReplayData,
                     ReplayError, ReplayStatistics)

__all__ = ["configure", "is_configured", "record_graph_launch", "outcomes", "statistics", "flush",
           "Context", "DispatchCounting", "ReplayData", "Outcome", "CounterRecord", "ReplayStatistics",
           "ReplayError", "Bounds", "CONFIG", "PASS", "ENTER", "EXIT", "POLICIES", "DECLINE_REASONS",
           "QUEUE_SYNC_SLICE_S", "PASS_DRAIN_SLICES", "QUEUE_DRAIN_SLICES", "AGENT_DRAIN_TIMEOUT_S",
           "AGENT_DRAIN_POLL_S", "OPEN_LOOP_MAX_PASSES", "REENTRANT_LOCK_TIMEOUT_S", "COPY_FENCE_TIMEOUT_S",
           "CONTEXT_ERROR", "CONTEXT_NOT_STARTED"]


def __getattr__(name: str):
    # ``replay._service``: the configured service object (None before configure), as the module
    # global of the old single-module replay had it; scenario programs adjust its footprint_budget.
    if name == "_service":
        return _api.current()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
