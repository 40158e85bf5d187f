"""`hdemu run` with SIGKILL and SIGSTOP/SIGCONT of a role: the shipped scenarios kill-client, kill-cp
and stop-cp, run from the CLI; each test checks report.json against the run's history."""
import pytest

from tests.scenarios.runkit import check_consistent, of, run, show_latencies, untimed, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_kill_client_is_reclaimed_and_the_next_client_served(tmp_path):
    r, rep, hist = run("kill-client", tmp_path)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["pid"] == rep["workload"]["pid"]
    assert rep["workload"]["exit_code"] == -9
    assert not [h for h in of(hist, "workload") if h["ev"] == "done"]          # killed: it never finished
    (rc,) = of(hist, "reclaimed")
    assert rc["complete"] and rc["left"] == {"queues": [], "allocations": 0, "signals": 0}
    (probe,) = of(hist, "probe")
    assert probe["ok"] and probe["exit_code"] == 0
    assert verdicts(rep) == {(0, "reclaimed"): "HELD", (1, "probe_served"): "HELD", (2, "roles_alive"): "HELD"}


def test_kill_cp_ends_host_waits_in_hip_error(tmp_path):
    # the shipped scenario with its host_error bound (1.0 s) raised: asserted is the error, after the kill
    path, bounds = untimed("kill-cp", tmp_path)
    r, rep, hist = run(path, tmp_path)
    show_latencies(rep, bounds)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["pid"] == of(hist, "run")[0]["roles"]["cp0"]
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert errs and all(e["name"] == "hipErrorLaunchFailure" and e["t_s"] >= f["t_s"] for e in errs)
    assert "is gone" in errs[0]["message"]
    assert [d["role"] for d in of(hist, "role_died")] == ["cp0"]
    p = rep["promises"][0]
    assert p["details"]["latency_s"] == pytest.approx(errs[0]["t_s"] - f["t_s"], abs=1e-5)
    assert verdicts(rep) == {(0, "host_error"): "HELD", (1, "role_dead"): "HELD"}


def test_stop_cp_shorter_than_the_wait_bound_is_no_error(tmp_path):
    r, rep, hist = run("stop-cp", tmp_path)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["end_t_s"] > f["t_s"]
    # the pipeline went on after SIGCONT, and every stream verified its results at the end
    syncs = [h["t_s"] for h in of(hist, "workload") if h["ev"] == "sync"]
    assert [t for t in syncs if t > f["end_t_s"]]
    (done,) = [h for h in of(hist, "workload") if h["ev"] == "done"]
    assert done["verified"] == [True, True] and done["bad"] == 0
    assert rep["counts"]["workload_errors"] == 0 and rep["workload"]["exit_code"] == 0
    assert verdicts(rep) == {(0, "no_host_error"): "HELD", (1, "workload_completes"): "HELD",
                             (2, "roles_alive"): "HELD"}
