"""Readers of a DFX run, for the supervisor, ``hdemu status`` and tests: lane statistics, the stall
log and the collector's output files (the per-pool accounting and the salvage after a dead collector
are ``_accounting``'s; re-exported here)."""
from __future__ import annotations

import json
import os

import numpy as np

from shm_layout import dfx as D
from shm_layout.layouts import word_of

from ._accounting import accounting, lane_dead, salvage

__all__ = ["accounting", "lane_statistics", "read_stalls", "salvage", "load_output"]

# Everything read by hand below is derived from the declared layouts, once, here.
_RING_DROPPED64 = word_of(D.task_ring_header, "dropped")
_RING_HEAD64 = word_of(D.task_ring_header, "head")
_RING_TAIL64 = word_of(D.task_ring_header, "tail")
_STALL_RECORDS = D.stall_log_header.itemsize     # a stall log's records follow its header


def lane_statistics(pm) -> list[dict]:
    """Per lane: pid, state, records, drops, stalls, stall time, tasks (published as the lane goes),
    expired backstops, and task events dropped: refused on a full ring or a dead lane, plus, for a
    dead lane, the events left unread in its rings."""
    g = pm.topo.dfx
    ctl = pm.segs["dfxctl"]
    out = []
    for i in range(g.prof["lanes"]):
        st = ctl.view(D.lane_status, g.lane_status_off(i), 1)[0]
        threads = range(i * g.prof["threads_per_lane"], (i + 1) * g.prof["threads_per_lane"])
        hdr = pm.segs["dfxhdr"]
        total = dropped = 0
        for t in threads:
            for k in g.kinds:
                pb = hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]
                total += int(pb["total_record_count"])
                dropped += int(pb["dropped_record_count"])
        c64 = ctl.u8.view(np.uint64)
        dead = lane_dead(st)
        ring_drops = 0
        for r in range(g.n_rings):
            if g.thread_of_ring(r) in threads:
                hi = g.task_ring_off(r) // 8
                ring_drops += int(c64[hi + _RING_DROPPED64])
                if dead:            # nobody will ever read them
                    ring_drops += int(c64[hi + _RING_TAIL64]) - int(c64[hi + _RING_HEAD64])
        state = D.LANE_STATE_NAMES.get(int(st["state"]), "?")
        out.append({"lane": i, "pid": int(st["pid"]), "state": "dead" if dead else state,
                    "records": total, "drops": dropped, "stalls": int(st["stalls"]),
                    "stall_ms": int(st["stall_ns"]) / 1e6, "backstops": int(st["backstops"]),
                    "tasks": int(st["tasks"]), "task_events_dropped": ring_drops})
    return out


def read_stalls(pm) -> list[dict]:
    g = pm.topo.dfx
    ctl = pm.segs["dfxctl"]
    out = []
    for t in range(g.T):
        base = g.stall_log_off(t)
        n = int(ctl.view(D.stall_log_header, base, 1)[0]["count"])
        recs = ctl.view(D.stall_record, base + _STALL_RECORDS, D.STALL_LOG)
        for i in range(max(0, n - D.STALL_LOG), n):
            r = recs[i % D.STALL_LOG]
            out.append({"thread": int(r["thread"]), "lane": g.lane_of_thread(int(r["thread"])),
                        "kind": D.KIND_NAMES[int(r["kind"])], "gate": D.GATE_NAMES.get(int(r["gate"]), "?"),
                        "start_ns": int(r["start_ns"]), "end_ns": int(r["end_ns"]),
                        "outcome": "recovered" if int(r["outcome"]) == D.STALL_RECOVERED else "expired",
                        "release_ns": int(r["release_ns"])})
    return sorted(out, key=lambda r: r["start_ns"])


def load_output(out_dir: str) -> dict:
    """{kind name: numpy records} of a collector output directory."""
    with open(os.path.join(out_dir, "format.json")) as f:
        fmt = json.load(f)
    out = {}
    for name, descr in fmt["kinds"].items():
        dt = np.dtype([tuple(x) if len(x) == 2 else (x[0], x[1], tuple(x[2])) for x in descr])
        path = os.path.join(out_dir, f"{name}.bin")
        out[name] = np.fromfile(path, dtype=dt) if os.path.getsize(path) else np.zeros(0, dt)
    return out


