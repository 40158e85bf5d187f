"""Found by using the DFX pipeline as a user would (end-to-end programs), pinned here in-process."""
import pytest

from hostside.dfx import accounting, lane_statistics
from shm_layout import dfx as D
from tests.unit.deviceside.aicpu.dfxkit import dead_pid, make

pytestmark = pytest.mark.timeout(60)


def test_events_left_unread_by_a_dead_lane_are_unrecorded_events_too(tmp_path):
    """A lane SIGKILLed while dispatches are in flight leaves task events in its ring that the command
    processor published before the supervisor marked it dead: they never become records. The lane
    statistics count them (task_events_dropped) and so must accounting.json's per-ring view, or a
    user adding up records + unrecorded_events comes out short (seen: 837 executed packets, 0
    unrecorded events)."""
    plat = make(tmp_path, lanes=2)
    try:
        g = plat.pm.topo.dfx
        ctl = plat.pm.segs["dfxctl"]
        st = ctl.view(D.lane_status, g.lane_status_off(0), 1)[0]
        st["pid"], st["state"] = dead_pid(), D.LANE_RUNNING      # lane 0 died mid-run
        (ring,) = [r for r in range(g.n_rings) if g.thread_of_ring(r) == 0]
        hdr = ctl.view(D.task_ring_header, g.task_ring_off(ring), 1)[0]
        hdr["head"], hdr["tail"], hdr["dropped"] = 3, 10, 2      # 7 published, never read; 2 refused
        lanes = {ln["lane"]: ln for ln in lane_statistics(plat.pm)}
        assert lanes[0]["state"] == "dead" and lanes[0]["task_events_dropped"] == 9
        acc = accounting(plat.pm)
        (r,) = [r for r in acc["task_rings"] if r["ring"] == ring]
        assert r["dropped_events"] == 9, r
        assert acc["unrecorded_events"] == sum(ln["task_events_dropped"] for ln in lanes.values()) == 9
        assert any("unread" in c for c in r["causes"]), r
    finally:
        plat.stop()
