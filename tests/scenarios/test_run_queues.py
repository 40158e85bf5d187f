"""`hdemu run corrupt-header`: an AQL packet header of the workload's queue overwritten through the
ring's declared layout; the queue fails with INVALID_PACKET_FORMAT, the stream's wait raises it, the
CP serves the workload's other queue."""
import pytest

from shm_layout import aql as A
from tests.scenarios.runkit import check_consistent, of, run, show_latencies, untimed, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_corrupt_header_fails_its_queue_only(tmp_path):
    # the shipped scenario with its host_error bound (1.0 s) raised: asserted is the error, after the corruption
    path, bounds = untimed("corrupt-header", tmp_path)
    r, rep, hist = run(path, tmp_path)
    show_latencies(rep, bounds)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    ev = f["evidence"]
    assert f["state"] == "injected" and A.header_type(int(ev["new_header"], 16)) == 4
    assert A.header_type(int(ev["old_header"], 16)) == A.HSA_PACKET_TYPE_KERNEL_DISPATCH
    (qe,) = of(hist, "queue_error")
    assert (qe["queue"], qe["error_packet_id"], qe["owner_pid"]) == (ev["queue"], ev["packet"], rep["workload"]["pid"])
    assert qe["status"] == "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert [(e["stream"], e["name"]) for e in errs] == [(0, "hipErrorInvalidConfiguration")]
    assert errs[0]["t_s"] >= f["t_s"] and qe["t_s"] >= f["t_s"]
    after = [h for h in of(hist, "workload") if h["ev"] == "sync" and h["stream"] == 1 and h["t_s"] > f["t_s"]]
    assert rep["promises"][2]["details"]["served"] == {"1": len(after)} and after
    assert not of(hist, "role_died")
    assert verdicts(rep) == {(0, "queue_error"): "HELD", (1, "host_error"): "HELD", (2, "others_served"): "HELD",
                             (3, "roles_alive"): "HELD"}
