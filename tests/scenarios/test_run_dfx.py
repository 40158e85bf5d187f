"""`hdemu run` on the DFX pipeline: the collector SIGKILLed or SIGSTOPped, a pool shrunk through the
platform config, and the scenario broken on purpose (policy drop, a 1-buffer pool, a promise of zero
loss) whose report must say FAILED with the drops as evidence."""
import re

import pytest

from hostside.faults import builtin_scenarios
from tests.scenarios.runkit import check_consistent, of, run, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def _pools(hist):
    pools = of(hist, "dfx_pool")
    assert pools
    return pools


def test_kill_collector_balances_after_salvage(tmp_path):
    r, rep, hist = run("kill-collector", tmp_path)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["trigger"] == {"after_records": 2000}
    assert [d["role"] for d in of(hist, "role_died")][:1] == ["collector"]
    assert all(p["collected"] + p["dropped"] == p["total"] for p in _pools(hist))
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "role_dead"): "HELD", (2, "workload_completes"): "HELD"}


def test_stop_collector_under_the_backstop_loses_nothing(tmp_path):
    r, rep, hist = run("stop-collector", tmp_path)
    check_consistent(r, rep, hist)
    pools = _pools(hist)
    assert sum(p["dropped"] for p in pools) == 0
    # every synthetic record (2 lanes x 2 kinds x synthetic_records) arrived; the stall kind carries the stalls
    assert sum(p["total"] for p in pools if p["kind"] != "stall") == 2 * 2 * 20000
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "HELD", (2, "roles_alive"): "HELD"}


#: synthetic_records of the shrunk-pool scenarios' tmp copies. Their collector stop (0.3 s, after 2000 records)
#: must land while lane 0 still writes, or it finds nothing to stall (or drop): the lanes are rate-limited
#: (40000 records a second a thread), so 20000 of each of 2 kinds end about 1 s after go, and a run loop
#: late by that much on a loaded machine missed them. 60000 give the fault 3 s to land (a margin, the run
#: 1.5-2 s longer); the block test checks every one of them arrived.
RECORDS = 60000


def longer_writing(name: str, tmp_path) -> str:
    """A copy of the shipped scenario ``name`` in ``tmp_path`` (the same file name: ``run`` writes to the same
    ``run-<name>`` folder) whose lanes write ``RECORDS`` records of each kind; its path."""
    src = builtin_scenarios()[name]
    text, n = re.subn(r"(?m)^synthetic_records = 20000$", f"synthetic_records = {RECORDS}", src.read_text())
    assert n == 1, f"{src}: no synthetic_records = 20000 to raise"
    dst = tmp_path / src.name
    dst.write_text(text)
    return str(dst)


def test_shrunk_pool_with_policy_block_loses_nothing(tmp_path):
    r, rep, hist = run(longer_writing("shrunk-pool", tmp_path), tmp_path)
    check_consistent(r, rep, hist)
    shrink = rep["faults"][0]
    assert shrink["kind"] == "shrink_pool" and shrink["evidence"]["buffers"] == 1
    lanes = of(hist, "dfx_lanes")[0]["lanes"]
    assert lanes[0]["stalls"] >= 1                     # the starved writer waited at its gate
    pools = _pools(hist)
    assert sum(p["dropped"] for p in pools) == 0
    assert sum(p["total"] for p in pools if p["kind"] != "stall") == 2 * 2 * RECORDS
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "HELD"}


def test_broken_on_purpose_zero_loss_promise_fails_with_evidence(tmp_path):
    r, rep, hist = run(longer_writing("shrunk-pool-drop", tmp_path), tmp_path)
    check_consistent(r, rep, hist)
    assert r.returncode == 1
    pools = _pools(hist)
    dropped = sum(p["dropped"] for p in pools)
    assert dropped > 0 and all(p["collected"] + p["dropped"] == p["total"] for p in pools)
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "FAILED"}
    p = rep["promises"][1]
    assert p["details"]["dropped"] == dropped and f"{dropped} of " in p["evidence"]
    assert "FAILED dfx_no_loss" in r.stdout and "verdict: FAILED" in r.stdout
