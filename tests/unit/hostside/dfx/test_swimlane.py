"""The swimlane trace's time origin (a precedence bug once left stall starts out of it)."""
from __future__ import annotations

import numpy as np

from hostside.dfx._swimlane import swimlane_t0

_DT = np.dtype([("reg_task_id", "<u8"), ("thread", "<u4"), ("dispatch_time", "<u8"),
                ("finish_time", "<u8"), ("start_time", "<u8"), ("end_time", "<u8")])


def _tasks(*dispatch_times):
    sw = np.zeros(len(dispatch_times), _DT)
    sw["dispatch_time"] = dispatch_times
    return sw


def test_t0_includes_a_stall_that_starts_before_every_task():
    # before the fix: min([task min] if tasks else [] + stalls) ignored the stalls whenever tasks existed,
    # so a stall that started first got a negative timestamp in the trace
    assert swimlane_t0(_tasks(5_000, 7_000), [{"start_ns": 1_000}]) == 1_000


def test_t0_is_the_first_task_when_stalls_come_later():
    assert swimlane_t0(_tasks(5_000, 7_000), [{"start_ns": 9_000}]) == 5_000


def test_t0_with_only_stalls_or_nothing():
    assert swimlane_t0(_tasks(), [{"start_ns": 3_000}, {"start_ns": 2_000}]) == 2_000
    assert swimlane_t0(_tasks(), []) == 0
