"""A sweep point's process: ``python -m hostside.studies._sweep_child`` (started by
``_sweep_task.run_task``) reads its task as JSON on stdin, pins itself with ``os.sched_setaffinity``
to the cores it was given, runs one study at one point in the run directory it was given and writes
its result (status, error, figures, the cores it was pinned to, the CPU it last ran on) as JSON.

A point function takes the point's parameters (every axis of ``_sweep_axes.POINT_AXES`` set) and an
empty run directory; it starts its own emulator platform (segment names are unique per run:
``hdemu-<pid>-<token>-...``), measures, stops the platform, leaves its traces and outputs in the run
directory and returns its figures (a flat dict of numbers, strings and booleans). Each calls the
per-point code its study already has (``_dispatch._run_point``, ``_backpressure._cell``,
``_replay.worker``, ``_coherence._pipeline``). ``mode = "study"`` runs the whole study
(``run_study``, axis ``small``) and returns the figures of its ``summary.json``; ``graphs`` has only
that mode.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback

import psutil

from hostside.platform import Platform, write_trace

from . import _backpressure, _coherence, _dispatch, _replay
from ._cli import run_study
from ._common import Study

__all__ = ["run_point", "POINTS"]

KIB = 1024
PARENT_POLL_S = 0.5


def _dispatch_point(p: dict, run_dir: str) -> dict:
    plat = Platform({"agents": p["agents"], "engines": p["engines"], "memory_mib": 8, "host_pool_mib": 8,
                     "trace_rings": 24, "trace_events": 1 << 16}, embedded=False, quiet_roles=True).start()
    try:
        pt = {k: p[k] for k in ("agents", "engines", "clients", "threads", "queues")}
        row, _hists = _dispatch._run_point(plat, dict(pt, sweep="sweep", value=0), p["launches"])
        write_trace(plat.pm, os.path.join(run_dir, "trace.json"))
    finally:
        plat.stop()
    return {k: v for k, v in row.items() if k not in ("sweep", "value", *pt)}


def _backpressure_point(p: dict, run_dir: str) -> dict:
    rows = _backpressure._cell(Study("backpressure", run_dir, True), p["policy"], p["pool"], p["launches"])
    keys = ("stall_ms", "stalls", "common_stalls", "dropped", "collected", "tasks_joined",
            "inflation_p50_us", "inflation_p99_us", "inflation_mean_us")
    out = {f"lane{r['lane']}_{k}": r[k] for r in rows for k in keys}
    out["balanced"] = all(bool(r["balanced"]) for r in rows)
    return out


def _replay_point(p: dict, run_dir: str) -> dict:
    fp = p["footprint_kib"] * KIB
    out = _replay.worker({"footprints": [fp], "passes": [p["passes"]], "dispatches": p["dispatches"],
                    "fence": p["fence"], "grid": True, "fence_windows": p["fence_windows"],
                    "trace": os.path.join(run_dir, "trace.json")})
    g = out["grid"][0]
    moved = g["snap_bytes"] + g["restore_bytes"]
    fig = {"bytes_moved": moved,
           "predicted_bytes": p["dispatches"] * fp * p["passes"] if p["passes"] > 1 else 0,
           "windows": g["windows"], "snap_ms": g["snap_ms"], "restore_ms": g["restore_ms"],
           "wall_ms": g["wall_ms"]}
    for r in out["fence_rows"]:
        tag = "with_copies" if r["copies_beside"] else "alone"
        fig[f"window_p50_us_{tag}"] = r["window_p50_us"]
        if r["copies_beside"]:
            fig["copies_per_s"] = r["copies_per_s"]
    return fig


def _coherence_point(p: dict, run_dir: str) -> dict:
    r = _coherence._pipeline(p["arch"], p["records_per_buffer"], p["records"], os.path.join(run_dir, "dfx"))
    return {k: r[k] for k in ("records", "buffers", "wall_s", "collector_cpu_s", "us_per_buffer",
                              "ns_per_record", "wall_us_per_buffer")}


#: study -> its point function (the axes are ``_sweep_axes.POINT_AXES``)
POINTS = {"dispatch": _dispatch_point, "backpressure": _backpressure_point, "replay": _replay_point,
          "coherence": _coherence_point}


def run_point(study: str, whole: bool, params: dict, run_dir: str) -> dict:
    if whole or study not in POINTS:
        s = run_study(study, run_dir, bool(params["small"]))
        return dict(s["figures"], claim_held=s["claim_held"])
    return POINTS[study](params, run_dir)


def _plain(v):
    """numpy scalars (a study's figures) as Python numbers; anything else as its text."""
    return v.item() if hasattr(v, "item") else str(v)


def _watch_parent(parent: int) -> None:
    """The task that started this point is gone (its worker was killed, the client closed its
    cluster): stop as on Ctrl-C, so that the platform is stopped and its segments removed."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGINT)


def _child() -> int:
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    task = json.loads(sys.stdin.read())
    os.sched_setaffinity(0, task["cores"])    # before the emulator starts: its processes inherit it
    out = {"status": "failed", "error": "", "figures": {}, "cores_pinned": sorted(os.sched_getaffinity(0))}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        out["figures"] = run_point(task["study"], task["whole"], task["params"], task["run_dir"])
        out["status"] = "ok"
    except BaseException as exc:              # noqa: BLE001 - reported as the point's error
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()[-4000:]
    out["cpu_last"] = psutil.Process().cpu_num()
    with open(task["result"], "w") as f:
        json.dump(out, f, default=_plain)
    return 0 if out["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(_child())
