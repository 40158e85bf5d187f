"""Segments across processes: what a dead creator leaves behind, and sweep()."""
import pytest

from shm_layout.segments import list_segments, sweep


@pytest.mark.xdist_group("sweep")   # sweeps every dead segment: one worker, one at a time
def test_sweep_removes_segments_of_dead_creators(scenario):
    name = scenario.run("shm_layout/orphan_segment", timeout=30).result["name"]
    assert name in [n for n, _p, _t in list_segments()]
    assert name in sweep()
    assert name not in [n for n, _p, _t in list_segments()]
