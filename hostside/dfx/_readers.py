"""Readers of a DFX run, for the supervisor, ``hdemu status`` and tests: per-pool accounting, lane
statistics, the stall log, salvage after a dead collector, and the collector's output files."""
from __future__ import annotations

import json
import os

import numpy as np

from shm_layout import dfx as D
from shm_layout.layouts import struct_of, word_of

__all__ = ["accounting", "lane_statistics", "read_stalls", "salvage", "load_output"]

# Everything read by hand below is derived from the declared layouts, once, here.
_ENTRY = struct_of(D.ready_entry)
_BH_COUNT = struct_of(D.buffer_header, "record_count", "record_count")
_BUF_RECORDS = D.buffer_header.itemsize          # a buffer's records follow its header
_RING_DROPPED64 = word_of(D.task_ring_header, "dropped")
_STALL_RECORDS = D.stall_log_header.itemsize     # a stall log's records follow its header


def accounting(pm) -> dict:
    """Per pool: total and dropped (device counters) and collected (host counter)."""
    g = pm.topo.dfx
    hdr = pm.segs["dfxhdr"]
    ctl = pm.segs["dfxctl"]
    c64 = ctl.u8.view(np.uint64)
    pools = []
    for t in range(g.T):
        for k in g.kinds:
            pb = hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]
            collected = int(c64[g.collected_word(t, k)])
            pools.append({"thread": t, "kind": D.KIND_NAMES[k], "total": int(pb["total_record_count"]),
                          "dropped": int(pb["dropped_record_count"]), "collected": collected,
                          "in_buffer": int(pb["current_count"])})
    return {"pools": pools}


def lane_statistics(pm) -> list[dict]:
    """Per lane: pid, state, records, drops, stalls, stall time, tasks, expired backstops."""
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
        ring_drops = sum(int(c64[g.task_ring_off(r) // 8 + _RING_DROPPED64]) for r in range(g.n_rings)
                         if g.thread_of_ring(r) in threads)
        out.append({"lane": i, "pid": int(st["pid"]), "state": D.LANE_STATE_NAMES.get(int(st["state"]), "?"),
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


def salvage(pm, out_dir: str) -> int:
    """Run by the supervisor when the collector died: append every buffer still published on a ready
    queue (from the device's queue_heads to queue_tails) to the output and count it collected, so
    that collected + dropped == total holds. Returns the number of records salvaged."""
    g = pm.topo.dfx
    hdr = pm.segs["dfxhdr"]
    buf = pm.segs["dfxbuf"]
    c64 = pm.segs["dfxctl"].u8.view(np.uint64)
    h32 = hdr.u8.view(np.uint32)
    os.makedirs(out_dir, exist_ok=True)
    n_total = 0
    files = {}
    try:
        for t in range(g.T):
            if c64[g.corrupt_word(t)]:
                continue
            head, tail = int(h32[g.head_off(t) // 4]), int(h32[g.tail_off(t) // 4])
            if head >= g.N or tail >= g.N:
                continue
            while head != tail:
                core, k, ptr, seq, _p = _ENTRY.unpack_from(hdr.buf, g.entry_off(t, head))
                head = (head + 1) % g.N
                try:
                    g.check_buffer_kind(k, ptr)
                except (ValueError, KeyError):
                    continue
                off = ptr - D.DFX_BUF_BASE
                count, = _BH_COUNT.unpack_from(buf.buf, off)
                if core != t or count > g.per_buf[k]:
                    continue
                dt = g.rec_dtype[k]
                rec0 = off + _BUF_RECORDS
                data = buf.u8[rec0:rec0 + count * dt.itemsize]
                f = files.get(k)
                if f is None:
                    f = files[k] = open(os.path.join(out_dir, f"{D.KIND_NAMES[k]}.bin"), "ab")
                f.write(data.tobytes())
                c64[g.collected_word(t, k)] += count
                n_total += count
            h32[g.head_off(t) // 4] = head
    finally:
        for f in files.values():
            f.close()
    return n_total


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


