"""The ``miopen`` study (hostside/studies/_miopen.py) at ``--small``, run through its ``run()``: its two
CSVs, a PNG that is not blank, the summary with its figures, and what holds on any machine: the cold
process compiles and stores, the warm-db process compiles nothing but searches and builds an invoker,
the second call is an invoker hit, two processes filling one .ukdb both succeed and leave an intact db
with every record; every result equals the numpy reference; the caches stay in the run directory and
no worker leaves a /dev/shm segment. No timed assertion: the claim's factor is reported, not tested."""
from __future__ import annotations

import csv
import json
import sqlite3

import numpy as np
import pytest
from matplotlib import image

from hostside.studies import _miopen
from hostside.studies._common import Study
from shm_layout.segments import list_segments

pytestmark = pytest.mark.timeout(150)


def _rows(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert rows, f"{path} has no rows"
    return rows


def test_small_study_writes_its_tables_figure_and_summary(tmp_path):
    out = tmp_path / "miopen"
    s = _miopen.run(Study("miopen", str(out), small=True))
    assert s == json.loads((out / "summary.json").read_text())
    assert s["study"] == "miopen" and s["small"] is True and s["claim"] == _miopen.CLAIM
    assert isinstance(s["claim_held"], bool)
    assert sorted(s["files"]) == ["miopen.png", "miopen_concurrent.csv", "miopen_first_call.csv", "summary.json"]

    rows = _rows(out / "miopen_first_call.csv")
    f = s["figures"]
    assert f["repeats"] == 2 and len(rows) == 2 * 2 * 3 == f["calls"] == f["cases_as_expected"]
    for r in rows:
        assert r["correct"] == "True", r
        want = {"cold": ("compiled", "1", "1"), "warm_db": ("binary_cache_user", "0", "1"),
                "warm_invoker": ("invoker_cache", "0", "0")}[r["case"]]
        assert (r["level"], r["compilations"], r["solver_searches"]) == want, r
        assert r["case"] == ("warm_invoker" if r["call"] != "1" else r["process"])
        parts = sum(float(r[f"{n}_ms"]) for n in _miopen.STEP_NAMES)
        assert parts == pytest.approx(float(r["wall_ms"]), rel=1e-3, abs=2e-3)
    warm = [r for r in rows if r["case"] == "warm_db"]
    assert all(r["invokers_built"] == "1" and r["binary_cache_hits_user"] == "1" for r in warm)
    assert all(float(r["compile_ms"]) == 0 and float(r["hipModuleLoadData_ms"]) > 0 for r in warm)
    assert f["warm_db_compilations"] == 0 and f["warm_db_solver_searches"] == f["warm_db_invokers_built"] == 2
    assert f["warm_db_first_call_ms"] > 0 and f["warm_invoker_call_ms"] > 0
    assert set(f["warm_db_split_ms"]) == set(_miopen.STEP_NAMES)

    conc = _rows(out / "miopen_concurrent.csv")
    assert [r["process"] for r in conc] == ["concurrent_1", "concurrent_2"]
    for r in conc:
        assert r["correct"] == r["configs"] == r["compilations"] == r["stores"] == "4", r
        assert r["errors"] == r["timeouts"] == "0" and int(r["busy_waits"]) >= 0
    assert f["concurrent_ok"] is True and f["concurrent_integrity"] == "ok" and f["concurrent_bad_records"] == 0
    assert f["concurrent_records"] == f["concurrent_expected_records"] == 8
    assert f["concurrent_busy_waits"] == [int(r["busy_waits"]) for r in conc]

    # the caches are in the run directory, one .ukdb per cache dir, MIOpen's schema
    ukdbs = sorted(out.rglob("*.ukdb"))
    assert [p.parent.parent.name for p in ukdbs] == ["cache-0", "cache-1", "cache-concurrent"]
    c = sqlite3.connect(str(ukdbs[-1]))
    try:
        assert c.execute("SELECT count(*) FROM kern_db").fetchone()[0] == 8
    finally:
        c.close()

    png = out / "miopen.png"
    assert png.stat().st_size < 200_000
    px = image.imread(str(png))[..., :3]
    assert px.shape[0] > 100 and px.shape[1] > 100 and float(px.std()) > 0.05
    assert len(np.unique((px.reshape(-1, 3) * 255).astype(np.uint8), axis=0)) > 50

    pids = {int(r["pid"]) for r in rows + conc}
    assert len(pids) == 2 * 2 + 2                        # every process was a new one
    assert not [n for n, pid, _t in list_segments() if pid in pids], "a worker left /dev/shm segments"


def test_worker_env_points_every_cache_into_the_run_dir(tmp_path, monkeypatch):
    for var in ("MIOPEN_DISABLE_CACHE", "MIOPEN_LOG_LEVEL", "HDEMU_PLATFORM", "HDEMU_CONFIG"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", "/home/someone/.cache/miopen")
    env = _miopen.worker_env(tmp_path / "c", tmp_path)
    assert env["MIOPEN_CUSTOM_CACHE_DIR"] == str(tmp_path / "c")
    assert env["MIOPEN_USER_DB_PATH"].startswith(str(tmp_path))
    assert env["MIOPEN_SYSTEM_DB_PATH"].startswith(str(tmp_path))
    assert not {"MIOPEN_DISABLE_CACHE", "MIOPEN_LOG_LEVEL", "HDEMU_PLATFORM", "HDEMU_CONFIG"} & set(env)
    assert env["PYTHONPATH"].split(":")[0] == str(_miopen.ROOT)


def test_the_split_adds_up_and_the_cases_are_checked():
    rec = {"steps": {"network_config_s": 0.001, "search_s": 0.002, "prepare_invoker_s": 0.050,
                     "binary_cache_load_s": 0.005, "module_load_s": 0.040, "run_s": 0.003, "total_s": 0.0565}}
    sp = _miopen._steps(rec, 0.060)
    assert set(sp) == set(_miopen.STEP_NAMES)
    assert sp["invoker_build"] == pytest.approx(0.005) and sp["api_checks"] == pytest.approx(0.0035)
    assert sp["other"] == pytest.approx(0.0005) and sum(sp.values()) == pytest.approx(0.060)
    row = {"case": "warm_db", "correct": True, "binary_cache_errors": 0, "level": "binary_cache_user",
           "compilations": 0, "binary_cache_hits_user": 1, "solver_searches": 1, "invokers_built": 1}
    assert _miopen._case_ok(row)
    assert not _miopen._case_ok(dict(row, compilations=1))        # a warm db that compiled
    assert not _miopen._case_ok(dict(row, case="warm_invoker"))   # an invoker hit does not search
    assert not _miopen._case_ok(dict(row, correct=False))


def test_a_failing_worker_is_a_clear_error(tmp_path):
    env = _miopen.worker_env(tmp_path / "c", tmp_path)
    with pytest.raises(RuntimeError, match=r"(?s)the bad worker failed \(exit 1\).*ValueError: pooling mode "
                                             r"must be one of max, avg, avg_incl, not 'no-such-mode'"):
        _miopen.run_worker({"shape": [1, 1, 4, 4], "pools": [["no-such-mode", 2, 2, 0, 0, 2, 2]]}, env, "bad",
                           timeout=90)


def test_the_figure_draws_one_sample_per_case_whose_rounded_steps_exceed_its_wall(tmp_path):
    """The whisker is anchored on the median call's wall time: a single call whose rounded steps add
    up to a hair more than its wall must still draw (matplotlib refuses negative error bars)."""
    rows = []
    for case, wall in (("cold", 50.0), ("warm_db", 20.0), ("warm_invoker", 0.5)):
        r = {"case": case, "wall_ms": wall, **{f"{n}_ms": 0.0 for n in _miopen.STEP_NAMES}}
        r["hipModuleLoadData_ms"], r["launch_ms"] = wall * 0.8, wall * 0.2 + 1e-4
        rows.append(r)
    crow = [{"process": p, "busy_waits": b, "stores": 4, "binary_cache_hits_user": 0, "correct": 4, "configs": 4}
            for p, b in (("concurrent_1", 3), ("concurrent_2", 0))]
    st = Study("miopen", str(tmp_path), small=True)
    _miopen._plot(st, _miopen.medians(rows), rows, crow, {"integrity": "ok", "records": 8, "expected_records": 8})
    assert (tmp_path / "miopen.png").stat().st_size > 10_000
