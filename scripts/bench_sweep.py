#!/usr/bin/env python3
"""What the Dask executor of a sweep costs per point against the sequential one, in the same run.

One sweep of the replay study's point mode (``--points`` footprints x 1 repeat, each point a fresh
emulator process pinned to one core) is run three times from this process: ``local`` (one point after
another), ``dask`` on a LocalCluster of 1 worker (the same one-at-a-time concurrency: the difference is
Dask's own cost: cluster start-up and close, scheduling, shipping each point's result and files back)
and ``dask`` on a LocalCluster of one worker per core (what a user gains on this machine). The local and
1-worker runs alternate ``--rounds`` times (medians reported). Prints one line per run and, last, one
JSON object: per-point wall seconds of each executor; the Dask overhead per point: what the 1-worker
Dask run adds beyond its points' own durations, less what the local run adds beyond its own (so the
points' own times, which the load moves by seconds, cancel), without and with the cluster's start-up
and close spread over the points; and the ratios.

    .venv/bin/python scripts/bench_sweep.py [--points 6] [--rounds 2]

Needs the [sweep] extra (dask, distributed). The figures move with the machine's load: on a shared
2-core machine a point's own time (mostly the fresh interpreter's imports) varies by seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

from hostside.studies import run_sweep
from hostside.studies._sweep_spec import parse_inline


def _one(out: str, points: int, executor: str, workers: int | None) -> dict:
    fps = ",".join(str(64 * (i + 1)) for i in range(points))
    spec = parse_inline(f"footprint_kib={fps}; dispatches=2; fence_windows=1; repeats=1", "replay")
    with open(os.devnull, "w") as quiet:
        s = run_sweep(spec, out, executor=executor, n_workers=workers, stream=quiet)
    with open(os.path.join(out, "manifest.json")) as f:
        m = json.load(f)
    for f in s["failed"]:
        print(f"  failed: {f['key']}: {f['error']}", flush=True)
    durations = []
    for d in sorted(os.listdir(os.path.join(out, "points"))):
        with open(os.path.join(out, "points", d, "result.json")) as f:
            durations.append(json.load(f)["duration_s"])
    wall = m["when"]["wall_s"]
    r = {"executor": executor, "workers": workers or 1, "ok": s["ok"], "points": points, "wall_s": wall,
         "per_point_s": wall / points, "point_median_s": statistics.median(durations),
         "connect_s": m["executor"].get("connect_s", 0.0), "close_s": m["executor"].get("close_s", 0.0)}
    # what the executor adds beyond the points themselves (their tasks' own durations): scheduling,
    # shipping results and files back, storing them; a cluster's start and close counted apart
    r["beyond_points_s"] = wall - sum(durations) - r["connect_s"] - r["close_s"]
    print(f"{executor:5} workers={r['workers']}: {wall:6.1f} s for {points} points ({r['per_point_s']:.2f} s/point, "
          f"a point's own median {r['point_median_s']:.2f} s, connect {r['connect_s']:.1f} s, "
          f"close {r['close_s']:.1f} s)", flush=True)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2, help="local and 1-worker dask alternate this many times")
    a = ap.parse_args()
    os.environ.pop("HDEMU_PLATFORM", None)
    os.environ.pop("HDEMU_CONFIG", None)
    cores = len(os.sched_getaffinity(0))
    runs: dict = {"local": [], "dask1": []}
    with tempfile.TemporaryDirectory(prefix="hdemu-bench-sweep-") as tmp:
        os.environ["HDEMU_SWEEP_LOCK_DIR"] = os.path.join(tmp, "locks")
        for i in range(a.rounds):             # alternate, so that the machine's load drifts over both
            runs["local"].append(_one(os.path.join(tmp, f"local{i}"), a.points, "local", None))
            runs["dask1"].append(_one(os.path.join(tmp, f"dask1-{i}"), a.points, "dask", 1))
        dn = _one(os.path.join(tmp, "daskn"), a.points, "dask", cores)
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("per_point_s", "point_median_s", "beyond_points_s",
                                                               "connect_s", "close_s")} for k, v in runs.items()}
    n = a.points
    overhead = (med["dask1"]["beyond_points_s"] - med["local"]["beyond_points_s"]) / n
    amortised = overhead + (med["dask1"]["connect_s"] + med["dask1"]["close_s"]) / n
    print(json.dumps({
        "points": n, "rounds": a.rounds, "cores": cores, "loadavg": [round(x, 2) for x in os.getloadavg()],
        "local_per_point_s": round(med["local"]["per_point_s"], 3),
        "dask1_per_point_s": round(med["dask1"]["per_point_s"], 3),
        "dask_all_cores_per_point_s": round(dn["per_point_s"], 3),
        "point_own_median_s": {"local": med["local"]["point_median_s"], "dask1": med["dask1"]["point_median_s"]},
        "dask_overhead_per_point_s": round(overhead, 3),
        "dask_overhead_per_point_s_with_cluster_start_close": round(amortised, 3),
        "dask_cluster_start_s": med["dask1"]["connect_s"], "dask_cluster_close_s": med["dask1"]["close_s"],
        "ratio_overhead_vs_point": round(overhead / med["local"]["point_median_s"], 4),
        "ratio_dask1_vs_local": round(med["dask1"]["per_point_s"] / med["local"]["per_point_s"], 3),
        "ratio_dask_all_cores_vs_local": round(dn["per_point_s"] / med["local"]["per_point_s"], 3)}))
    ok = all(r["ok"] == n for v in runs.values() for r in v) and dn["ok"] == n
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
