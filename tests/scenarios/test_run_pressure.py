"""`hdemu run memory-pressure`: the agent's device memory taken but 64 KiB before the workload starts;
the workload's hipMalloc fails with hipErrorOutOfMemory, the CP is unaffected, and once the run frees
the memory the next client is served."""
import pytest

from tests.scenarios.runkit import check_consistent, of, run, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_memory_pressure_fails_allocations_only(tmp_path):
    r, rep, hist = run("memory-pressure", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    ev = f["evidence"]
    assert f["state"] == "injected" and f["trigger"] is None and ev["free_after"] == 65536 and ev["allocated"] > 0
    start = of(hist, "workload_start")[0]
    assert f["t_s"] < start["t_s"]                              # applied before the workload started
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert [e["name"] for e in errs] == ["hipErrorOutOfMemory"], errs
    (end,) = of(hist, "fault_end", index=0)
    assert end["freed"] == ev["allocated"] and end["t_s"] >= of(hist, "workload_exit")[0]["t_s"]
    (probe,) = of(hist, "probe")
    assert probe["ok"] and probe["t_s"] > end["t_s"]
    assert verdicts(rep) == {(0, "host_error"): "HELD", (1, "roles_alive"): "HELD", (2, "probe_served"): "HELD"}
