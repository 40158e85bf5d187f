"""Study ``miopen``: where the first call of ``miopenPoolingForward`` spends its time, cold, with a warm
binary cache in a new process, and with a warm invoker; and two processes filling one ``.ukdb``.

What MIOpen users fight (ROCm/rocm-libraries#3553): the binary cache (the SQLite user kernel db,
``hostside/miopen/_kerndb.py``) saves a new process the compilation, but not the solver search, the
program load, ``hipModuleLoadData`` and the invoker build; only the invoker cache, which lives in the
handle, makes a call cheap. Measured per case from ``statistics()["last"]["steps"]`` of the call:

* **cold**: a new process, an empty cache directory: search, compile, store, load, build, launch;
* **warm_db**: a new process on the directory the cold one filled: zero compilations, the rest again;
* **warm_invoker**: the second call of the same process (an invoker hit).

Then **concurrent**: two processes started together on one fresh cache directory, each running
distinct pooling configs (distinct programs: each a compile and a store into the same ``.ukdb``); the
db's integrity, every record's md5 (``KernDb.load``), both processes' results against a float64 numpy
reference, and the busy waits each process counted (``KernDb.stats()``); at full size a third process
then runs every config from the filled db (all binary-cache hits, zero compilations).

Every process is a worker on an embedded platform of its own: ``_miopen_worker.py`` run by
``runpy.run_path`` (``python -c ... _worker SPEC_JSON``), so a worker imports hip, miopen and numpy
and not the studies package. ``MIOPEN_CUSTOM_CACHE_DIR`` and ``MIOPEN_USER_DB_PATH`` point into the
study's run directory (never the user's home) and the system db path at nothing, so cold is cold.
``scripts/bench_miopen.py`` uses the same workers for its first-call figures.
"""
from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from hostside.miopen import MiopenError
from hostside.miopen._kerndb import KernDb

from ._common import FIG_DPI, Progress
from ._miopen_worker import _MODES, STEP_NAMES, _steps, worker

_WORKER_FILE = str(Path(__file__).resolve().parent / "_miopen_worker.py")

__all__ = ["run", "worker", "spawn", "run_worker", "worker_env", "first_calls", "concurrent", "medians", "CLAIM",
           "CASES", "STEP_NAMES"]

ROOT = Path(__file__).resolve().parents[2]
CLAIM = ("a warm binary cache saves a new process only the compilation: its first miopenPoolingForward still "
         "searches the solvers, loads the program and rebuilds the invoker, >= 10x a warm-invoker call; two "
         "processes filling one .ukdb at once both succeed, no corruption")
CASES = ("cold", "warm_db", "warm_invoker")
WARM_OVER_INVOKER = 10.0                            # the claim's factor


def worker_env(cache_dir: Path, base: Path) -> dict:
    """The environment of a worker: the binary cache in ``cache_dir``, MIOpen's user db dir and the
    (absent) system db under ``base``, no MIOpen switches or hdemu platform of the caller's."""
    env = dict(os.environ, MIOPEN_CUSTOM_CACHE_DIR=str(cache_dir), MIOPEN_USER_DB_PATH=str(base / "userdb"),
               MIOPEN_SYSTEM_DB_PATH=str(base / "no-system-db"))
    for var in ("MIOPEN_DISABLE_CACHE", "MIOPEN_LOG_LEVEL", "MIOPEN_ENABLE_LOGGING_MPMT", "HDEMU_PLATFORM",
                "HDEMU_CONFIG", "HDEMU_MIOPEN_DB_BUSY_LIMIT_S"):
        env.pop(var, None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def spawn(spec: dict, env: dict, *, stdin=False) -> subprocess.Popen:
    """A worker process running ``spec`` (its result is the last line of its stdout)."""
    code = f"import runpy; runpy.run_path({_WORKER_FILE!r}, run_name='__main__')"
    return subprocess.Popen([sys.executable, "-c", code, "_worker", json.dumps(spec)], env=env, cwd=str(ROOT),
                            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _reap(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.kill()
    try:
        p.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError):
        pass


def _result(p: subprocess.Popen, what: str, timeout: float) -> dict:
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _reap(p)
        raise RuntimeError(f"miopen study: the {what} worker did not finish in {timeout:.0f} s") from None
    lines = out.strip().splitlines()
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"miopen study: the {what} worker failed (exit {p.returncode}): {err.strip()[-2000:]}")
    return json.loads(lines[-1])


def run_worker(spec: dict, env: dict, what: str, timeout: float = 120.0) -> dict:
    p = spawn(spec, env)
    try:
        return _result(p, what, timeout)
    finally:
        _reap(p)


# ----------------------------------------------------------------------------------------------- the study
def _grid(small: bool) -> dict:
    windows = [(m, k, k, k // 2, k // 2, s, s) for k in (2, 3, 4, 5) for s in (1, 2, 3) for m in _MODES]
    if small:
        return {"repeats": 2, "shape": [2, 4, 16, 16], "pool": ["max", 3, 3, 1, 1, 2, 2], "per_process": 4,
                "windows": windows, "verify": False}
    return {"repeats": 5, "shape": [4, 8, 32, 32], "pool": ["max", 3, 3, 1, 1, 2, 2], "per_process": 16,
            "windows": windows, "verify": True}


def _row(repeat: int, process: str, c: dict, pid: int) -> dict:
    case = "warm_invoker" if c["call"] > 1 else process
    r = {"repeat": repeat, "process": process, "pid": pid, "call": c["call"], "case": case, "config": c["config"],
         "level": c["level"], "solver": c["solver"], "wall_ms": round(c["wall_s"] * 1e3, 4)}
    r.update({f"{k}_ms": round(v * 1e3, 4) for k, v in c["steps"].items()})
    r.update({k: c[k] for k in ("solver_searches", "invokers_built", "compilations", "binary_cache_hits_user",
                                "binary_cache_stores", "binary_cache_errors", "correct", "max_abs_err")})
    return r


def _case_ok(r: dict) -> bool:
    """What each case must be, whatever the machine."""
    if not r["correct"] or r["binary_cache_errors"]:
        return False
    if r["case"] == "cold":
        return r["level"] == "compiled" and r["compilations"] == 1 and r["binary_cache_stores"] == 1 \
            and r["solver_searches"] == 1 and r["invokers_built"] == 1
    if r["case"] == "warm_db":
        return r["level"] == "binary_cache_user" and r["compilations"] == 0 and r["binary_cache_hits_user"] == 1 \
            and r["solver_searches"] == 1 and r["invokers_built"] == 1
    return r["level"] == "invoker_cache" and r["solver_searches"] == 0 and r["invokers_built"] == 0 \
        and r["compilations"] == 0


def first_calls(out: Path, repeats: int, shape, pool, prog=None) -> list[dict]:
    """``repeats`` x (a cold process on a fresh cache dir, then a warm-db process on it), three calls each
    (the second and third are the warm-invoker case)."""
    rows = []
    for rep in range(repeats):
        cache = out / f"cache-{rep}"
        env = worker_env(cache, out)
        for process in ("cold", "warm_db"):
            res = run_worker({"shape": shape, "pools": [pool], "calls": 3, "seed": rep}, env, process)
            rows += [_row(rep, process, c, res["pid"]) for c in res["calls"]]
            if prog is not None:
                first = res["calls"][0]
                prog.step(f"repeat {rep + 1}/{repeats} {process}: {first['level']}, first call "
                          f"{first['wall_s'] * 1e3:.1f} ms, second {res['calls'][1]['wall_s'] * 1e3:.2f} ms")
    return rows


def _check_db(path: Path) -> dict:
    """Integrity of the shared .ukdb and every record read back through KernDb (md5 checked)."""
    c = sqlite3.connect(str(path))
    try:
        integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
        keys = c.execute("SELECT kernel_name, kernel_args FROM kern_db").fetchall()
    finally:
        c.close()
    db, bad = KernDb(path), 0
    for name, args in keys:
        try:
            if db.load(name, args) is None:
                bad += 1
        except MiopenError:
            bad += 1
    return {"integrity": integrity, "records": len(keys), "bad_records": bad}


def concurrent(out: Path, shape, windows, per_process: int, verify: bool = True,
               prog=None) -> tuple[list[dict], dict]:
    """Two processes started together on one fresh cache dir, distinct configs each; then the db is
    checked and (``verify``) a third process runs every config from it."""
    cache = out / "cache-concurrent"
    env = worker_env(cache, out)
    sets = [windows[i::2][:per_process] for i in range(2)]
    procs = [spawn({"shape": shape, "pools": s, "calls": 1, "wait_go": True, "seed": 7}, env, stdin=True)
             for s in sets]
    results = []
    watchdog = threading.Timer(240.0, lambda: [p.kill() for p in procs])    # a hung worker ends the run
    watchdog.start()
    try:
        for p in procs:
            line = p.stdout.readline().strip()
            if line != "ready":
                _reap(p)
                raise RuntimeError(f"miopen study: a concurrent worker did not start: {p.stderr.read()[-2000:]}")
        t = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for i, p in enumerate(procs):
            results.append(_result(p, f"concurrent #{i + 1}", 180.0))
        wall = time.perf_counter() - t
    finally:
        watchdog.cancel()
        for p in procs:
            _reap(p)
    if prog is not None:
        prog.step(f"concurrent: 2 x {per_process} configs in {wall:.1f} s, busy waits "
                  f"{[r['binary_cache']['busy_waits'] for r in results]}")
    ukdb = sorted(cache.rglob("*.ukdb"))
    check = _check_db(ukdb[0]) if len(ukdb) == 1 else {"integrity": f"{len(ukdb)} .ukdb files", "records": 0,
                                                       "bad_records": 0}
    procs_out = [("concurrent_1", results[0]), ("concurrent_2", results[1])]
    if verify:
        v = run_worker({"shape": shape, "pools": sets[0] + sets[1], "calls": 1, "seed": 7}, env, "verify")
        procs_out.append(("verify", v))
        if prog is not None:
            prog.step(f"verify: {sum(c['level'] == 'binary_cache_user' for c in v['calls'])}/"
                      f"{len(v['calls'])} from the shared db, integrity {check['integrity']}")
    rows = []
    for name, r in procs_out:
        calls, bc = r["calls"], r["binary_cache"] or {}
        rows.append({"process": name, "pid": r["pid"], "configs": len(calls),
                     "correct": sum(c["correct"] for c in calls),
                     "compilations": sum(c["compilations"] for c in calls),
                     "binary_cache_hits_user": sum(c["binary_cache_hits_user"] for c in calls),
                     "stores": bc.get("stores", 0), "busy_waits": bc.get("busy_waits", 0),
                     "busy_wait_ms": round(bc.get("busy_wait_s", 0.0) * 1e3, 3), "timeouts": bc.get("timeouts", 0),
                     "errors": bc.get("errors", 0),
                     "first_call_ms_median": round(statistics.median(c["wall_s"] for c in calls) * 1e3, 3)})
    expected = len(sets[0]) + len(sets[1])
    ok = (all(r["correct"] == r["configs"] and r["errors"] == 0 and r["timeouts"] == 0 for r in rows)
          and all(r["compilations"] == r["configs"] == r["stores"] for r in rows[:2])
          and all(r["compilations"] == 0 and r["binary_cache_hits_user"] == expected for r in rows[2:])
          and check["integrity"] == "ok" and check["records"] == expected and check["bad_records"] == 0)
    info = dict(check, expected_records=expected, ok=ok, wall_s=round(wall, 3),
                busy_waits=[r["busy_waits"] for r in rows[:2]])
    return rows, info


def medians(rows: list[dict]) -> dict:
    """{case: {step: ms, "wall": ms, "n": samples}} of each case's median call (by wall time; the lower
    one of an even count), so that its steps add up to its wall time."""
    out = {}
    for case in CASES:
        rs = sorted((r for r in rows if r["case"] == case), key=lambda r: r["wall_ms"])
        if rs:
            m = rs[(len(rs) - 1) // 2]
            out[case] = {s: m[f"{s}_ms"] for s in STEP_NAMES}
            out[case].update(wall=m["wall_ms"], n=len(rs))
    return out


def _plot(st, med: dict, rows: list[dict], crow: list[dict], cinfo: dict) -> None:
    import matplotlib.pyplot as plt             # (when drawing: see Study.figure)
    fig, ax = plt.subplots(1, 3, figsize=(10.5, 4.4), dpi=FIG_DPI, squeeze=False,
                           gridspec_kw={"width_ratios": [1.4, 1.15, 0.9]})
    colors = dict(zip(STEP_NAMES, ("#bbbbbb", "#8c564b", "#1f77b4", "#17becf", "#d62728", "#ff7f0e", "#2ca02c",
                                   "#9467bd", "#e377c2", "#7f7f7f")))
    a = ax[0][0]
    xs = np.arange(len(CASES))
    bottom = np.zeros(len(CASES))
    for s in STEP_NAMES:
        v = np.array([med[c][s] for c in CASES])
        if v.max() > 0:
            a.bar(xs, v, bottom=bottom, color=colors[s], label=s.replace("_", " "), width=0.6)
        bottom += v
    for i, c in enumerate(CASES):           # the spread of the repeats: min..max of the call's wall time
        w, mid = [r["wall_ms"] for r in rows if r["case"] == c], med[c]["wall"]
        a.errorbar(i, mid, yerr=[[max(0.0, mid - min(w))], [max(0.0, max(w) - mid)]], color="k", capsize=3, lw=0.8)
        a.text(i + 0.08, max(w), f"{med[c]['wall']:.3g} ms", ha="left", va="bottom", fontsize=8)
    a.set_xticks(xs, ["cold\nnew process", "warm db\nnew process", "warm invoker\n2nd call"], fontsize=7)
    a.set_ylabel("ms (the median call; whisker: min..max)")
    a.set_title("split of the call (statistics() steps)", fontsize=9)
    a.set_ylim(0, max(r["wall_ms"] for r in rows) * 2.1)
    a.legend(fontsize=6, loc="upper right", ncol=2)
    b = ax[0][1]
    shown = [s for s in STEP_NAMES if any(med[c][s] > 0 for c in CASES)]
    ys = np.arange(len(shown))
    for j, (c, lab) in enumerate((("cold", "cold"), ("warm_db", "warm db"), ("warm_invoker", "warm invoker"))):
        b.barh(ys + (j - 1) * 0.27, [max(med[c][s], 1e-4) for s in shown], height=0.27, label=lab,
               color=("#1f77b4", "#ff7f0e", "#2ca02c")[j])
    b.set_xscale("log")
    b.set_xlim(1e-3, None)
    b.set_yticks(ys, [s.replace("_", " ") for s in shown], fontsize=7)
    b.invert_yaxis()
    b.set_xlabel("ms (the median call, log)")
    b.set_title("each step, by case", fontsize=9)
    b.grid(True, axis="x", which="major", alpha=0.3)
    b.legend(fontsize=7, loc="lower right")
    c = ax[0][2]
    names = [r["process"].replace("concurrent_", "proc ") for r in crow]
    xs = np.arange(len(crow))
    for j, (key, lab, col) in enumerate((("busy_waits", "busy waits", "#d62728"), ("stores", "stores", "#1f77b4"),
                                         ("binary_cache_hits_user", "db hits", "#2ca02c"))):
        c.bar(xs + (j - 1) * 0.27, [r[key] for r in crow], width=0.27, label=lab, color=col)
    c.set_xticks(xs, names, fontsize=8)
    c.set_title(f"one .ukdb, 2 processes at once\nintegrity {cinfo['integrity']}, {cinfo['records']}/"
                f"{cinfo['expected_records']} records\n{sum(r['correct'] for r in crow)}/"
                f"{sum(r['configs'] for r in crow)} results correct", fontsize=8)
    c.legend(fontsize=7)
    st.save(fig, "miopen.png", "miopenPoolingForward first call: cold, warm binary cache, warm invoker")


def run(st) -> dict:
    g = _grid(st.small)
    out = Path(st.dir)
    prog = Progress("miopen", 2 * g["repeats"] + 1 + g["verify"])
    try:
        rows = first_calls(out, g["repeats"], g["shape"], g["pool"], prog)
        crow, cinfo = concurrent(out, g["shape"], g["windows"], g["per_process"], g["verify"], prog)
    finally:
        prog.close()
    st.write_csv("miopen_first_call.csv", rows)
    st.write_csv("miopen_concurrent.csv", crow)
    med = medians(rows)
    _plot(st, med, rows, crow, cinfo)
    cold, warm, inv = med["cold"], med["warm_db"], med["warm_invoker"]
    cold_ex = cold["wall"] - cold["compile"]
    figures = {
        "cold_first_call_ms": cold["wall"], "warm_db_first_call_ms": warm["wall"],
        "warm_invoker_call_ms": inv["wall"], "cold_compile_ms": cold["compile"],
        "warm_db_over_warm_invoker": warm["wall"] / inv["wall"] if inv["wall"] else None,
        "warm_db_pct_of_cold_excluding_compile": 100.0 * warm["wall"] / cold_ex if cold_ex else None,
        "warm_db_search_and_invoker_build_ms": warm["solver_search"] + warm["invoker_build"],
        "warm_db_module_load_pct": 100.0 * warm["hipModuleLoadData"] / warm["wall"] if warm["wall"] else None,
        "warm_db_split_ms": {s: warm[s] for s in STEP_NAMES},
        "cold_split_ms": {s: cold[s] for s in STEP_NAMES},
        "warm_db_compilations": sum(r["compilations"] for r in rows if r["case"] == "warm_db"),
        "warm_db_solver_searches": sum(r["solver_searches"] for r in rows if r["case"] == "warm_db"),
        "warm_db_invokers_built": sum(r["invokers_built"] for r in rows if r["case"] == "warm_db"),
        "repeats": g["repeats"], "cases_as_expected": sum(_case_ok(r) for r in rows), "calls": len(rows),
        "concurrent_busy_waits": cinfo["busy_waits"], "concurrent_integrity": cinfo["integrity"],
        "concurrent_records": cinfo["records"], "concurrent_expected_records": cinfo["expected_records"],
        "concurrent_bad_records": cinfo["bad_records"], "concurrent_ok": cinfo["ok"],
    }
    held = (all(_case_ok(r) for r in rows) and cinfo["ok"]
            and warm["wall"] >= WARM_OVER_INVOKER * inv["wall"])
    return st.finish(figures, CLAIM, held)
