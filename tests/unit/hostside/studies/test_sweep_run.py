"""Sweeps that run: the suite's sweep (tests/data/sweep_replay.toml: 4 replay points x 2 repeats, the
last point fails with out of memory) sequentially through the CLI, interrupted with SIGINT after two
points and completed with ``--resume``; and on a Dask ``LocalCluster`` of 2 worker processes. Both
must give the same rows (figures aside): every point's row, the failed one with its error, each
point pinned to one core of this machine (the row's cores and the CPU it last ran on), no segment
left, every point's trace returned into the sweep directory and nothing left in the workers' temp."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from hostside.studies import run_sweep
from hostside.studies._sweep_spec import load_spec
from shm_layout.segments import list_segments
from tests.paths import DATA

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SPEC = str(DATA / "sweep_replay.toml")
FOOTPRINTS = (64, 128, 256, 300000)
BAD = 300000                         # KiB: more than the point's 160 MiB device
POINT_S = 120                        # one point's bound (the spec's timeout_s) for the waits below


def _expected():
    return [(f"footprint_kib={fp},passes=2,dispatches=2,fence_windows=1", str(rep), str(fp), "2", "2", "1", "True",
             "failed" if fp == BAD else "ok", "0") for fp in FOOTPRINTS for rep in (0, 1)]


def _rows(out):
    with open(os.path.join(out, "sweep.csv")) as f:
        return list(csv.DictReader(f))


def _check(out, rows):
    """The rows, figures aside, and what must hold of every point whichever executor ran it."""
    assert [(r["key"], r["repeat"], r["footprint_kib"], r["passes"], r["dispatches"], r["fence_windows"],
             r["fence"], r["status"], r["segments_left"]) for r in rows] == _expected()
    allowed = sorted(os.sched_getaffinity(0))
    mine = {p for _n, p, _t in list_segments()}
    for r in rows:
        cores = [int(c) for c in r["cores"].split()]
        assert len(cores) == 1 and cores[0] in allowed, r          # pinned to one core of this machine
        assert int(r["cpu_last"]) == cores[0], r                   # and it ran there
        assert r["host"] == socket.gethostname()
        assert int(r["pid"]) not in mine                           # no segment of the point is left
        if int(r["footprint_kib"]) == BAD:
            assert r["error"].startswith("HipError: hipErrorOutOfMemory"), r["error"]
            continue
        assert r["error"] == ""
        want = 2 * 2 * int(r["footprint_kib"]) * 1024             # dispatches x passes x footprint
        assert int(r["bytes_moved"]) == int(r["predicted_bytes"]) == want
        trace = os.path.join(out, r["point"], "trace.json")       # the run dir came back as data
        assert os.path.getsize(trace) > 0 and json.load(open(trace))
    merged = list(csv.DictReader(open(os.path.join(out, "sweep_summary.csv"))))
    assert [m["runs_ok"] for m in merged] == ["2", "2", "2", "0"]
    assert os.path.getsize(os.path.join(out, "sweep.png")) > 10_000


def _env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HDEMU_PLATFORM", "HDEMU_CONFIG")}
    env["HDEMU_SWEEP_LOCK_DIR"] = str(tmp_path / "locks")        # this test's cores, not another test's
    env["TMPDIR"] = str(tmp_path / "wtmp")                        # where the points' run dirs live
    os.makedirs(env["TMPDIR"])
    return env


def _stored(out):
    pdir = os.path.join(out, "points")
    return [d for d in os.listdir(pdir) if os.path.exists(os.path.join(pdir, d, "result.json"))] \
        if os.path.isdir(pdir) else []


def test_sequential_interrupted_then_resumed(tmp_path):
    env, out = _env(tmp_path), str(tmp_path / "sweep")
    cmd = [sys.executable, "-m", "hostside.studies", "replay", "--out", out]
    with open(tmp_path / "first.err", "w") as err:
        p = subprocess.Popen(cmd + ["--sweep", SPEC], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, env=env, cwd=tmp_path)
        try:
            deadline = time.monotonic() + 3 * POINT_S
            while len(_stored(out)) < 2 and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            p.send_signal(signal.SIGINT)
            assert p.wait(POINT_S) == 130
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
    first = (tmp_path / "first.err").read_text()
    assert "sweep interrupted; finished points kept" in first, first[-2000:]
    assert "[sweep replay] 0/8 done, 1 running, 0 failed, time left ?" in first          # the progress display
    kept = {r["point"]: r["pid"] for r in _rows(out)}
    assert 2 <= len(kept) < 8, first[-2000:]
    assert json.loads(open(os.path.join(out, "manifest.json")).read())["interrupted"] is True

    r = subprocess.run(cmd + ["--resume"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=8 * POINT_S)
    assert r.returncode == 3, r.stderr[-2000:]                       # it ran; one point failed (twice)
    assert f"resuming: {len(kept)} kept, {8 - len(kept)} to run" in r.stderr
    assert "point footprint_kib=300000,passes=2,dispatches=2,fence_windows=1 repeat 1 failed: HipError" in r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["ok"] == 6 and len(summary["failed"]) == 2 and summary["missing"] == 0
    rows = _rows(out)
    _check(out, rows)
    # only the missing points ran again: the kept ones are the first run's (same pid)
    assert {r["point"]: r["pid"] for r in rows if r["point"] in kept} == kept
    m = json.loads(open(os.path.join(out, "manifest.json")).read())
    assert m["resumed"] is True and m["kept_from_before"] == len(kept) and m["ran_now"] == 8 - len(kept)
    assert m["executor"]["kind"] == "local"
    assert os.listdir(env["TMPDIR"]) == []                           # nothing left where the points ran


def test_dask_local_cluster_same_rows(tmp_path, monkeypatch):
    env = _env(tmp_path)
    for k in ("HDEMU_SWEEP_LOCK_DIR", "TMPDIR"):
        monkeypatch.setenv(k, env[k])        # the LocalCluster's worker processes inherit them
    out, buf = str(tmp_path / "sweep"), io.StringIO()
    s = run_sweep(load_spec(SPEC, "replay"), out, executor="dask", n_workers=2, stream=buf)
    assert s["ok"] == 6 and len(s["failed"]) == 2 and s["executor"] == "dask"
    rows = _rows(out)
    _check(out, rows)
    # two points at a time, never on the same core
    spans = [(float(r["started"]), float(r["started"]) + float(r["duration_s"]), r["cores"]) for r in rows]
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if a[0] < b[1] and b[0] < a[1]:
                assert a[2] != b[2], (a, b)
    m = json.loads(open(os.path.join(out, "manifest.json")).read())
    assert m["executor"]["scheduler"] == "LocalCluster" and m["executor"]["slots"] == 2
    assert len(m["executor"]["workers"]) == 2 and m["versions"]["distributed"]
    assert "[sweep replay] 6/8 done, 0 running, 2 failed, ~0 s left" in buf.getvalue().splitlines()[-1]
    assert os.listdir(env["TMPDIR"]) == []
    deadline = time.monotonic() + 30     # the cluster is closed: its processes go
    while _children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _children() == []


def _children():
    """This process's children but multiprocessing's resource tracker (one per process that ever
    spawned, Dask's LocalCluster did; it exits with this process)."""
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "multiprocessing.resource_tracker" not in " ".join(p.cmdline()):
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out
