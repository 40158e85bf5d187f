"""The host side of DFX profiling: the collector process (drain shards, replenish thread, one writer
per subsystem) and the readers of its outputs (accounting, lane statistics, stalls, salvage).

Public face of ``hostside.dfx``; the modules behind it are private: ``_collector`` (the process),
``_replenish`` and ``_deadlanes`` (parts of it), ``_ownership`` (the host's buffer table and loss
bookkeeping), ``_accounting`` (the invariant and its causes, salvage), ``_readers``, ``_swimlane``.
``python -m hostside.dfx BOOT [OUT_DIR]`` runs the collector role. Imports ``shm_layout`` only.
"""
from ._collector import (CONTROL_PERIOD_S, FLUSH_TIMEOUT_S, REPLENISH_MIN_S, REPLENISH_PERIOD_S, SHARD_SLICE_S,
                         Collector, main)
from ._readers import accounting, lane_statistics, load_output, read_stalls, salvage
from ._swimlane import join as swimlane_join
from ._swimlane import write_swimlane

__all__ = ["Collector", "main", "accounting", "lane_statistics", "read_stalls", "salvage", "load_output",
           "swimlane_join", "write_swimlane", "SHARD_SLICE_S", "REPLENISH_PERIOD_S", "REPLENISH_MIN_S",
           "CONTROL_PERIOD_S", "FLUSH_TIMEOUT_S"]
