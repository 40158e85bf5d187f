"""The axes a sweep may vary for each study: its point mode's parameters, name -> default (whose
type is the axis's type). The point functions that read them are in ``_sweep_child``; every study can
also be swept whole (``mode = "study"``), whose one axis is ``small``."""
from __future__ import annotations

__all__ = ["POINT_AXES", "WHOLE_AXES", "axes_of"]

POINT_AXES = {
    "dispatch": {"agents": 1, "engines": 1, "clients": 1, "threads": 1, "queues": 1, "launches": 100},
    "backpressure": {"policy": "block", "pool": 1, "launches": 200},
    "replay": {"footprint_kib": 64, "passes": 2, "dispatches": 6, "fence": True, "fence_windows": 4},
    "coherence": {"arch": "a2a3", "records_per_buffer": 64, "records": 4000},
}
WHOLE_AXES = {"small": True}


def axes_of(study: str, whole: bool) -> dict:
    """The axes (name -> default) a sweep of ``study`` may set: its point's, or ``small`` alone when
    the sweep runs the whole study (``mode = "study"``, and always for a study without a point)."""
    if whole or study not in POINT_AXES:
        return dict(WHOLE_AXES)
    return dict(POINT_AXES[study])
