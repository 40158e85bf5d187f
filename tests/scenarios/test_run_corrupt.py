"""`hdemu run` corrupting the workload's queue through the declared layouts (kernel object, kernarg,
dependency signal, read index, doorbell): the queue fails with its HSA status, the stream's wait
raises the matching HipError, the CP serves the workload's other queue. Each shipped scenario run
from the CLI; report.json checked against history.jsonl."""
import pytest

from hostside.faults._corrupt import BAD_KERNARG, BAD_KERNEL_OBJECT, BAD_SIGNAL, INDEX_JUMP
from tests.scenarios.runkit import check_consistent, of, run, show_latencies, untimed, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

CASES = {
    "corrupt-kernel-object": ("HSA_STATUS_ERROR_INVALID_CODE_OBJECT", "hipErrorInvalidImage"),
    "corrupt-kernarg": ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", "hipErrorIllegalAddress"),
    "corrupt-dependency": ("HSA_STATUS_ERROR_INVALID_SIGNAL", "hipErrorLaunchFailure"),
    "corrupt-read-index": ("HSA_STATUS_ERROR_INVALID_QUEUE", "hipErrorLaunchFailure"),
    "corrupt-doorbell": ("HSA_STATUS_ERROR_INVALID_QUEUE", "hipErrorLaunchFailure"),
}


def _what_was_written(name, ev):
    """The corruption's own evidence: which field got which value."""
    if name == "corrupt-kernel-object":
        assert (ev["field"], int(ev["new"], 16)) == ("kernel_object", BAD_KERNEL_OBJECT) and int(ev["old"], 16)
    elif name == "corrupt-kernarg":
        assert (ev["field"], int(ev["new"], 16)) == ("kernarg_address", BAD_KERNARG)
    elif name == "corrupt-dependency":
        assert (ev["field"], int(ev["new"], 16)) == ("dep_signal[0]", BAD_SIGNAL) and int(ev["old"], 16)
    elif name == "corrupt-read-index":
        assert ev["field"] == "read_dispatch_id" and ev["new"] == ev["read"] + INDEX_JUMP and ev["tries"] >= 1
    else:
        assert ev["field"] == "doorbell" and ev["new"] == ev["write"] + INDEX_JUMP > ev["old"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_corrupted_queue_fails_alone_with_its_status(name, tmp_path):
    status, error = CASES[name]
    # the shipped scenario with its host_error bound (1.0 s) raised: asserted is the error, after the corruption
    path, bounds = untimed(name, tmp_path)
    r, rep, hist = run(path, tmp_path, "--no-plot")
    show_latencies(rep, bounds)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["kind"] == name.replace("-", "_")
    ev = f["evidence"]
    _what_was_written(name, ev)
    (qe,) = of(hist, "queue_error")             # one queue failed: the corrupted one, of the workload
    assert (qe["queue"], qe["owner_pid"], qe["status"]) == (ev["queue"], rep["workload"]["pid"], status)
    if "packet" in ev:                          # a packet field: the queue failed at that very packet
        assert qe["error_packet_id"] == ev["packet"]
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert [(e["stream"], e["name"]) for e in errs] == [(0, error)], errs
    assert status in errs[0]["message"] and errs[0]["t_s"] >= f["t_s"]
    after = [h for h in of(hist, "workload") if h["ev"] == "sync" and h["stream"] == 1 and h["t_s"] > f["t_s"]]
    assert after and rep["promises"][2]["details"]["served"] == {"1": len(after)}
    assert not of(hist, "role_died")
    assert verdicts(rep) == {(0, "queue_error"): "HELD", (1, "host_error"): "HELD", (2, "others_served"): "HELD",
                             (3, "roles_alive"): "HELD"}
    assert rep["outputs"]["plot"] is None and "--no-plot" in rep["outputs"]["plot_note"]
