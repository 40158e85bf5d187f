"""Turn every process's trace ring into one Chrome/Perfetto JSON trace.

Tracks: one process entry per hdemu process (pid); within it a thread track per queue (host
events: launches, doorbells) or per engine (device: kernel and copy slices), and one of library calls
(``EV_LIBRARY_CALL``: a slice per call of a library on the HIP face, e.g. hostside.miopen, named by
the level that answered it). Kernel executions are
"X" slices, doorbells "i" instants, and a flow ("s" -> "f") links each launch to its execution by
dispatch id. ``fault_windows`` (``hdemu run``) adds a process of its own, "faults", with one track:
a slice per fault with a duration, an instant per fault without one. Timestamps are microseconds from
the earliest event; ``otherData`` keeps that origin as an absolute CLOCK_MONOTONIC time
(``clock_origin_ns``), so traces of separate runs line up.
"""
from __future__ import annotations

import json
import os

from shm_layout import layouts as L
from shm_layout.trace import read_all

_NAMES = {L.EV_DOORBELL: "doorbell", L.EV_LAUNCH: "launch", L.EV_COPY_SUBMIT: "copy submit",
          L.EV_QUEUE_ERROR: "queue error", L.EV_BARRIER_END: "barrier"}


#: The pid and tid of the fault track (no process has pid 0).
FAULT_PID, FAULT_TID = 0, 1


def _fault_events(windows, us) -> list[dict]:
    """The fault track: ``windows`` are dicts with ``name``, ``start_ns``, optional ``end_ns`` and
    ``args``."""
    out = [{"ph": "M", "name": "process_name", "pid": FAULT_PID, "tid": FAULT_TID, "args": {"name": "faults"}},
           {"ph": "M", "name": "thread_name", "pid": FAULT_PID, "tid": FAULT_TID, "args": {"name": "fault windows"}}]
    for w in windows:
        base = {"name": w["name"], "cat": "fault", "pid": FAULT_PID, "tid": FAULT_TID, "ts": us(w["start_ns"]),
                "args": w.get("args") or {}}
        if w.get("end_ns") is not None:
            out.append({**base, "ph": "X", "dur": max((w["end_ns"] - w["start_ns"]) / 1000.0, 0.001)})
        else:
            out.append({**base, "ph": "i", "s": "g"})
    return out


def build_trace(pm, fault_windows=None) -> dict:
    events = []
    t0 = None
    rings = read_all(pm)
    for _i, _name, _role, ev in rings:
        if len(ev):
            first = int(ev["ts"].min())      # (a library call is recorded at its end with its start)
            t0 = first if t0 is None else min(t0, first)
    for w in fault_windows or ():
        t0 = int(w["start_ns"]) if t0 is None else min(t0, int(w["start_ns"]))
    t0 = t0 or 0
    us = lambda ns: (int(ns) - t0) / 1000.0  # noqa: E731
    seen_threads = set()
    for _i, name, role, ev in rings:
        open_slices = {}
        for e in ev:
            kind, track, pid, a, b, ts = int(e["kind"]), int(e["track"]), int(e["pid"]), int(e["a"]), int(e["b"]), int(e["ts"])
            device = role == L.ROLE_CP
            tid = (1000 + track) if device else track
            if (pid, tid) not in seen_threads:
                seen_threads.add((pid, tid))
                tname = (f"engine {track}" if device else
                         "library calls" if track == L.TRACK_LIBRARY else f"queue {track}")
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": tname}})
                events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": tid, "args": {"name": name}})
            if kind in (L.EV_KERNEL_BEGIN, L.EV_COPY_BEGIN):
                open_slices[(kind, a)] = ts
            elif kind in (L.EV_KERNEL_END, L.EV_COPY_END):
                begin_kind = L.EV_KERNEL_BEGIN if kind == L.EV_KERNEL_END else L.EV_COPY_BEGIN
                start = open_slices.pop((begin_kind, a), None)
                if start is None:
                    continue
                agent, q, idx = L.split_dispatch_id(a)
                nm = "kernel" if kind == L.EV_KERNEL_END else "copy"
                events.append({"ph": "X", "name": nm, "cat": nm, "pid": pid, "tid": tid, "ts": us(start),
                               "dur": max((ts - start) / 1000.0, 0.001),
                               "args": {"dispatch_id": hex(a), "agent": agent, "queue": q, "index": idx,
                                        ("kernel_object" if nm == "kernel" else "bytes"): (hex(b) if nm == "kernel" else b)}})
                events.append({"ph": "f", "bp": "e", "name": "launch", "cat": "flow", "id": a, "pid": pid,
                               "tid": tid, "ts": us(start)})
            elif kind == L.EV_LIBRARY_CALL:        # a library's call (hip.hdemuTraceLibraryCall): ts is its start
                level = L.LIBRARY_LEVELS[a] if a < len(L.LIBRARY_LEVELS) else f"level {a}"
                events.append({"ph": "X", "name": f"library call ({level})", "cat": "library", "pid": pid, "tid": tid,
                               "ts": us(ts), "dur": max(b / 1000.0, 0.001), "args": {"level": level}})
            else:
                nm = _NAMES.get(kind, f"event{kind}")
                events.append({"ph": "i", "s": "t", "name": nm, "pid": pid, "tid": tid, "ts": us(ts),
                               "args": {"a": hex(a), "b": b}})
                if kind in (L.EV_LAUNCH, L.EV_COPY_SUBMIT):
                    events.append({"ph": "s", "name": "launch", "cat": "flow", "id": a, "pid": pid,
                                   "tid": tid, "ts": us(ts)})
    if fault_windows:
        events += _fault_events(fault_windows, us)
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"clock": "CLOCK_MONOTONIC", "clock_origin_ns": t0,
                          "exporter_pid": os.getpid()}}


def write_trace(pm, path: str, fault_windows=None) -> int:
    """Write the trace JSON to ``path`` (with the fault track when ``fault_windows`` is given);
    returns the number of trace events."""
    t = build_trace(pm, fault_windows)
    with open(path, "w") as f:
        json.dump(t, f)
    return len(t["traceEvents"])
