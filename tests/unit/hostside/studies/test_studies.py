"""Each timing study at ``--small`` through the CLI (``python -m hostside.studies``, what ``hdemu study``
runs): exit 0, its CSV with rows, a PNG that is not blank, ``summary.json`` equal to the last line
printed, and the figures that must hold whatever the machine's load (no launch lost or timed out, the
replay byte law, no drop under ``block``, a balanced DFX accounting)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from matplotlib import image

from hostside import studies

STUDY_TIMEOUT_S = 110


def _run(tmp_path, *args, timeout=STUDY_TIMEOUT_S):
    env = dict(os.environ)
    env.pop("HDEMU_PLATFORM", None)
    env.pop("HDEMU_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "hostside.studies", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)


def _study(tmp_path, name):
    out = tmp_path / name
    r = _run(tmp_path, name, "--small", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary == json.loads((out / "summary.json").read_text())
    assert summary["study"] == name and summary["small"] is True
    assert f"[{name}]" in r.stderr                       # the progress display
    return out, summary


def _rows(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert rows, f"{path} has no rows"
    return rows


def _not_blank(path):
    assert path.stat().st_size < 200_000, f"{path} is {path.stat().st_size} bytes"
    px = image.imread(str(path))[..., :3]
    assert px.shape[0] > 100 and px.shape[1] > 100
    assert float(px.std()) > 0.05, f"{path} looks blank (pixel std {px.std():.4f})"
    # more than the background and one colour: lines, labels and markers
    assert len(np.unique((px.reshape(-1, 3) * 255).astype(np.uint8), axis=0)) > 50


pytestmark = pytest.mark.slow


def test_dispatch(tmp_path):
    out, s = _study(tmp_path, "dispatch")
    rows = _rows(out / "dispatch.csv")
    _rows(out / "dispatch_histograms.csv")
    _not_blank(out / "dispatch.png")
    assert (out / "trace.json").stat().st_size > 0
    assert {r["sweep"] for r in rows} == {"base", "queues", "roles_per_core"}
    for r in rows:      # hdemu's waits: nothing lost, nothing timed out, whatever the load
        assert int(r["errors"]) == 0, r["first_error"]
        assert int(r["launches_done"]) == int(r["launches_requested"])
        assert int(r["d2f_n"]) > 0 and int(r["l2c_n"]) > 0 and int(r["rt_n"]) == int(r["launches_done"])
        assert float(r["d2f_p50_us"]) <= float(r["l2c_p99_us"])
    assert s["claim_held"] is True


def test_backpressure(tmp_path):
    out, s = _study(tmp_path, "backpressure")
    rows = _rows(out / "backpressure.csv")
    _not_blank(out / "backpressure.png")
    assert {(r["policy"], r["pool_lane0"], r["lane"]) for r in rows} == {
        (p, n, ln) for p, n in (("block", "1"), ("common_mode", "1"), ("block", "8")) for ln in ("0", "1")}
    for r in rows:
        assert r["balanced"] == "True", r
        assert int(r["dropped"]) == 0, r                # block and common_mode wait, they do not drop
        assert int(r["tasks_joined"]) > 0, r            # both lanes profiled their stream
    # Whether the one-buffer lane waits at a switch is the scheduler's to decide, not the protocol's: on
    # a loaded 2-core machine the collector, woken by the push, can preempt the lane, drain and return
    # the buffer before the lane looks for it (a CI run saw 0 stalls in 25 switches under block). So
    # the stall time is reported (the study's claim_held), not asserted; what the policy decides is:
    for r in rows:
        assert float(r["stall_ms"]) >= 0 and int(r["expired"]) == 0, r      # every wait ended in a release
        if r["policy"] == "block":
            assert int(r["common_stalls"]) == 0, r      # a per-lane policy never parks at the common gate


def test_graphs(tmp_path):
    out, s = _study(tmp_path, "graphs")
    rows = _rows(out / "graphs.csv")
    _not_blank(out / "graphs.png")
    assert [int(r["nodes"]) for r in rows] == [1, 10, 100]
    assert all(float(r["graph_host_us_per_kernel"]) > 0 for r in rows)
    # per kernel, a 100-node graph costs the host less than a 1-node one
    assert float(rows[-1]["graph_host_us_per_kernel"]) < float(rows[0]["graph_host_us_per_kernel"])


def test_replay(tmp_path):
    out, s = _study(tmp_path, "replay")
    rows = _rows(out / "replay.csv")
    fence = _rows(out / "copy_fence.csv")
    _not_blank(out / "replay.png")
    for r in rows:      # the byte law is exact: one snap and passes - 1 restores of the footprint
        assert int(r["bytes_moved"]) == int(r["predicted_bytes"]), r
    assert {(r["fence"], r["copies_beside"]) for r in fence} == {(f, c) for f in ("True", "False")
                                                                 for c in ("True", "False")}
    assert s["claim_held"] is True


def test_coherence(tmp_path):
    out, s = _study(tmp_path, "coherence")
    prim = _rows(out / "coherence_primitive.csv")
    _rows(out / "coherence_pipeline.csv")
    _not_blank(out / "coherence.png")
    svm = [r for r in prim if r["svm"] == "True"]
    non = [r for r in prim if r["svm"] == "False"]
    assert len(svm) == len(non) == 4
    # a non-SVM read of a buffer's records is a copy; under SVM it is a no-op whatever the size
    big_svm = max(svm, key=lambda r: int(r["records_per_buffer"]))
    big_non = max(non, key=lambda r: int(r["records_per_buffer"]))
    assert float(big_non["read_records_ns"]) > float(big_svm["read_records_ns"])


def test_cli_errors_and_list(tmp_path, capsys):
    assert studies.main(["nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown study 'nosuch'" in err and "dispatch" in err
    assert studies.main([]) == 2 and "name a study" in capsys.readouterr().err
    assert studies.main(["_worker", "nosuch", "{}"]) == 2 and "usage" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown study"):
        studies.run_study("nosuch", str(tmp_path))
    # `hdemu study` execs the studies package (the platform layer never imports it)
    r = subprocess.run([sys.executable, "-m", "hostside.platform.cli", "study", "--list"], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0
    assert all(n in r.stdout for n in ("dispatch", "backpressure", "graphs", "replay", "coherence"))
