"""``hdemu status``: roles, pids, queues and statistics of a running platform, read from its segments."""
from __future__ import annotations

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.sync import pid_alive
from shm_layout.topology import PlatformMap

from ..dfx import lane_statistics

__all__ = ["status", "format_status"]

U64_MAX = (1 << 64) - 1


def status(boot_name: str) -> dict:
    pm = PlatformMap.attach(boot_name)
    try:
        h = pm.boot_hdr[0]
        topo = pm.topo
        out = {"name": boot_name, "state": L.BOOT_STATE_NAMES.get(int(h["state"]), "?"),
               "supervisor_pid": int(h["supervisor_pid"]), "embedded": bool(h["embedded"]),
               "config": topo.cfg, "roles": [], "agents": []}
        for i in range(L.BOOT_MAX_ROLES):
            r = pm.roles[i]
            if not int(r["kind"]):
                continue
            out["roles"].append({"index": i, "kind": L.ROLE_KIND_NAMES.get(int(r["kind"]), "?"),
                                 "agent": int(r["agent"]), "pid": int(r["pid"]),
                                 "state": L.ROLE_STATE_NAMES.get(int(r["state"]), "?"),
                                 "alive": pid_alive(int(r["pid"]))})
        for a, am in enumerate(pm.agents):
            ah = am.hdr[0]
            queues = []
            for q in range(topo.max_queues):
                d = am.qdesc[q]
                own = int(d["owner"])
                if not own:
                    continue
                db = int(d["doorbell"])
                queues.append({"slot": q, "owner_pid": L.owner_pid(own),
                               "kind": "sdma" if int(d["kind"]) == L.QKIND_SDMA else "aql",
                               "size": int(d["size"]), "engine": int(d["engine"]),
                               "write_index": int(d["write_dispatch_id"]), "read_index": int(d["read_dispatch_id"]),
                               "doorbell": None if db == U64_MAX else db,
                               "packets_done": int(d["packets_done"]), "active": bool(d["active"]),
                               "status": L.STATUS_NAMES.get(int(d["status"]), int(d["status"]))})
            engines = []
            for e in range(topo.n_engines + 1):
                s = am.engine_stats[e]
                engines.append({"engine": e, "kind": "sdma" if e == topo.n_engines else "aql",
                                "state": L.ENGINE_STATE_NAMES.get(int(s["state"]), int(s["state"])),
                                "packets": int(s["packets"]), "busy_ms": int(s["busy_ns"]) / 1e6,
                                "sleeps": int(s["sleeps"])})
            mem = pm.alloc_hdrs[1 + a][0]
            # multi-writer totals are sums of single-writer counters (per engine, per queue)
            packets = sum(e["packets"] for e in engines)
            errors = sum(1 for q in queues if q["status"] != "HSA_STATUS_SUCCESS")
            out["agents"].append({"agent": a, "cp_pid": int(ah["cp_pid"]), "packets": packets,
                                  "dead_engines": L.dead_engines(am.engine_stats, topo.n_engines),
                                  "errors": errors, "copies": int(ah["copies"]),
                                  "reclaimed_queues": int(ah["reclaimed_queues"]),
                                  "reclaimed_allocs": int(ah["reclaimed_allocs"]),
                                  "memory_used": int(mem["used_bytes"]), "memory_total": topo.memory_bytes,
                                  "queues": queues, "engines": engines})
        hp = pm.alloc_hdrs[0][0]
        out["host_pool"] = {"used": int(hp["used_bytes"]), "total": topo.host_pool_bytes}
        owners = pm.signals["owner"]
        out["signals"] = {"in_use": int((owners != 0).sum()), "total": topo.n_signals}
        if topo.dfx is not None:
            ctl = pm.segs["dfxctl"].view(D.ctl_header, 0, 1)[0]
            col_pid = int(ctl["collector_pid"])
            col_state = ["starting", "running", "draining", "done"][int(ctl["collector_state"]) & 3]
            if col_state != "done" and col_pid and not pid_alive(col_pid):
                col_state = "dead"          # killed or crashed: its state word stays where it was
            out["profiling"] = {"arch": topo.dfx.arch, "svm": topo.dfx.svm, "mode": topo.dfx.prof["mode"],
                                "collector_pid": col_pid, "collector_state": col_state,
                                "lanes": lane_statistics(pm)}
        return out
    finally:
        pm.close()


def format_status(st: dict) -> str:
    lines = [f"platform {st['name']}: {st['state']} (supervisor pid {st['supervisor_pid']}"
             f"{', embedded' if st['embedded'] else ''})"]
    for r in st["roles"]:
        lines.append(f"  role {r['index']}: {r['kind']} agent {r['agent']} pid {r['pid']} "
                     f"{r['state']}{'' if r['alive'] else ' (not running)'}")
    for a in st["agents"]:
        dead = a.get("dead_engines")
        lines.append(f"  agent {a['agent']}: cp pid {a['cp_pid']}, {a['packets']} packets, {a['copies']} copies, "
                     f"{a['errors']} errors, memory {a['memory_used']}/{a['memory_total']} B, "
                     f"reclaimed {a['reclaimed_queues']} queues / {a['reclaimed_allocs']} allocations"
                     + (f", DEAD ENGINES {dead}" if dead else ""))
        for e in a["engines"]:
            lines.append(f"    engine {e['engine']} ({e['kind']}, {e.get('state', '?')}): {e['packets']} packets, "
                         f"busy {e['busy_ms']:.1f} ms")
        for q in a["queues"]:
            lines.append(f"    queue {q['slot']} ({q['kind']}, pid {q['owner_pid']}, size {q['size']}, engine "
                         f"{q['engine']}): write {q['write_index']} read {q['read_index']} doorbell {q['doorbell']} "
                         f"done {q['packets_done']} {'active' if q['active'] else 'inactive'} {q['status']}")
    lines.append(f"  host pool {st['host_pool']['used']}/{st['host_pool']['total']} B, "
                 f"signals {st['signals']['in_use']}/{st['signals']['total']}")
    pr = st.get("profiling")
    if pr:
        lines.append(f"  profiling ({pr['mode']}, {pr['arch']}, {'SVM' if pr['svm'] else 'non-SVM'}): collector pid "
                     f"{pr['collector_pid']} {pr['collector_state']}")
        for ln in pr["lanes"]:
            lines.append(f"    lane {ln['lane']} pid {ln['pid']} {ln['state']}: {ln['records']} records, "
                         f"{ln['drops']} drops, {ln['stalls']} stalls ({ln['stall_ms']:.1f} ms), "
                         f"{ln['backstops']} backstops, {ln['tasks']} tasks, {ln['task_events_dropped']} task events dropped")
    return "\n".join(lines)
