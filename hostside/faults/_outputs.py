"""What a run leaves besides the report and the history: ``trace.json`` (every process's trace ring
merged on one CLOCK_MONOTONIC timeline, with the fault windows as a track of their own and, once the
platform stopped and the collector wrote its outputs, the DFX swimlane rows: ``add_dfx_rows``),
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

__all__ = ["write_outputs", "fault_windows", "role_stats", "latency_stats", "add_dfx_rows", "DFX_PID_BASE",
           "MAX_DFX_TASKS"]

#: The DFX swimlane's processes in the merged trace: one per AICPU thread t, pid DFX_PID_BASE + t (above
#: any Linux pid: pid_max is at most 2**22), so they never collide with a role's or the fault track's.
DFX_PID_BASE = 1 << 22
#: At most this many swimlane tasks go into the merged trace (the collector's swimlane.csv has them all).
MAX_DFX_TASKS = 200_000

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


def _swimlane_rows(path: str) -> list[tuple]:
    """(thread, reg_task_id, dispatch_time, finish_time, start_time, end_time) of each row of the
    collector's ``swimlane.csv`` (its header names the columns)."""
    with open(path) as f:
        cols = f.readline().strip().split(",")
        want = [cols.index(c) for c in ("thread", "reg_task_id", "dispatch_time", "finish_time", "start_time",
                                        "end_time")]
        rows = []
        for line in f:
            v = line.split(",")
            if len(v) == len(cols):
                rows.append(tuple(int(v[i]) for i in want))
    return rows


def _dfx_events(out_dir: str, real: bool) -> tuple[list[dict], int, int]:
    """(trace events with absolute ns timestamps in ``ts_ns``, tasks, tasks left out) of a collector's
    outputs: per AICPU thread an "aicpu" track (dispatch -> finish), an "aicore" track (start -> end)
    and a "stalls" track. The tasks' times are CLOCK_MONOTONIC ns only in mode real (a synthetic load
    has no clock): in mode synthetic only the stalls go in."""
    stalls = []
    try:
        with open(os.path.join(out_dir, "stalls.json")) as f:
            stalls = json.load(f)
    except (OSError, ValueError):
        pass
    rows = _swimlane_rows(os.path.join(out_dir, "swimlane.csv")) if real else []
    left = max(0, len(rows) - MAX_DFX_TASKS)
    rows = rows[:MAX_DFX_TASKS]
    threads = sorted({r[0] for r in rows} | {int(x["thread"]) for x in stalls})
    ev: list[dict] = []
    for t in threads:
        pid = DFX_PID_BASE + t
        ev.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"DFX swimlane: AICPU thread {t}"}})
        for tid, name in ((1, "aicpu (scheduler view)"), (2, "aicore (ground truth)"), (3, "stalls")):
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
    for x in stalls:
        ev.append({"ph": "X", "name": f"stall ({x['gate']} gate, {x['kind']})", "cat": "dfx_stall",
                   "pid": DFX_PID_BASE + int(x["thread"]), "tid": 3, "ts_ns": int(x["start_ns"]),
                   "dur": max((int(x["end_ns"]) - int(x["start_ns"])) / 1000.0, 0.001),
                   "args": {"outcome": x["outcome"], "lane": x["lane"]}})
    for t, rid, d0, d1, s0, s1 in rows:
        pid, r = DFX_PID_BASE + t, {"reg_task_id": hex(rid)}
        ev.append({"ph": "X", "name": "task", "cat": "dfx", "pid": pid, "tid": 1, "ts_ns": d0,
                   "dur": max((d1 - d0) / 1000.0, 0.001), "args": r})
        ev.append({"ph": "X", "name": "kernel", "cat": "dfx", "pid": pid, "tid": 2, "ts_ns": s0,
                   "dur": max((s1 - s0) / 1000.0, 0.001), "args": r})
    return ev, len(rows), left


def add_dfx_rows(run, out) -> dict:
    """Merge the DFX swimlane rows (the collector's outputs, complete once the platform stopped) into
    ``trace.json`` on its clock, as processes of their own; returns what report.json lists."""
    g_prof = run.cfg["profiling"]
    path = out / "trace.json"
    if not g_prof["enabled"] or not path.is_file():
        return {}
    out_dir = g_prof["output_dir"]
    try:
        ev, tasks, left = _dfx_events(out_dir, g_prof["mode"] == "real")
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError, KeyError, IndexError) as exc:
        return {"dfx_note": f"the DFX swimlane rows could not be merged into the trace: {exc}"}
    origin = int(trace["otherData"]["clock_origin_ns"])
    stamped = [e["ts_ns"] for e in ev if "ts_ns" in e]
    if stamped and min(stamped) < origin:          # a DFX row before every ring event: move the origin back
        shift = (origin - min(stamped)) / 1000.0
        for e in trace["traceEvents"]:
            if "ts" in e:
                e["ts"] += shift
        origin = min(stamped)
        trace["otherData"]["clock_origin_ns"] = origin
    for e in ev:
        if "ts_ns" in e:
            e["ts"] = (e.pop("ts_ns") - origin) / 1000.0
    trace["traceEvents"] += ev
    trace["otherData"]["dfx_tasks"] = tasks
    with open(path, "w") as f:
        json.dump(trace, f)
    res = {"trace_events": len(trace["traceEvents"]), "dfx_trace_tasks": tasks,
           "dfx_trace_stalls": sum(1 for e in ev if e.get("cat") == "dfx_stall")}
    if left:
        res["dfx_note"] = f"{left} swimlane tasks past the first {MAX_DFX_TASKS} are only in dfx/swimlane.csv"
    return res


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
