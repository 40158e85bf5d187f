"""The accounting of a DFX run, per (thread, kind) pool, and the supervisor's salvage.

The invariant: every record a writer counted (``total``) is either collected or dropped,
``collected + dropped == total``, per pool. ``accounting`` reads the counters of both sides and,
for every pool where the invariant does not hold (and for every pool where something was rejected,
lost or adopted even if it balances), says why, in numbers that add up: with ``published`` the
device's count of records published on its ready queue and the host's loss words
(``shm_layout.dfx.pool_loss``),

    total - dropped - collected =   (total - dropped - in_buffer - published)   device counters disagree
                                  + in_buffer                                   left in current buffers
                                  + (published - (collected + lost - overlap))  published, never collected
                                  + lost - overlap                              gaps / overlaps seen by the host

each term named with what explains it (a corrupt thread, a dead lane, a dead collector, rejected
entries, ...). Read while a lane runs (a live snapshot: ``hdemu status``, a program polling its own
run), the first term may be a few records off for the instructions in which the lane moves records
between its counters (a buffer switch: current_count -> published_record_count); it is then named a
live snapshot, not a disagreement. A thread parked at a gate leaves its counters consistent. The
supervisor writes it to ``accounting.json`` after everything stopped and logs every imbalance; the
collector writes its own reading to ``summary.json``.

``salvage`` runs in the supervisor when the collector died: it appends every buffer still published
on a ready queue (checked like the collector checks them: the ownership word READY with the entry's
seq, a sound header) and the current buffers of dead lanes to the outputs and counts them collected.
"""
from __future__ import annotations

import os

import numpy as np

from shm_layout import dfx as D
from shm_layout.layouts import struct_of
from shm_layout.sync import pid_alive

from ._ownership import add_loss, check_sequence, reject

__all__ = ["accounting", "salvage", "lane_dead"]

_ENTRY = struct_of(D.ready_entry)
_BUF_HDR = struct_of(D.buffer_header)
_BUF_RECORDS = D.buffer_header.itemsize          # a buffer's records follow its header
_FINISHED = (D.LANE_FLUSHED, D.LANE_EXITED, D.LANE_IDLE_HOST_GONE)
_REJECT_CAUSES = (D.LOSS_DUPLICATE, D.LOSS_FOREIGN, D.LOSS_UNRELEASED, D.LOSS_MALFORMED)


def lane_dead(st) -> bool:
    """A lane (its ``lane_status`` record) that started and is gone without finishing its run."""
    pid = int(st["pid"])
    return int(st["state"]) not in _FINISHED and pid != 0 and not pid_alive(pid)


def lane_live(st) -> bool:
    """A lane (its ``lane_status`` record) that is running: its device counters may be read mid-update."""
    pid = int(st["pid"])
    return int(st["state"]) in (D.LANE_STARTING, D.LANE_RUNNING) and pid != 0 and pid_alive(pid)


def _pool_causes(p: dict, t: int, lane: int, *, corrupt: bool, dead: bool, collector_gone: bool,
                 causes: int, live: bool = False) -> list[str]:
    out = []
    if corrupt:
        out.append(f"thread {t} marked corrupt by the collector: its ready queue was no longer drained"
                   + (" (a collector error)" if causes & D.LOSS_COLLECTOR_ERROR else ""))
    if dead:
        out.append(f"lane {lane} died before the end of the run")
    if p["rejected"]:
        why = ", ".join(D.LOSS_NAMES[c] for c in _REJECT_CAUSES if causes & c) or "rejected"
        out.append(f"{p['rejected']} ready entries rejected ({why})")
    if p["lost"]:
        out.append(f"{p['lost']} records lost in gaps of the published sequence (a deflated record count, "
                   f"a lost or rejected entry)")
    if p["overlap"]:
        out.append(f"{p['overlap']} records collected beyond the published sequence (an inflated record count)")
    unc = p["published"] - (p["collected"] + p["lost"] - p["overlap"])
    if unc > 0:
        where = ("its thread was corrupt" if corrupt else "the collector died" if collector_gone
                 else "still on the ready queue")
        out.append(f"{unc} records published but not collected ({where})")
    elif unc < 0:
        out.append(f"{-unc} records collected that the device never counted published")
    if p["in_buffer"]:
        out.append(f"{p['in_buffer']} records still in current buffers" + (" of the dead lane" if dead else ""))
    dev = p["total"] - p["dropped"] - p["in_buffer"] - p["published"]
    if dev and live:
        out.append(f"device counters read mid-update by {dev} records (total - dropped - in_buffer - "
                   f"published: a live snapshot, lane {lane} is running; they settle when it stops)")
    elif dev:
        out.append(f"device counters disagree by {dev} records (total - dropped - in_buffer - published"
                   f"{': the lane died in the middle of a write' if dead else ''})")
    if p["adopted"]:
        out.append(f"{p['adopted']} records collected from the current buffers of the dead lane")
    if p["bad_payloads"]:
        out.append(f"{p['bad_payloads']} ArgsDump payloads outside their arena (records collected without them)")
    if causes & D.LOSS_SALVAGED:
        out.append("salvaged by the supervisor after the collector died")
    return out


def accounting(pm) -> dict:
    """Per pool: total, dropped, in_buffer, published (device counters), collected and the host's loss
    words, ``missing`` (total - dropped - collected) and ``causes``; per task ring the events the
    command processor dropped (a full ring, or a dead consumer) plus those a dead lane left unread in
    its rings (those packets never became records, so no pool counts them; ``unrecorded_events`` sums
    them, each ring's ``causes`` says why);
    ``imbalances`` lists every pool with records missing (or extra), ``balanced`` says whether there
    is none."""
    g = pm.topo.dfx
    hdr = pm.segs["dfxhdr"]
    ctl = pm.segs["dfxctl"]
    c64 = ctl.u8.view(np.uint64)
    chdr = ctl.view(D.ctl_header, 0, 1)[0]
    collector_gone = int(chdr["collector_state"]) != D.COL_DONE and not pid_alive(int(chdr["collector_pid"]))
    tpl = g.prof["threads_per_lane"]
    status = [ctl.view(D.lane_status, g.lane_status_off(lane), 1)[0] for lane in range(g.prof["lanes"])]
    dead = {lane: lane_dead(st) for lane, st in enumerate(status)}
    live = {lane: lane_live(st) for lane, st in enumerate(status)}
    pools, imbalances = [], []
    for t in range(g.T):
        corrupt = bool(c64[g.corrupt_word(t)])
        lane = t // tpl
        for k in g.kinds:
            pb = hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]
            p = {"thread": t, "kind": D.KIND_NAMES[k], "total": int(pb["total_record_count"]),
                 "dropped": int(pb["dropped_record_count"]), "collected": int(c64[g.collected_word(t, k)]),
                 "in_buffer": int(pb["current_count"]), "published": int(pb["published_record_count"])}
            for f in ("lost", "overlap", "rejected", "bad_payloads", "adopted"):
                p[f] = int(c64[g.loss_word(t, k, f)])
            p["missing"] = p["total"] - p["dropped"] - p["collected"]
            p["causes"] = _pool_causes(p, t, lane, corrupt=corrupt, dead=dead[lane], collector_gone=collector_gone,
                                       causes=int(c64[g.loss_word(t, k, "causes")]), live=live[lane])
            if not p["missing"] and not (p["rejected"] or p["lost"] or p["overlap"] or p["adopted"]
                                         or p["bad_payloads"]):
                p["causes"] = []          # balanced and nothing happened: the state of a live run is no cause
            pools.append(p)
            if p["missing"]:
                imbalances.append({"thread": t, "kind": p["kind"], "missing": p["missing"], "causes": p["causes"]})
    rings = []
    for r in range(g.n_rings):      # packets executed but never turned into records: before any pool
        rh = ctl.view(D.task_ring_header, g.task_ring_off(r), 1)[0]
        n = int(rh["dropped"])
        t = g.thread_of_ring(r)
        why = []
        if n:
            why.append(f"{n} executed packets of task ring {r} were never turned into records: "
                       + (f"the lane of AICPU thread {t} is dead" if dead[t // tpl] else
                          f"the ring was full (AICPU thread {t} fell {D.TASK_RING} events behind)"))
        unread = int(rh["tail"]) - int(rh["head"]) if dead[t // tpl] else 0
        if unread > 0:      # published before the lane was marked dead: nobody will ever read them
            n += unread
            why.append(f"{unread} executed packets of task ring {r} were left unread when the lane of AICPU "
                       f"thread {t} died")
        rings.append({"ring": r, "thread": t, "dropped_events": n, "causes": why})
    return {"pools": pools, "task_rings": rings, "unrecorded_events": sum(r["dropped_events"] for r in rings),
            "imbalances": imbalances, "balanced": not imbalances,
            "corrupt_threads": [t for t in range(g.T) if c64[g.corrupt_word(t)]],
            "dead_lanes": [lane for lane, d in dead.items() if d],
            "rejected_entries_without_pool": {t: int(c64[g.rejected_word(t)]) for t in range(g.T)
                                              if c64[g.rejected_word(t)]}}


def salvage(pm, out_dir: str) -> int:
    """Run by the supervisor when the collector died: append every buffer still published on a ready
    queue (from the device's queue_heads to queue_tails) and every current buffer of a dead lane to
    the output and count it collected, so that collected + dropped == total holds. Returns the number
    of records salvaged."""
    g = pm.topo.dfx
    hdr = pm.segs["dfxhdr"]
    buf = pm.segs["dfxbuf"]
    ctl = pm.segs["dfxctl"]
    c64 = ctl.u8.view(np.uint64)
    h32 = hdr.u8.view(np.uint32)
    h64 = hdr.u8.view(np.uint64)
    os.makedirs(out_dir, exist_ok=True)
    n_total = 0
    files = {}

    def append(t, k, ptr, count):
        f = files.get(k)
        if f is None:
            f = files[k] = open(os.path.join(out_dir, f"{D.KIND_NAMES[k]}.bin"), "ab", buffering=0)
        rec0 = ptr - D.DFX_BUF_BASE + _BUF_RECORDS
        f.write(buf.u8[rec0:rec0 + count * g.rec_dtype[k].itemsize].tobytes())
        c64[g.collected_word(t, k)] += count

    try:
        for t in range(g.T):
            if c64[g.corrupt_word(t)]:
                continue
            head, tail = int(h32[g.head_off(t) // 4]), int(h32[g.tail_off(t) // 4])
            if head >= g.N or tail >= g.N:
                continue
            while head != tail:
                core, k, ptr, seq, count = _ENTRY.unpack_from(hdr.buf, g.entry_off(t, head))
                head = (head + 1) % g.N
                try:
                    own = g.owner_off(g.buffer_id(k, ptr)) // 8
                except (ValueError, KeyError):
                    reject(c64, g, t, None, D.LOSS_MALFORMED)
                    continue
                word = int(h64[own])
                if word == D.buffer_owner_word(D.BUF_COLLECTED, t, seq):
                    continue      # the collector took it and died before its head write-back
                if core != t or word != D.buffer_owner_word(D.BUF_READY, t, seq):
                    reject(c64, g, t, k, D.LOSS_UNRELEASED)
                    continue
                hcount, bk, bseq, bthread, before = _BUF_HDR.unpack_from(buf.buf, ptr - D.DFX_BUF_BASE)
                if not (hcount == count <= g.per_buf[k] and bk == k and bseq == seq and bthread == t):
                    reject(c64, g, t, k, D.LOSS_MALFORMED)
                else:
                    check_sequence(c64, g, t, k, int(c64[g.collected_word(t, k)]), before)
                    append(t, k, ptr, count)
                    n_total += count
                    add_loss(c64, g, t, k, "causes", 0, D.LOSS_SALVAGED)
                h64[own] = D.buffer_owner_word(D.BUF_COLLECTED, t, seq)
            h32[g.head_off(t) // 4] = head
        for lane in range(g.prof["lanes"]):
            if not lane_dead(ctl.view(D.lane_status, g.lane_status_off(lane), 1)[0]):
                continue
            for t in range(lane * g.prof["threads_per_lane"], (lane + 1) * g.prof["threads_per_lane"]):
                for k in g.kinds:
                    pb = hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]
                    ptr, count, seq = int(pb["current_buf_ptr"]), int(pb["current_count"]), int(pb["current_buf_seq"])
                    if not ptr or not count or count > g.per_buf[k]:
                        continue
                    try:
                        own = g.owner_off(g.buffer_id(k, ptr)) // 8
                    except ValueError:
                        continue
                    if int(h64[own]) != D.buffer_owner_word(D.BUF_CURRENT, t, seq):
                        continue
                    append(t, k, ptr, count)
                    n_total += count
                    add_loss(c64, g, t, k, "adopted", count, D.LOSS_ADOPTED | D.LOSS_SALVAGED)
                    h64[own] = D.buffer_owner_word(D.BUF_COLLECTED, t, seq)
                    pb["published_record_count"] = int(pb["published_record_count"]) + count
                    pb["current_count"] = 0
                    pb["current_buf_ptr"] = 0
    finally:
        for f in files.values():
            f.close()
    return n_total
