"""`hdemu run` on the DFX pipeline: the collector SIGKILLed or SIGSTOPped, a pool shrunk through the
platform config, and the scenario broken on purpose (policy drop, a 1-buffer pool, a promise of zero
loss) whose report must say FAILED with the drops as evidence."""
import pytest

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


def test_shrunk_pool_with_policy_block_loses_nothing(tmp_path):
    r, rep, hist = run("shrunk-pool", tmp_path)
    check_consistent(r, rep, hist)
    shrink = rep["faults"][0]
    assert shrink["kind"] == "shrink_pool" and shrink["evidence"]["buffers"] == 1
    lanes = of(hist, "dfx_lanes")[0]["lanes"]
    assert lanes[0]["stalls"] >= 1                     # the starved writer waited at its gate
    assert sum(p["dropped"] for p in _pools(hist)) == 0
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "HELD"}


def test_broken_on_purpose_zero_loss_promise_fails_with_evidence(tmp_path):
    r, rep, hist = run("shrunk-pool-drop", tmp_path)
    check_consistent(r, rep, hist)
    assert r.returncode == 1
    pools = _pools(hist)
    dropped = sum(p["dropped"] for p in pools)
    assert dropped > 0 and all(p["collected"] + p["dropped"] == p["total"] for p in pools)
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "FAILED"}
    p = rep["promises"][1]
    assert p["details"]["dropped"] == dropped and f"{dropped} of " in p["evidence"]
    assert "FAILED dfx_no_loss" in r.stdout and "verdict: FAILED" in r.stdout
