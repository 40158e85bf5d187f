"""Sweeps without running a point: the spec (TOML and inline) and its errors, the expansion into
points, the core lease, the progress line, the merged report (rows, mean/std, the plot) and the CLI's
option errors. The runs themselves are test_sweep_run.py."""
from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import pytest
from matplotlib import image

from hostside import studies
from hostside.studies._sweep_progress import SweepProgress
from hostside.studies._sweep_report import manifest, write_reports
from hostside.studies._sweep_spec import SpecError, load_spec, parse_inline
from hostside.studies._sweep_task import lease_cores
from tests.paths import DATA

pytestmark = pytest.mark.timeout(60)


def test_toml_spec_expands_in_order():
    spec = load_spec(str(DATA / "sweep_replay.toml"), "replay")
    assert spec.study == "replay" and spec.repeats == 2 and spec.mode == "point"
    pts = spec.points()
    assert [k for k, _p in pts] == [f"footprint_kib={f},passes=2,dispatches=2,fence_windows=1"
                                    for f in (64, 128, 256, 300000)]
    assert pts[0][1] == {"footprint_kib": 64, "passes": 2, "dispatches": 2, "fence": True, "fence_windows": 1}
    assert spec.varied() == ["footprint_kib"] and spec.x_axis() == "footprint_kib"


def test_inline_spec_types_and_product():
    spec = parse_inline("arch=a2a3,a5; records_per_buffer=16,64; repeats=3; figures=us_per_buffer", "coherence")
    assert spec.repeats == 3 and spec.figures == ["us_per_buffer"]
    assert [p["records_per_buffer"] for _k, p in spec.points()] == [16, 64, 16, 64]
    assert [p["arch"] for _k, p in spec.points()] == ["a2a3", "a2a3", "a5", "a5"]
    assert parse_inline("fence=false,true", "replay").axes == {"fence": [False, True]}
    whole = parse_inline("small=true; repeats=2", "graphs")      # graphs has only the whole-study mode
    assert whole.whole and whole.points() == [("small=true", {"small": True})]


@pytest.mark.parametrize("text,study,msg", [
    ("nosuch=1", "replay", "replay has no axis 'nosuch'"),
    ("passes=two", "replay", "axis 'passes' of replay takes int values, not 'two'"),
    ("passes", "replay", "'passes' is not key=value"),
    ("passes=1,1", "replay", "repeats a value"),
    ("repeats=0", "replay", "repeats must be an integer >= 1"),
    ("mode=point", "graphs", "has no point mode"),
    ("passes=1; x=fence", "replay", "x = 'fence' is not one of the sweep's axes"),
])
def test_inline_errors_name_what_is_wrong(text, study, msg):
    with pytest.raises(SpecError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        parse_inline(text, study)


def test_toml_errors(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('study = "coherence"\n[axes]\nrecords = [1000]\n')
    with pytest.raises(SpecError, match="the sweep is for study 'coherence', not 'replay'"):
        load_spec(str(p), "replay")
    p.write_text('study = "replay"\nrepeat = 2\n')
    with pytest.raises(SpecError, match="unknown key.*'repeat'"):
        load_spec(str(p), "replay")
    p.write_text('[axes]\npasses = ["2"]\n')
    with pytest.raises(SpecError, match="takes int values, not str '2'"):
        load_spec(str(p), "replay")
    p.write_text("[axes\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(str(p), "replay")
    with pytest.raises(SpecError, match="cannot read it"):
        load_spec(str(tmp_path / "missing.toml"), "replay")


def test_lease_is_exclusive_per_core(tmp_path):
    allowed = sorted(os.sched_getaffinity(0))
    with lease_cores(1, str(tmp_path)) as first:
        assert len(first) == 1 and first[0] in allowed
        if len(allowed) > 1:
            with lease_cores(1, str(tmp_path)) as second:
                assert second != first                 # the held core is skipped
        with pytest.raises(RuntimeError, match=f"no {len(allowed)} free cores"):
            with lease_cores(len(allowed), str(tmp_path), timeout_s=0.2):
                pass
    with lease_cores(len(allowed), str(tmp_path), timeout_s=5) as every:   # released: all free again
        assert every == allowed
    with pytest.raises(RuntimeError, match=f"needs {len(allowed) + 1} cores"):
        with lease_cores(len(allowed) + 1, str(tmp_path)):
            pass


def test_progress_line():
    buf = io.StringIO()
    prog = SweepProgress("replay", 4, 2, buf)
    prog.update(running=2)
    prog.update(running=2, result={"key": "a", "repeat": 0, "status": "ok", "duration_s": 4.0, "error": ""})
    prog.update(running=1, result={"key": "b", "repeat": 0, "status": "failed", "duration_s": 2.0,
                                   "error": "HipError: out of memory"})
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("[sweep replay] 0/4 done, 2 running, 0 failed, time left ?")
    assert "1/4 done, 2 running, 0 failed, ~6 s left" in lines[1]            # 4 s x 3 left / 2 slots
    assert "1/4 done, 1 running, 1 failed, ~3 s left" in lines[2] and "out of memory" in lines[2]


def _result(key, rep, params, status, figs, cores=(0,)):
    return {"key": key, "repeat": rep, "params": params, "status": status, "figures": figs, "host": "h",
            "cores": list(cores), "cpu_last": cores[0], "pid": 1, "started": 0.0, "duration_s": 1.0,
            "segments_left": 0, "error": "" if status == "ok" else "RuntimeError: boom", "dir": f"points/{key}"}


def test_report_merges_repeats(tmp_path):
    spec = parse_inline("footprint_kib=64,128; passes=1,2; repeats=2; figures=wall_ms,bytes_moved", "replay")
    results = []
    for i, (key, p) in enumerate(spec.points()):
        for rep in range(2):
            ok = not (i == 3 and rep == 1)
            results.append(_result(key, rep, p, "ok" if ok else "failed",
                                   {"wall_ms": 10.0 * (i + 1) + rep, "bytes_moved": 100 * i} if ok else {}))
    mf = manifest(spec, {"kind": "local", "slots": 1}, 0.0, False, 0, 8, False)
    s = write_reports(spec, str(tmp_path), results, mf)
    assert s["ok"] == 7 and [f["key"] for f in s["failed"]] == ["footprint_kib=128,passes=2"]
    with open(tmp_path / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 and list(rows[0])[:5] == ["point", "key", "repeat", "footprint_kib", "passes"]
    assert rows[7]["status"] == "failed" and rows[7]["error"] == "RuntimeError: boom" and rows[7]["wall_ms"] == ""
    with open(tmp_path / "sweep_summary.csv") as f:
        merged = list(csv.DictReader(f))
    assert float(merged[0]["wall_ms_mean"]) == 10.5 and float(merged[0]["wall_ms_std"]) == pytest.approx(0.7071, 1e-3)
    assert merged[3]["runs_failed"] == "1" and merged[3]["wall_ms_n"] == "1" and float(merged[3]["wall_ms_std"]) == 0
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["versions"]["hdemu"] and m["versions"]["numpy"] and m["machine"]["cpu_count"] >= 1
    assert m["executor"] == {"kind": "local", "slots": 1, "cores_per_point": 1} and m["when"]["started"]
    px = image.imread(str(tmp_path / "sweep.png"))[..., :3]
    assert float(px.std()) > 0.05 and len(np.unique((px.reshape(-1, 3) * 255).astype(np.uint8), axis=0)) > 50


def test_cli_option_errors(tmp_path, capsys):
    assert studies.main(["replay", "--executor", "dask"]) == 2
    assert "apply to a sweep: give --sweep SPEC" in capsys.readouterr().err
    assert studies.main(["replay", "--sweep", "nosuch=1"]) == 2
    assert "replay has no axis 'nosuch'" in capsys.readouterr().err
    assert studies.main(["replay", "--resume"]) == 1
    assert "--resume needs --out DIR" in capsys.readouterr().err
    assert studies.main(["replay", "--resume", "--out", str(tmp_path)]) == 1
    assert "has no sweep.json" in capsys.readouterr().err
    assert studies.main(["replay", "--sweep", "passes=1", "--small"]) == 2
    assert studies.main(["replay", "--sweep", "passes=1", "--repeats", "0", "--out", str(tmp_path / "r")]) == 2
    assert "--repeats must be >= 1" in capsys.readouterr().err
