"""What a run leaves besides the report and the history: ``trace.json`` (every process's trace ring
merged on one CLOCK_MONOTONIC timeline, with the fault windows as a track of their own),
``stats.json`` (per role: process, engines or lane counters; per workload stream: sync latency
percentiles) and ``latency.png`` (each stream's sync latency over time, fault windows shaded).

Written once the workload has ended, before the probe client (which may claim the workload's freed
trace ring) and before the platform stops. matplotlib is imported only here and only when present:
without it the plot is skipped and ``outputs.plot_note`` in report.json says why.
"""
from __future__ import annotations

import importlib
import json
import os

import numpy as np

from hostside.platform import write_trace
from shm_layout import dfx as D
from shm_layout import layouts as L

__all__ = ["write_outputs", "fault_windows", "role_stats", "latency_stats"]

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def fault_windows(run) -> list[dict]:
    """One window per injected fault: absolute CLOCK_MONOTONIC start (and end, for a fault with one)."""
    t0 = run.hist.t0_ns
    out = []
    for rec in run.faults:
        if rec["state"] != "injected":
            continue
        start = rec.get("t_ns") or t0 + int(rec["t_s"] * 1e9)
        end = t0 + int(rec["end_t_s"] * 1e9) if "end_t_s" in rec else None
        tgt = rec.get("target") or "workload"
        args = {k: (v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v))
                for k, v in (rec.get("evidence") or {}).items()}
        out.append({"name": f"fault {rec['index']}: {rec['kind']} {tgt}", "start_ns": int(start),
                    "end_ns": end, "args": {"t_s": rec["t_s"], **args}})
    return out


def _cpu_s(pid: int):
    """User + system CPU seconds of a live process (None once it has gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return round((int(fields[11]) + int(fields[12])) / _CLK_TCK, 3)
    except (OSError, IndexError, ValueError):
        return None


def role_stats(run) -> dict:
    """Per role: pid, alive, exit code, CPU seconds, supervisor state; a CP's engines, a lane's counters."""
    plat, pm = run.plat, run.plat.pm
    out = {}
    for name, i in run.roles.items():
        p = plat.procs[i]
        st = {"pid": p.pid, "alive": p.poll() is None, "exit_code": p.returncode, "cpu_s": _cpu_s(p.pid),
              "state": L.ROLE_STATE_NAMES.get(int(pm.roles[i]["state"]), "?")}
        if name.startswith("cp"):
            es = pm.agents[int(name[2:])].engine_stats
            st["engines"] = [{"engine": e, "sdma": e == pm.topo.n_engines,
                              "state": L.ENGINE_STATE_NAMES.get(int(es[e]["state"]), "?"),
                              **{k: int(es[e][k]) for k in ("packets", "busy_ns", "sleeps", "wakeups")}}
                             for e in range(pm.topo.n_engines + 1)]
        elif name.startswith("lane"):
            g = pm.topo.dfx
            ls = pm.segs["dfxctl"].view(D.lane_status, g.lane_status_off(int(name[4:])), 1)[0]
            st["lane"] = {k: int(ls[k]) for k in ("records", "drops", "stalls", "stall_ns", "tasks", "backstops")}
            st["lane"]["state"] = D.LANE_STATE_NAMES.get(int(ls["state"]), "?")
        out[name] = st
    return out


def latency_stats(items: list[dict]) -> dict:
    """Per workload stream: syncs and the percentiles of their latency (``lat_s``)."""
    per: dict = {}
    for i in items:
        if i["type"] == "workload" and i["ev"] == "sync" and "lat_s" in i:
            per.setdefault(i["stream"], []).append(i["lat_s"])
    out = {}
    for s, v in sorted(per.items(), key=lambda kv: str(kv[0])):
        a = np.asarray(v)
        out[str(s)] = {"syncs": len(v), **{f"p{q}_s": round(float(np.percentile(a, q)), 6) for q in (50, 90, 99)},
                       "max_s": round(float(a.max()), 6), "mean_s": round(float(a.mean()), 6)}
    return out


def _plot(items: list[dict], windows: list[dict], t0_ns: int, path) -> str | None:
    """latency.png, or the reason it was not drawn."""
    try:
        mpl = importlib.import_module("matplotlib")
    except ImportError:
        return "matplotlib is not installed: no latency plot"
    mpl.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")
    per: dict = {}
    for i in items:
        if i["type"] == "workload" and i["ev"] == "sync" and "lat_s" in i:
            per.setdefault(i["stream"], ([], []))
            per[i["stream"]][0].append(i["t_s"])
            per[i["stream"]][1].append(i["lat_s"] * 1e3)
    if not per:
        return "the workload recorded no sync latencies: no latency plot"
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    try:
        for w in windows:
            a = (w["start_ns"] - t0_ns) / 1e9
            b = (w["end_ns"] - t0_ns) / 1e9 if w["end_ns"] is not None else a
            ax.axvspan(a, max(b, a + 0.005), color="tab:red", alpha=0.2)
            ax.annotate(w["name"], (a, 1.0), xycoords=("data", "axes fraction"), fontsize=7, va="top", rotation=90)
        for s, (t, lat) in sorted(per.items(), key=lambda kv: str(kv[0])):
            ax.plot(t, lat, ".", ms=3, label=f"stream {s}")
        ax.set_yscale("log")
        ax.set_xlabel("seconds from the workload's start (CLOCK_MONOTONIC)")
        ax.set_ylabel("sync latency (ms)")
        ax.set_title("launch-to-completion latency per batch; faults shaded")
        ax.legend(loc="upper right", fontsize=7)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return None


def write_outputs(run, out, plot: bool = True) -> dict:
    """Write trace.json, stats.json and latency.png into ``out``; returns what report.json lists."""
    windows = fault_windows(run)
    res: dict = {}
    try:
        n = write_trace(run.plat.pm, str(out / "trace.json"), windows)
        res.update(trace="trace.json", trace_events=n)
    except (OSError, ValueError) as exc:
        res["trace_note"] = f"the trace could not be written: {exc}"
    stats = {"roles": role_stats(run), "streams": latency_stats(run.hist.items),
             "clock_origin_ns": run.hist.t0_ns}
    with open(out / "stats.json", "w") as f:
        json.dump(stats, f, indent=1)
    res["stats"] = "stats.json"
    note = _plot(run.hist.items, windows, run.hist.t0_ns, out / "latency.png") if plot else \
        "not drawn: --no-plot"
    res["plot"] = None if note else "latency.png"
    if note:
        res["plot_note"] = note
    res["fault_windows"] = len(windows)
    return res
