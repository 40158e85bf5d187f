"""A sweep's outputs: ``sweep.csv`` (one row per point and repeat), ``sweep_summary.csv`` (mean, std
and count over the repeats), ``sweep.png`` (the merged plots, error bars = one standard deviation
across repeats), ``manifest.json`` and ``summary.json``."""
from __future__ import annotations

import csv
import json
import math
import os
import platform
import socket
import statistics
import sys
import time
from importlib.metadata import PackageNotFoundError, version

from ._common import FIG_DPI

__all__ = ["rows_of", "write_rows", "write_reports", "manifest"]

MAX_PANELS = 6
RUN_COLUMNS = ("status", "error", "host", "cores", "cpu_last", "pid", "started", "duration_s", "segments_left")


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def figure_names(spec, results) -> list[str]:
    if spec.figures:
        return list(spec.figures)
    names: list[str] = []
    for r in results:
        for k in r.get("figures") or {}:
            if k not in names:
                names.append(k)
    return names


def rows_of(spec, results) -> list[dict]:
    """One row per stored point: point dir, key, repeat, every parameter (the sweep's axes first),
    how it ran (status, error, host, cores, last CPU, pid, seconds, segments left), its figures."""
    figs = figure_names(spec, results)
    rows = []
    for r in results:
        params = r["params"]
        order = list(spec.axes) + [k for k in params if k not in spec.axes]
        row = {"point": r.get("dir", ""), "key": r["key"], "repeat": r["repeat"]}
        row.update({k: params[k] for k in order})
        row.update({k: r.get(k) for k in RUN_COLUMNS})
        row["cores"] = " ".join(str(c) for c in r.get("cores") or [])
        row["error"] = (r.get("error") or "").replace("\n", " ")[:500]
        f = r.get("figures") or {}
        row.update({k: f.get(k, "") for k in figs})
        rows.append(row)
    return rows


def _write_csv(path: str, rows: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        if rows:
            cols = list(rows[0])
            for r in rows[1:]:
                cols += [k for k in r if k not in cols]
            w = csv.DictWriter(f, fieldnames=cols, restval="")
            w.writeheader()
            w.writerows(rows)
    os.replace(tmp, path)


def write_rows(spec, out: str, results) -> None:
    _write_csv(os.path.join(out, "sweep.csv"), rows_of(spec, results))


def _merged(spec, results) -> list[dict]:
    """Per point (in sweep order): its parameters, runs ok / failed, and each numeric figure's mean,
    sample standard deviation (0 for one repeat) and count over the repeats that succeeded."""
    figs = figure_names(spec, results)
    by: dict = {}
    for r in results:
        by.setdefault(r["key"], []).append(r)
    out = []
    for key, rs in by.items():
        row = {"key": key, **{a: rs[0]["params"][a] for a in spec.axes}}
        ok = [r for r in rs if r["status"] == "ok"]
        row.update(runs_ok=len(ok), runs_failed=len(rs) - len(ok))
        for name in figs:
            vals = [r["figures"][name] for r in ok if _num(r["figures"].get(name))]
            if not vals:
                continue
            row[f"{name}_mean"] = statistics.fmean(vals)
            row[f"{name}_std"] = statistics.stdev(vals) if len(vals) > 1 else 0.0
            row[f"{name}_n"] = len(vals)
        out.append(row)
    return out


def _plot(spec, merged, out: str) -> str | None:
    figs = [n for n in figure_names(spec, []) or _numeric_names(merged)
            if any(f"{n}_mean" in m for m in merged)][:MAX_PANELS]
    if not figs:
        return None
    x = spec.x_axis()
    others = [a for a in spec.varied() if a != x]
    ncols = min(3, len(figs))
    nrows = (len(figs) + ncols - 1) // ncols
    import matplotlib.pyplot as plt             # when drawing only (Study.figure says why)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.0 * nrows), dpi=FIG_DPI, squeeze=False)
    xs_all = [m[x] for m in merged] if x else []
    numeric_x = bool(xs_all) and all(_num(v) for v in xs_all)
    cats = list(dict.fromkeys(xs_all)) if x and not numeric_x else []
    for i, name in enumerate(figs):
        a = axes[i // ncols][i % ncols]
        groups: dict = {}
        for m in merged:
            if f"{name}_mean" in m:
                groups.setdefault(tuple(m[o] for o in others), []).append(m)
        for g, (label, ms) in enumerate(groups.items()):
            if x:
                px = [m[x] if numeric_x else cats.index(m[x]) for m in ms]
            else:
                px = list(range(len(ms)))
            a.errorbar(px, [m[f"{name}_mean"] for m in ms], yerr=[m[f"{name}_std"] for m in ms], fmt="o-",
                       capsize=3, ms=4, lw=1, color=f"C{g % 10}",
                       label=", ".join(f"{o}={v}" for o, v in zip(others, label)) or None)
        if cats:
            a.set_xticks(range(len(cats)), [str(c) for c in cats], fontsize=7)
        a.set_xlabel(x or "point")
        a.set_title(name, fontsize=8)
        a.tick_params(labelsize=7)
        a.grid(True, alpha=0.3)
        if others and i == 0:
            a.legend(fontsize=6)
    for j in range(len(figs), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    fig.suptitle(f"sweep {spec.study}: mean +- std over {spec.repeats} repeat(s)", fontsize=9)
    fig.tight_layout()
    p = os.path.join(out, "sweep.png")
    fig.savefig(p, dpi=FIG_DPI, pil_kwargs={"optimize": True})
    plt.close(fig)
    return p


def _numeric_names(merged) -> list[str]:
    names: list[str] = []
    for m in merged:
        for k in m:
            if k.endswith("_mean") and k[:-5] not in names:
                names.append(k[:-5])
    return names


def _versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in ("hdemu", "numpy", "matplotlib", "psutil", "dask", "distributed"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def manifest(spec, executor: dict, started: float, resumed: bool, kept: int, ran: int, interrupted: bool) -> dict:
    la = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"versions": _versions(),
            "machine": {"host": socket.gethostname(), "platform": platform.platform(),
                        "machine": platform.machine(), "cpu_count": os.cpu_count(),
                        "affinity": sorted(os.sched_getaffinity(0)), "loadavg": la},
            "executor": dict(executor, cores_per_point=spec.cores_per_point),
            "when": {"started": _iso(started), "finished": _iso(time.time()),
                     "wall_s": round(time.time() - started, 2)},
            "command": sys.argv, "spec": spec.to_dict(), "resumed": resumed, "kept_from_before": kept,
            "ran_now": ran, "interrupted": interrupted}


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def write_reports(spec, out: str, results, mf: dict) -> dict:
    write_rows(spec, out, results)
    merged = _merged(spec, results)
    _write_csv(os.path.join(out, "sweep_summary.csv"), merged)
    png = _plot(spec, merged, out) if results else None
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(mf, f, indent=1, default=str)
    failed = [{"key": r["key"], "repeat": r["repeat"], "error": r.get("error", "")}
              for r in results if r["status"] != "ok"]
    returned = {n for r in results for n in (r.get("figures") or {})}
    summary = {"study": spec.study, "sweep": True, "mode": spec.mode, "points": len(spec.points()),
               "repeats": spec.repeats, "tasks": len(spec.points()) * spec.repeats, "stored": len(results),
               "ok": len(results) - len(failed), "failed": failed,
               "missing": len(spec.points()) * spec.repeats - len(results),
               "figures_never_returned": [n for n in spec.figures if n not in returned],
               "executor": mf["executor"].get("kind"), "interrupted": mf["interrupted"],
               "duration_s": mf["when"]["wall_s"], "out_dir": out,
               "files": sorted(["sweep.json", "sweep.csv", "sweep_summary.csv", "manifest.json", "summary.json",
                                "points/"] + (["sweep.png"] if png else []))}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    return summary

