"""Study ``dispatch``: latency distributions of the dispatch path against queues, engines, client
threads, agents and roles per core.

Two latencies, from the trace rings every process already writes (docs/ARCHITECTURE.md, *Trace
rings*): **doorbell-to-fetch** (the host's ``EV_DOORBELL`` to the engine's ``EV_KERNEL_BEGIN`` of the
same packet: the wake-up and pick-up) and **launch-to-completion** (``EV_LAUNCH`` to
``EV_KERNEL_END``), matched by dispatch id; plus the host-observed round trip (launch to
``hipStreamSynchronize`` returned), which each client thread records into its own
``shm_layout.histogram`` record in a shared board, merged by adding buckets. "Stalled" is the share
of launch-to-completion spent before the engine fetched the packet (``queue_stall_share``) and the
share of the clients' wall time spent blocked in synchronisation (``host_wait_share``).

Every point is one platform (started by this process, standalone) and client processes started
with ``python -m hostside.studies _worker dispatch SPEC``. The roles-per-core sweep runs more client
processes than this 2-core machine has cores: the regime where spin-handshake emulators livelock or
time out falsely. The claim: every launch completes, no wait times out (``HDEMU_WAIT_TIMEOUT_S`` is
set to ``WAIT_TIMEOUT_S``), throughput degrades, it does not collapse.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

from hostside import hip
from hostside.platform import Platform, write_trace
from shm_layout import histogram as H
from shm_layout import layouts as L
from shm_layout.segments import Segment, new_run_token, segment_name
from shm_layout.trace import read_all

from ._common import Progress, Study

__all__ = ["run", "client", "trace_latencies"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("")
def empty(ctx):
    pass
'''
WAIT_TIMEOUT_S = 30.0
CLIENT_TIMEOUT_S = 300.0
CLAIM = "no false timeout or livelock: every launch completes at every roles/core, 0 errors"
_AGENT_SHIFT = L.dispatch_id(1, 0, 0).bit_length() - 1
_SLOT_SHIFT = L.dispatch_id(0, 1, 0).bit_length() - 1
_SLOT_BITS = _AGENT_SHIFT - _SLOT_SHIFT


def client(spec: dict) -> dict:
    """A client process: ``threads`` threads, each with ``queues`` streams on device ``t % agents``,
    ``launches`` rounds of (one launch per stream, then a sync of each); each thread records its round
    trips (ns) into histogram record ``first + t`` of the board."""
    seg = Segment.attach(spec["board"])
    board = seg.view(H.histogram, H.board_header.itemsize, spec["records"])
    hdr = seg.view(H.board_header, 0, 1)
    mod = hip.hipModuleLoadData(KERNELS, "studies_dispatch.py")
    ndev = hip.hipGetDeviceCount()
    errors, sync_ns, done = [], [0] * spec["threads"], [0] * spec["threads"]
    barrier = threading.Barrier(spec["threads"] + 1)

    def body(t: int) -> None:
        try:
            hip.hipSetDevice((spec["index"] + t) % min(ndev, spec["agents"]))
            f = hip.hipModuleGetFunction(mod, "empty")
            streams = [hip.hipStreamCreate() for _ in range(spec["queues"])]
            for s in streams:
                hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
                hip.hipStreamSynchronize(s)
        except Exception as exc:        # reported, not raised: the study counts errors
            errors.append(f"setup: {type(exc).__name__}: {exc}")
            barrier.abort()
            return
        rec = board[spec["first"] + t]
        samples = np.zeros(spec["launches"] * len(streams), np.int64)
        n = 0
        try:
            barrier.wait()
            clock = time.perf_counter_ns
            for _ in range(spec["launches"]):
                starts = []
                for s in streams:
                    starts.append(clock())
                    hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
                t0 = clock()
                for s, ts in zip(streams, starts):
                    hip.hipStreamSynchronize(s)
                    samples[n] = clock() - ts
                    n += 1
                sync_ns[t] += clock() - t0
                done[t] += len(streams)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        H.record(rec, samples[:n])
        for s in streams:
            hip.hipStreamDestroy(s)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(spec["threads"])]
    for th in threads:
        th.start()
    hdr["ready"][0][spec["index"]] = 1
    while not int(hdr["go"][0]):
        time.sleep(0.001)
    t_start = time.monotonic_ns()
    try:
        barrier.wait(timeout=CLIENT_TIMEOUT_S)
    except threading.BrokenBarrierError:
        pass
    w0 = time.perf_counter_ns()
    for th in threads:
        th.join()
    wall = time.perf_counter_ns() - w0
    t_end = time.monotonic_ns()
    del board, hdr
    seg.close()
    return {"launches": sum(done), "errors": errors[:5], "n_errors": len(errors), "wall_s": wall / 1e9,
            "sync_s": sum(sync_ns) / 1e9, "t_start_ns": t_start, "t_end_ns": t_end}


def trace_latencies(pm, t_from: int, t_to: int) -> tuple[np.ndarray, np.ndarray]:
    """(doorbell-to-fetch, launch-to-completion) histogram records, one per host ring, of the events
    between ``t_from`` and ``t_to`` (monotonic ns), matched with the command processors' events."""
    rings = read_all(pm)
    begin, end = {}, {}
    for _i, _name, role, ev in rings:
        if role != L.ROLE_CP:
            continue
        ev = ev[(ev["ts"] >= t_from) & (ev["ts"] <= t_to + 10**9)]
        for kind, into in ((L.EV_KERNEL_BEGIN, begin), (L.EV_KERNEL_END, end)):
            e = ev[ev["kind"] == kind]
            into.update(zip(e["a"].tolist(), e["ts"].tolist()))
    d2f, l2c = [], []
    for _i, _name, role, ev in rings:
        if role == L.ROLE_CP:
            continue
        ev = ev[(ev["ts"] >= t_from) & (ev["ts"] <= t_to)]
        db = ev[ev["kind"] == L.EV_DOORBELL]
        gid = db["a"].astype(np.uint64)
        did = (((gid >> np.uint64(_SLOT_BITS)) << np.uint64(_AGENT_SHIFT))
               | ((gid & np.uint64((1 << _SLOT_BITS) - 1)) << np.uint64(_SLOT_SHIFT)) | db["b"].astype(np.uint64))
        h1, h2 = H.new(1), H.new(1)
        H.record(h1[0], [begin[d] - t for d, t in zip(did.tolist(), db["ts"].tolist()) if d in begin and begin[d] >= t])
        la = ev[ev["kind"] == L.EV_LAUNCH]
        H.record(h2[0], [end[d] - t for d, t in zip(la["a"].tolist(), la["ts"].tolist()) if d in end and end[d] >= t])
        d2f.append(h1[0])
        l2c.append(h2[0])
    return np.array(d2f, H.histogram), np.array(l2c, H.histogram)


def _points(small: bool) -> list[dict]:
    """The points, one factor at a time from one base, grouped by platform (agents, engines). The
    small run puts every point on one 2-agent, 2-engine platform (one platform start)."""
    if small:
        base = {"agents": 2, "engines": 2, "clients": 1, "threads": 1, "queues": 1}
        return [dict(base, sweep="base", value=1), dict(base, sweep="queues", value=2, queues=2),
                dict(base, sweep="roles_per_core", value=2, clients=2)]
    base = {"agents": 1, "engines": 1, "clients": 1, "threads": 1, "queues": 1}
    pts = []

    def add(sweep, value, **kw):
        pts.append(dict(base, sweep=sweep, value=value, **kw))

    add("base", 1)
    for q in (2, 4, 8):
        add("queues", q, queues=q)
    for t in (2, 4):
        add("threads", t, threads=t)
    add("engines", 2, queues=2, engines=2)
    add("agents", 2, agents=2, threads=2)
    for c in (2, 4, 8, 12):
        add("roles_per_core", c, agents=2, clients=c)
    return pts


def _run_point(plat, pt: dict, launches: int) -> dict:
    records = pt["clients"] * pt["threads"]
    seg = Segment.create(segment_name(os.getpid(), new_run_token(), "studyhist"), H.board_bytes(records))
    try:
        hdr = seg.view(H.board_header, 0, 1)
        H.new(records, seg.buf, H.board_header.itemsize)
        hdr["writers"] = records
        env = dict(os.environ, HDEMU_PLATFORM=plat.name, HDEMU_WAIT_TIMEOUT_S=str(WAIT_TIMEOUT_S))
        procs = []
        for c in range(pt["clients"]):
            spec = {"board": seg.name, "records": records, "index": c, "first": c * pt["threads"],
                    "threads": pt["threads"], "queues": pt["queues"], "launches": launches, "agents": pt["agents"]}
            procs.append(subprocess.Popen([sys.executable, "-m", "hostside.studies", "_worker", "dispatch",
                                           json.dumps(spec)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, env=env))
        try:
            deadline = time.monotonic() + 60
            while not all(hdr["ready"][0][:pt["clients"]]) and time.monotonic() < deadline:
                if any(p.poll() is not None for p in procs):
                    break
                time.sleep(0.002)
            hdr["go"] = 1
            outs = []
            for p in procs:
                so, se = p.communicate(timeout=CLIENT_TIMEOUT_S)
                lines = so.strip().splitlines()
                if p.returncode or not lines:
                    outs.append({"launches": 0, "n_errors": 1, "errors": [f"client exit {p.returncode}: "
                                                                          f"{se.strip()[-400:]}"],
                                 "wall_s": 0.0, "sync_s": 0.0, "t_start_ns": 0, "t_end_ns": 0})
                else:
                    outs.append(json.loads(lines[-1]))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        rt = H.merge(seg.view(H.histogram, H.board_header.itemsize, records))
    finally:
        del hdr
        seg.close()
        seg.unlink()
    t_from = min((o["t_start_ns"] for o in outs if o["t_start_ns"]), default=0)
    t_to = max((o["t_end_ns"] for o in outs), default=0)
    d2f, l2c = trace_latencies(plat.pm, t_from, t_to)
    d2f, l2c = H.merge(d2f), H.merge(l2c)
    wall = max((o["wall_s"] for o in outs), default=0.0) or float("nan")
    roles = pt["agents"] + pt["clients"]
    row = {k: pt[k] for k in ("sweep", "value", "agents", "engines", "clients", "threads", "queues")}
    row.update({"roles": roles, "roles_per_core": roles / (os.cpu_count() or 1),
                "launches_requested": pt["clients"] * pt["threads"] * pt["queues"] * launches,
                "launches_done": sum(o["launches"] for o in outs), "errors": sum(o["n_errors"] for o in outs),
                "first_error": next((e for o in outs for e in o["errors"]), ""),
                "launches_per_s": sum(o["launches"] for o in outs) / wall})
    for tag, h in (("d2f", d2f), ("l2c", l2c), ("rt", rt)):
        s = H.summary(h, 1e3)
        row.update({f"{tag}_n": s["count"], f"{tag}_p50_us": s["p50"], f"{tag}_p90_us": s["p90"],
                    f"{tag}_p99_us": s["p99"], f"{tag}_p999_us": s["p99.9"], f"{tag}_max_us": s["max"]})
    row["queue_stall_share"] = H.mean(d2f) / H.mean(l2c) if int(l2c["count"]) else float("nan")
    row["host_wait_share"] = (sum(o["sync_s"] for o in outs)
                              / max(1e-9, sum(o["wall_s"] for o in outs) * pt["threads"]))
    return row, {"d2f": d2f, "l2c": l2c, "rt": rt}


def run(st: Study) -> dict:
    pts = _points(st.small)
    launches = 100 if st.small else 2000
    prog = Progress("dispatch", len(pts))
    rows, hists = [], {}
    plat, key = None, None
    try:
        for pt in pts:
            k = (pt["agents"], pt["engines"])
            if k != key:
                if plat is not None:
                    plat.stop()
                plat, key = None, k
                plat = Platform({"agents": k[0], "engines": k[1], "memory_mib": 8, "host_pool_mib": 8,
                                 "trace_rings": 24, "trace_events": 1 << 16},
                                embedded=False, quiet_roles=True).start()
            row, h = _run_point(plat, pt, launches)
            rows.append(row)
            hists[(pt["sweep"], pt["value"])] = h
            prog.step(f"{pt['sweep']}={pt['value']}: d2f p50 {row['d2f_p50_us']:.1f} us, l2c p99 "
                      f"{row['l2c_p99_us']:.1f} us, {row['errors']} errors")
        write_trace(plat.pm, st.path("trace.json"))
    finally:
        if plat is not None:
            plat.stop()
        prog.close()
    st.write_csv("dispatch.csv", rows)
    st.write_csv("dispatch_histograms.csv", [
        {"sweep": sw, "value": v, "latency": tag, "bucket_low_ns": int(H.bucket_low(i)),
         "bucket_high_ns": int(H.bucket_high(i)), "count": int(h["buckets"][i])}
        for (sw, v), hs in hists.items() for tag, h in hs.items() for i in np.nonzero(h["buckets"])[0]])
    _plot(st, rows, hists)
    rpc = [r for r in rows if r["sweep"] in ("roles_per_core",)]
    ok = all(r["errors"] == 0 and r["launches_done"] == r["launches_requested"] for r in rows)
    base = rows[0]
    figures = {"base_d2f_p50_us": base["d2f_p50_us"], "base_l2c_p50_us": base["l2c_p50_us"],
               "base_l2c_p99_us": base["l2c_p99_us"], "base_rt_p50_us": base["rt_p50_us"],
               "base_queue_stall_share": base["queue_stall_share"],
               "max_roles_per_core": max(r["roles_per_core"] for r in rpc),
               "oversubscribed_l2c_p99_us": rpc[-1]["l2c_p99_us"],
               "oversubscribed_launches_per_s": rpc[-1]["launches_per_s"],
               "errors": sum(r["errors"] for r in rows),
               "launches_done": sum(r["launches_done"] for r in rows),
               "launches_requested": sum(r["launches_requested"] for r in rows)}
    return st.finish(figures, CLAIM, ok)


def _plot(st: Study, rows: list, hists: dict) -> None:
    fig, ax = st.figure(2, 2, size=(8.4, 5.9))
    labels = [f"{r['sweep'][:5]}={r['value']}" for r in rows]
    x = np.arange(len(rows))
    for a, tag, what in ((ax[0][0], "d2f", "doorbell-to-fetch"), (ax[0][1], "l2c", "launch-to-completion")):
        for q, mk in (("p50", "o-"), ("p99", "s--"), ("p999", "^:")):
            a.semilogy(x, [max(r[f"{tag}_{q}_us"] or 0.1, 0.1) for r in rows], mk, label=q.replace("p999", "p99.9"))
        a.set_xticks(x, labels, rotation=60, fontsize=6)
        a.set_ylabel(f"{what} (us)")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    a = ax[1][0]
    top = {}
    for sw, v in hists:                     # the base and the largest point of each sweep
        top[sw] = max(top.get(sw, v), v)
    for (sw, v), h in hists.items():
        if top[sw] != v:
            continue
        b = h["l2c"]["buckets"]
        if not b.sum():
            continue
        nz = np.nonzero(b)[0]
        a.semilogx(H.bucket_high(nz) / 1e3, np.cumsum(b[nz]) / b.sum(), drawstyle="steps-post", label=f"{sw}={v}")
    a.set_xlabel("launch-to-completion (us), merged histograms")
    a.set_ylabel("CDF")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=6)
    a = ax[1][1]
    rpc = [r for r in rows if r["sweep"] in ("base", "roles_per_core")]
    rx = [r["roles_per_core"] for r in rpc]
    a.plot(rx, [r["queue_stall_share"] * 100 for r in rpc], "s--", color="C1", label="% of l2c before fetch")
    a.plot(rx, [r["host_wait_share"] * 100 for r in rpc], "^:", color="C2", label="% of host time in sync")
    a.set_ylim(0, 105)
    a.set_ylabel("% (stalled)")
    a.set_xlabel("roles per core (CPs + client processes) / cores")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=6, loc="lower left")
    t = a.twinx()
    t.plot(rx, [r["launches_per_s"] for r in rpc], "o-", color="C0", label="launches/s, all clients")
    for r in rpc:
        t.annotate(f"{r['errors']} errors", (r["roles_per_core"], r["launches_per_s"]), fontsize=6,
                   textcoords="offset points", xytext=(2, 4))
    t.set_ylim(bottom=0)
    t.set_ylabel("launches/s (o)", color="C0")
    st.save(fig, "dispatch.png", "dispatch latency against queues, engines, threads, agents, roles per core")
