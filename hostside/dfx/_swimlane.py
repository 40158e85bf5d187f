"""The joined swimlane of a DFX run: AicpuTask joined with AicoreTask on reg_task_id.

Writes ``swimlane.csv`` (one row per task) and ``swimlane.trace.json`` (Chrome/Perfetto: one
process per AICPU thread with an "aicpu" track of dispatch->finish slices as the scheduler saw
them, an "aicore" track of start->end slices, the ground truth, and a "stalls" track).
"""
from __future__ import annotations

import json
import os

import numpy as np

from ._readers import load_output

__all__ = ["join", "write_swimlane", "swimlane_t0"]


def join(out: dict) -> np.ndarray:
    cpu = out.get("aicpu_task")
    core = out.get("aicore_task")
    dt = np.dtype([("reg_task_id", "<u8"), ("thread", "<u4"), ("dispatch_time", "<u8"),
                   ("finish_time", "<u8"), ("start_time", "<u8"), ("end_time", "<u8")])
    if cpu is None or core is None or not len(cpu) or not len(core):
        return np.zeros(0, dt)
    order = np.argsort(core["reg_task_id"], kind="stable")
    ids = core["reg_task_id"][order]
    pos = np.searchsorted(ids, cpu["reg_task_id"])
    pos = np.minimum(pos, len(ids) - 1)
    hit = ids[pos] == cpu["reg_task_id"]
    c = cpu[hit]
    k = core[order[pos[hit]]]
    res = np.zeros(len(c), dt)
    res["reg_task_id"] = c["reg_task_id"]
    res["thread"] = c["thread"]
    res["dispatch_time"] = c["dispatch_time"]
    res["finish_time"] = c["finish_time"]
    res["start_time"] = k["start_time"]
    res["end_time"] = k["end_time"]
    return res


def swimlane_t0(sw: np.ndarray, stalls: list) -> int:
    """The time origin of the swimlane trace: the earliest task dispatch or stall start (0 if none)."""
    starts = ([int(sw["dispatch_time"].min())] if len(sw) else []) + [int(s["start_ns"]) for s in stalls]
    return min(starts) if starts else 0


def write_swimlane(out_dir: str, stalls: list) -> int:
    """``swimlane.csv`` and ``swimlane.trace.json`` of a collector output directory; returns the rows.

    Written column-wise (numpy to Python lists, one %-format per row): a run of millions of tasks
    takes seconds here, not the minutes of a per-row numpy access."""
    sw = join(load_output(out_dir))
    rid, thr, disp, fin, st, en = (sw[c].tolist() for c in ("reg_task_id", "thread", "dispatch_time",
                                                            "finish_time", "start_time", "end_time"))
    cpu_ns = (sw["finish_time"].astype(np.int64) - sw["dispatch_time"].astype(np.int64)).tolist()
    core_ns = (sw["end_time"].astype(np.int64) - sw["start_time"].astype(np.int64)).tolist()
    with open(os.path.join(out_dir, "swimlane.csv"), "w") as f:
        f.write("reg_task_id,thread,dispatch_time,finish_time,start_time,end_time,"
                "aicpu_ns,aicore_ns\n")
        if len(sw):
            f.write("\n".join(["%d,%d,%d,%d,%d,%d,%d,%d" % row
                                for row in zip(rid, thr, disp, fin, st, en, cpu_ns, core_ns)]))
            f.write("\n")
    t0 = swimlane_t0(sw, stalls)
    us = lambda ns: (int(ns) - t0) / 1000.0  # noqa: E731
    head = []
    threads = sorted({int(t) for t in sw["thread"]} | {s["thread"] for s in stalls})
    for t in threads:
        head.append({"ph": "M", "name": "process_name", "pid": t, "args": {"name": f"AICPU thread {t}"}})
        for tid, name in ((1, "aicpu (scheduler view)"), (2, "aicore (ground truth)"), (3, "stalls")):
            head.append({"ph": "M", "name": "thread_name", "pid": t, "tid": tid, "args": {"name": name}})
    for s in stalls:
        head.append({"ph": "X", "name": f"stall ({s['gate']} gate, {s['kind']})", "pid": s["thread"], "tid": 3,
                     "ts": us(s["start_ns"]), "dur": max((s["end_ns"] - s["start_ns"]) / 1000.0, 0.001),
                     "args": {"outcome": s["outcome"], "lane": s["lane"]}})
    ev = [json.dumps(e) for e in head]
    if len(sw):
        ts_cpu = ((sw["dispatch_time"].astype(np.int64) - t0) / 1000.0).tolist()
        ts_core = ((sw["start_time"].astype(np.int64) - t0) / 1000.0).tolist()
        d_cpu = np.maximum(np.array(cpu_ns, np.float64) / 1000.0, 0.001).tolist()
        d_core = np.maximum(np.array(core_ns, np.float64) / 1000.0, 0.001).tolist()
        task = '{"ph": "X", "name": "task", "pid": %d, "tid": 1, "ts": %r, "dur": %r, "args": {"reg_task_id": "%#x"}}'
        kern = '{"ph": "X", "name": "kernel", "pid": %d, "tid": 2, "ts": %r, "dur": %r, "args": {"reg_task_id": "%#x"}}'
        for t, a, b, c, d, r in zip(thr, ts_cpu, d_cpu, ts_core, d_core, rid):
            ev.append(task % (t, a, b, r))
            ev.append(kern % (t, c, d, r))
    with open(os.path.join(out_dir, "swimlane.trace.json"), "w") as f:
        f.write('{"traceEvents": [')
        f.write(", ".join(ev))
        f.write('], "displayTimeUnit": "ns"}')
    return len(sw)
