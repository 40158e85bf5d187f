"""`hdemu run` with MIOpen binary-cache faults (issue 12, item 6): the built-in workload ``miopen`` (a
warm handle answering from its invoker cache, a fresh handle each round going through the binary cache,
every result against a float64 reference), the fault kind ``miopen_db`` (``_kerndb.inject_fault`` in the
run's dbfault process) and the ``miopen_*`` promises. Each shipped scenario runs from the CLI and its
report.json is checked against its history.jsonl (md5-mismatch and the broken one from the CLI, the others
through the runner API in this process, as the plugin runs them); the new keys are validated without a
platform."""
import json
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from hostside.faults import format_report, load_scenario, load_scenario_text, run_scenario
from hostside.faults._pytest_plugin import FaultRunner, miopen_db, promise, scenario_toml
from hostside.faults._schema import DB_FAULTS, MIOPEN_STATUSES
from hostside.miopen import miopenStatus_t
from hostside.miopen._kerndb import FAULTS
from shm_layout.errors import ConfigError
from tests.scenarios.runkit import check_consistent, of, run, verdicts

pytestmark = pytest.mark.timeout(150)

BASE = """
[platform]
agents = 1
[workload]
builtin = "miopen"
[[fault]]
kind = "miopen_db"
how = "locked"
after_calls = 5
duration_s = 0.5
[[promise]]
kind = "miopen_busy_waits"
[[promise]]
kind = "miopen_recovered"
"""


def test_the_fault_names_are_kerndbs_and_the_statuses_miopens():
    assert DB_FAULTS == FAULTS
    assert MIOPEN_STATUSES == tuple(miopenStatus_t.__members__)


@pytest.mark.parametrize("edit, message", [
    (('how = "locked"\n', ""), "s.toml: fault[0]: kind 'miopen_db' needs how (one of 'malformed_file', 'md5_mismatch'"),
    (('how = "locked"', 'how = "melted"'), "s.toml: fault[0].how must be 'malformed_file', 'md5_mismatch', 'locked' or "
                                           "'readonly_dir', not 'melted'"),
    (('how = "locked"', 'how = "locked"\ntarget = "cp0"'), "s.toml: fault[0]: target of kind 'miopen_db' is the "
                                                           "workload's MIOpen binary cache"),
    (('kind = "miopen_db"', 'kind = "kill"\ntarget = "cp0"'), "s.toml: fault[0]: duration_s does not apply to kind 'kill'"),
    (('kind = "miopen_db"\nhow = "locked"\nafter_calls = 5\nduration_s = 0.5',
      'kind = "kill"\ntarget = "cp0"\nhow = "locked"\nat_s = 1.0'), "s.toml: fault[0]: how does not apply to kind 'kill'"),
    (('builtin = "miopen"', 'builtin = "launch_loop"'), "s.toml: fault[0].after_calls needs a workload that makes MIOpen"),
    (('builtin = "miopen"', 'builtin = "launch_loop"'), "s.toml: fault[0] (miopen_db) acts on the workload's MIOpen binary"),
    (('builtin = "miopen"', 'builtin = "launch_loop"'), "s.toml: promise[0] (miopen_busy_waits) is about MIOpen calls"),
    (("after_calls = 5", "after_calls = 0"), "s.toml: fault[0].after_calls must be greater than or equal to 1"),
    (("after_calls = 5", "after_calls = 5\nat_s = 1.0"), "s.toml: fault[0]: needs exactly one of at_s, after_dispatches"),
    (('how = "locked"', 'how = "md5_mismatch"'), "s.toml: promise[0] (miopen_busy_waits) is about a miopen_db fault "
                                                 "with how = 'locked', not 'md5_mismatch'"),
    (("duration_s = 0.5\n", ""), "s.toml: promise[1] (miopen_recovered) is about a fault that is released: fault[0] "
                                 "needs duration_s"),
    (('kind = "miopen_recovered"', 'kind = "miopen_error"'), "s.toml: promise[1]: kind 'miopen_error' needs error"),
    (('kind = "miopen_recovered"', 'kind = "miopen_error"\nerror = "x"\nstatus = "miopenStatusBroken"'),
     "s.toml: promise[1].status must be a miopenStatus_t name such as 'miopenStatusInternalError', not "
     "'miopenStatusBroken'"),
    (('builtin = "miopen"', 'builtin = "miopen"\nshapes = [[2, 4, 1, 8]]'),
     "s.toml: workload: shapes[0] [2, 4, 1, 8]: every spatial length must be at least 2"),
    (('builtin = "miopen"', 'builtin = "miopen"\nshapes = [[2, 4, 8]]'), "s.toml: workload.shapes[0] list should have "
                                                                         "at least 4 items"),
    (('builtin = "miopen"', 'builtin = "miopen"\nshapes = []'), "s.toml: workload.shapes list should have at least 1"),
    (('builtin = "miopen"', 'builtin = "miopen"\ndb_busy_limit_s = -1.0'), "s.toml: workload.db_busy_limit_s must be "
                                                                          "greater than or equal to 0"),
])
def test_miopen_keys_are_validated_naming_the_key(edit, message):
    load_scenario_text(BASE, "s.toml")
    text = BASE.replace(*edit)
    assert text != BASE
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(text, "s.toml")
    assert any(ln.startswith(message) for ln in str(exc.value).splitlines()), str(exc.value)


def test_a_fault_without_duration_and_the_plugins_helper_validate():
    text = BASE.replace("duration_s = 0.5\n", "").replace('kind = "miopen_recovered"', 'kind = "miopen_no_error"')
    sc, _cfg = load_scenario_text(text, "s.toml")
    assert sc.fault[0].duration_s is None and sc.workload.shapes == [[2, 4, 8, 8]]
    assert FaultRunner.miopen_db is not None
    data = {"name": "t", "workload": {"builtin": "miopen", "iterations": 3, "shapes": [[1, 2, 4, 4, 4]]},
            "fault": [miopen_db("md5_mismatch", after_calls=3), miopen_db("locked", 0.2, at_s=1.0)],
            "promise": [promise("miopen_error", error="Possible database corruption"), promise("miopen_others_served")]}
    sc, _cfg = load_scenario_text(scenario_toml(data), "t")
    assert [(f.kind, f.how, f.duration_s, f.trigger) for f in sc.fault] == [
        ("miopen_db", "md5_mismatch", None, ("after_calls", 3)), ("miopen_db", "locked", 0.2, ("at_s", 1.0))]


def run_api(name: str, tmp_path: Path):
    """The scenario through the runner API in this process (as the pytest plugin runs it: one
    interpreter start less than the CLI), returned as ``runkit.run`` returns the CLI's run."""
    sc, cfg, _p = load_scenario(name)
    out = tmp_path / f"run-{name}"
    rep = run_scenario(sc, cfg, out, progress=lambda s: None, plot=False)
    hist = [json.loads(ln) for ln in (out / "history.jsonl").read_text().splitlines() if ln.strip()]
    r = subprocess.CompletedProcess([name], 0 if rep["verdict"] == "HELD" else 1, format_report(rep) + "\n", "")
    return r, rep, hist


def _calls(hist, **match):
    return [h for h in of(hist, "workload") if h["ev"] == "miopen_call" and all(h.get(k) == v for k, v in match.items())]


def _start(c):
    return c["t_s"] - c["dur_s"]


def _common(tmp_path, name, hist, rep):
    """What every run of the miopen workload shows: its cache in the run directory, the warm handle
    answered from its invoker cache from round 2 on, every returned result checked, the fault released."""
    (db,) = [h for h in of(hist, "workload") if h["ev"] == "miopen_db"]
    run_dir = (tmp_path / f"run-{name}").resolve()
    assert Path(db["path"]).is_relative_to(run_dir / "miopen" / "cache") and db["system"] is None
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["path"] == db["path"] and f["how"] == f["evidence"]["how"]
    warm = _calls(hist, handle="warm")
    assert warm and all(c["ok"] and c["verified"] for c in warm)
    assert {c["level"] for c in warm if c["round"] > 1} == {"invoker_cache"}
    assert all(c["verified"] for c in _calls(hist) if c["ok"])
    (end,) = of(hist, "fault_end", index=0)
    assert end["released"] is True
    return f, _calls(hist, handle="fresh")


#: The promises of the scenarios whose fault makes fresh calls fail, all held.
ERROR_HELD = {(0, "miopen_error"): "HELD", (1, "miopen_others_served"): "HELD", (2, "roles_alive"): "HELD"}


def _failing_after_the_fault(tmp_path, name):
    """Run ``name`` in process, check what every run shows; (history, fault, the fresh handle's calls
    that started after the fault, which must all have failed)."""
    r, rep, hist = run_api(name, tmp_path)
    check_consistent(r, rep, hist)
    f, fresh = _common(tmp_path, name, hist, rep)
    after = [c for c in fresh if _start(c) >= f["t_s"]]
    assert after and not [c for c in after if c["ok"]]
    assert verdicts(rep) == ERROR_HELD
    return hist, f, after


@pytest.mark.slow
def test_md5_mismatch_the_load_raises_corruption_others_and_the_platform_fine(tmp_path):
    r, rep, hist = run("miopen-md5-mismatch", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    f, fresh = _common(tmp_path, "miopen-md5-mismatch", hist, rep)
    assert f["evidence"]["records"] >= 4                  # round 1 stored 4 programs (4-D and 5-D, fwd and bwd)
    failed = [c for c in fresh if not c["ok"]]
    assert failed and all(c["t_s"] >= f["t_s"] for c in failed)
    assert not [c for c in fresh if c["ok"] and c["level"] == "binary_cache_user" and _start(c) >= f["t_s"]]
    assert {(c["error"]["status"], c["error"]["message"]) for c in failed} == {
        ("miopenStatusInternalError", "miopenStatusInternalError: Possible database corruption")}
    assert all(c["api"] == "forward" and c["level"] is None for c in failed)     # no indices: no backward after it
    assert {c["config"] for c in _calls(hist, handle="warm")} == {"max_2x4x8x8_k2_s2", "max_1x2x4x6x6_k2_s2"}
    # each round's new pooling is not in the db: compiled and stored, the fault notwithstanding
    new = [c for c in fresh if c["config"].startswith(("max_1x2x8x8", "avg_1x2x8x8")) and _start(c) > f["t_s"]]
    assert new and all(c["ok"] and c["counters"]["binary_cache_stores"] == 1 for c in new)
    (done,) = [h for h in of(hist, "workload") if h["ev"] == "done"]
    assert done["failed"][0] == 0 and done["failed"][1] == len(failed) and rep["workload"]["exit_code"] == 1
    assert verdicts(rep) == {**ERROR_HELD, (3, "probe_served"): "HELD"}
    assert rep["promises"][0]["details"]["failed"] == len(failed)


@pytest.mark.slow
def test_malformed_file_every_access_raises_sqlite_error_file_restored(tmp_path):
    # loads and stores alike fail: no fallback to compiling
    hist, f, after = _failing_after_the_fault(tmp_path, "miopen-malformed-file")
    assert {c["error"]["message"] for c in after} == {
        "miopenStatusInternalError: Internal error while accessing SQLite database: file is not a database"}
    (end,) = of(hist, "fault_end", index=0)
    assert end["records"] == f["evidence"]["records"] >= 3      # the file put back as it was
    c = sqlite3.connect(f["evidence"]["path"])
    try:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        c.close()


@pytest.mark.slow
def test_readonly_dir_the_wal_pragma_fails_mode_restored(tmp_path):
    hist, f, after = _failing_after_the_fault(tmp_path, "miopen-readonly-dir")
    assert {c["error"]["message"] for c in after} == {"miopenStatusInternalError: Internal error while accessing "
                                                      "SQLite database: attempt to write a readonly database"}
    d = Path(f["evidence"]["dir"])
    assert d == Path(f["evidence"]["path"]).parent and d.stat().st_mode & stat.S_IWUSR   # released: writable again


@pytest.mark.slow
def test_locked_a_store_waits_for_the_release_and_succeeds(tmp_path):
    r, rep, hist = run_api("miopen-locked", tmp_path)
    check_consistent(r, rep, hist)
    f, fresh = _common(tmp_path, "miopen-locked", hist, rep)
    waited = [c for c in _calls(hist) if c["db"]["busy_waits"]]
    assert waited and all(c["handle"] == "fresh" and c["ok"] and c["db"]["stores"] == 1 for c in waited)
    assert _start(waited[0]) < f["end_t_s"] < waited[0]["t_s"]         # it waited through the release
    # nothing failed or timed out: the loads made during the lock answered too (WAL readers are not blocked)
    assert not [c for c in _calls(hist) if c["db"]["timeouts"] or not c["ok"]]
    assert [c for c in fresh if c["level"] == "binary_cache_user" and c["t_s"] > f["end_t_s"]]
    assert rep["promises"][0]["details"]["busy_waits"] == sum(c["db"]["busy_waits"] for c in waited)
    assert verdicts(rep) == {(0, "miopen_busy_waits"): "HELD", (1, "miopen_recovered"): "HELD",
                             (2, "miopen_no_error"): "HELD", (3, "miopen_others_served"): "HELD",
                             (4, "roles_alive"): "HELD"}


@pytest.mark.slow
def test_a_lock_held_past_the_busy_limit_times_out_and_the_broken_promise_fails(tmp_path):
    r, rep, hist = run("miopen-locked-timeout", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)                              # exit 1: a promise FAILED
    assert rep["verdict"] == "FAILED"
    timed_out = [c for c in _calls(hist) if c["db"]["timeouts"]]
    assert timed_out and all(c["db"]["busy_wait_s"] >= 0.3 and c["counters"]["binary_cache_errors"] == 1
                             for c in timed_out)
    (line,) = timed_out[0]["log"]
    assert line["function"] == "SaveBinary" and "Timeout while waiting for Database: " in line["message"]
    assert verdicts(rep) == {(0, "miopen_busy_waits"): "HELD", (1, "miopen_error"): "HELD",
                             (2, "miopen_no_error"): "FAILED"}
    broken = rep["promises"][2]
    assert broken["details"]["failed"] == len(timed_out)
    assert f"{len(timed_out)} of " in broken["evidence"] and "Timeout while waiting for Database" in broken["evidence"]
    assert "FAILED miopen_no_error" in r.stdout
    assert json.loads((tmp_path / "run-miopen-locked-timeout" / "report.json").read_text())["verdict"] == "FAILED"
