"""Promise checks: each ``[[promise]]`` of a scenario judged against the run's history, HELD or
FAILED, with the evidence in one sentence (and the raw items it rests on in ``details``).

The kinds and what they read (docs/FAULTS.md says which fault each belongs to):

* ``host_error``: after fault ``fault``, the workload's first HipError is ``error``, raised within
  ``within_s`` of the injection;
* ``no_host_error``: the workload raised no HipError at all;
* ``workload_completes``: the workload exited 0 and every stream that ran to the end verified its results;
* ``role_dead``: ``role`` died and the supervisor marked it dead;
* ``roles_alive``: ``roles`` (default: every role) are alive at the end and none died;
* ``others_served``: after fault ``fault`` (its end, for a stop), every workload stream that never
  failed completed work;
* ``probe_served``: a new client, started after the workload ended, got a launch served;
* ``reclaimed``: the CPs freed every queue, allocation and signal of the killed workload (within ``within_s``);
* ``queue_error``: after fault ``fault``, a workload queue entered error with HSA status ``status``;
* ``dfx_balanced``: collected + dropped == total for every DFX pool;
* ``dfx_no_loss``: no DFX record was dropped;
* ``engine_stalled``: during stall_engine fault ``fault`` the stalled engine ran at most the turn it
  was in (``TURN_PACKETS`` per stream) while another engine of the CP ran packets, and the stall ran
  to its deadline;
* ``roles_exit``: after fault ``fault`` (the supervisor killed) every role (or ``roles``) exited on
  its own within ``within_s``;
* ``segments_removed``: after the run's cleanup no segment of the platform is left in /dev/shm;
* ``dfx_lanes_stalled``: some DFX lane's writer waited at its gate (policy block under a slow collector);
* ``dfx_drops_counted``: records were dropped and every pool balanced (policy drop);
* ``shard_stalled``: during stall_shard fault ``fault`` the stalled shard took at most the sweep it was
  in, the other shards drained, and it took buffers again after the stall;
* ``latency_rose``: the workload's median sync latency during fault ``fault`` was above the median
  before it (the evidence gives both, the delay and the median after);
* ``dfx_loss_reported``: after corrupt_ready_entry fault ``fault`` the corrupted entry's pool names a
  rejected entry among its causes and its thread was drained on; every other thread's pools balance
  and no pool misses records without a cause;
* ``miopen_error``, ``miopen_no_error``, ``miopen_busy_waits``, ``miopen_recovered``,
  ``miopen_others_served``: a workload's MIOpen calls (``_promises_miopen``).
"""
from __future__ import annotations

from ._promises_miopen import MIOPEN_CHECKS

__all__ = ["check_all", "check", "TURN_PACKETS"]


def _of(items, type_):
    return [i for i in items if i["type"] == type_]


def _wl(items, ev):
    return [i for i in items if i["type"] == "workload" and i["ev"] == ev]


def _fault_line(rec) -> str:
    return f"fault {rec['index']} ({rec['kind']} {rec.get('target') or 'workload'})"


def _injected(rec):
    if rec["state"] != "injected":
        return False, f"{_fault_line(rec)} was not injected: {rec.get('reason', rec['state'])}"
    return True, ""


def _host_error(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    after = [e for e in _wl(items, "error") if e["t_s"] >= rec["t_s"]]
    if not after:
        return False, f"{_fault_line(rec)} at {rec['t_s']:.3f} s: the workload raised no HipError after it", {}
    e = after[0]
    dt = e["t_s"] - rec["t_s"]
    held = e["name"] == p.error and dt <= p.within_s
    return held, (f"{_fault_line(rec)} at {rec['t_s']:.3f} s; the workload raised {e['name']} at {e['t_s']:.3f} s "
                  f"({dt * 1e3:.0f} ms later; expected {p.error} within {p.within_s} s): {e['message'][:160]}"), \
        {"error": e, "latency_s": round(dt, 6)}


def _no_host_error(p, items, faults):
    errs = _wl(items, "error")
    syncs = len(_wl(items, "sync"))
    if not errs:
        return True, f"no HipError raised; {syncs} stream synchronisations completed", {}
    e = errs[0]
    return False, f"{len(errs)} error(s); the first, {e['name']} at {e['t_s']:.3f} s: {e['message'][:160]}", \
        {"errors": errs}


def _workload_completes(p, items, faults):
    ex = _of(items, "workload_exit")
    code = ex[-1]["exit_code"] if ex else None
    done = _wl(items, "done")
    timeout = _of(items, "workload_timeout")
    if timeout:
        return False, f"the workload did not end within its {timeout[0]['after_s']} s bound (killed)", {}
    if code != 0 or not done:
        errs = _wl(items, "error")
        first = f"; first error {errs[0]['name']}: {errs[0]['message'][:120]}" if errs else ""
        return False, f"the workload exited with code {code}{' without finishing' if not done else ''}{first}", {}
    d = done[-1]
    verified = d.get("verified", [])
    launched = d.get("launched")
    if any(v is False for v in verified):
        return False, f"the workload exited 0 but results were wrong: verified {verified}, launched {launched}", \
            {"done": d}
    return True, (f"the workload exited 0; launched {launched}, every healthy stream verified"
                  if launched is not None else "the workload exited 0"), {"done": d}


def _role_dead(p, items, faults):
    died = [i for i in _of(items, "role_died") if i["role"] == p.role]
    end = _of(items, "roles_at_end")
    state = end[-1]["states"].get(p.role) if end else None
    if died and state == "dead":
        return True, (f"{p.role} (pid {died[0]['pid']}) died at {died[0]['t_s']:.3f} s with exit code "
                      f"{died[0]['exit_code']}; the supervisor marked it dead"), {"died": died[0]}
    return False, f"{p.role}: {'died' if died else 'did not die'}, supervisor state {state!r}", {}


def _roles_alive(p, items, faults):
    end = _of(items, "roles_at_end")[-1]
    roles = p.roles or sorted(end["alive"])
    died = {i["role"]: i for i in _of(items, "role_died")}
    bad = [r for r in roles if not end["alive"].get(r) or r in died]
    if not bad:
        return True, f"{', '.join(roles)} alive at the end, none died", {}
    return False, "; ".join(f"{r} died at {died[r]['t_s']:.3f} s (exit code {died[r]['exit_code']})" if r in died
                            else f"{r} not running at the end" for r in bad), {}


def _others_served(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    t = rec.get("end_t_s", rec["t_s"])
    failed = {e["stream"] for e in _wl(items, "error")}
    streams = {e["stream"] for e in _wl(items, "sync")} | failed
    others = sorted(s for s in streams if s not in failed and s is not None)
    served = {s: sum(1 for e in _wl(items, "sync") if e["stream"] == s and e["t_s"] > t) for s in others}
    desc = ", ".join(f"stream {s}: {n} syncs" for s, n in served.items()) or "no other stream"
    fails = f"; failed: stream(s) {sorted(x for x in failed if x is not None)}" if failed else ""
    held = bool(served) and all(served.values())
    return held, f"after {_fault_line(rec)} (ended {t:.3f} s): {desc}{fails}", {"served": served}


def _probe_served(p, items, faults):
    pr = _of(items, "probe")
    if not pr:
        return False, "no probe client ran", {}
    pr = pr[-1]
    if pr["ok"]:
        return True, f"a new client (pid {pr['pid']}) launched, synchronised and verified at {pr['t_s']:.3f} s", {}
    errs = pr["errors"]
    return False, (f"the probe client (pid {pr['pid']}) exited {pr['exit_code']}"
                   + (f": {errs[0]['name']}: {errs[0]['message'][:120]}" if errs else "")), {}


def _reclaimed(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    rc = _of(items, "reclaimed")
    if not rc:
        return False, "the run did not wait for reclaim (the workload was not killed)", {}
    rc = rc[-1]
    bound = p.within_s if p.within_s is not None else rc["bound_s"]
    held = rc["complete"] and rc["after_s"] <= bound
    if rc["complete"]:
        return held, (f"everything pid {rc['pid']} owned was freed {rc['after_s']:.2f} s after the workload ended "
                      f"(bound {bound} s)"), {}
    return False, f"after {rc['after_s']:.1f} s pid {rc['pid']} still owned {rc['left']}", {}


def _queue_error(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    pid = next(i["pid"] for i in items if i["type"] == "workload_start")
    errs = [q for q in _of(items, "queue_error") if q["owner_pid"] == pid and q["t_s"] >= rec["t_s"]]
    want = rec.get("evidence", {}).get("queue")
    if want is not None:
        errs = [q for q in errs if q["queue"] == want] or errs
    if not errs:
        return False, f"no queue of the workload entered error after {_fault_line(rec)}", {}
    q = errs[0]
    held = q["status"] == p.status and (want is None or q["queue"] == want)
    return held, (f"queue {q['queue']} of agent {q['agent']} entered {q['status']} at {q['t_s']:.3f} s, packet "
                  f"{q['error_packet_id']}: {q['message'][:120]}"), {"queue_error": q}


def _pools(items):
    return _of(items, "dfx_pool")


def _dfx_balanced(p, items, faults):
    pools = _pools(items)
    if not pools:
        return False, "no DFX accounting was read (profiling off, or the platform did not stop)", {}
    bad = [x for x in pools if x["collected"] + x["dropped"] != x["total"]]
    tot = {k: sum(x[k] for x in pools) for k in ("total", "collected", "dropped")}
    if not bad:
        return True, (f"every one of {len(pools)} pools balanced; in all {tot['collected']} collected + "
                      f"{tot['dropped']} dropped == {tot['total']} records"), tot
    return False, "; ".join(f"thread {x['thread']} {x['kind']}: {x['collected']} + {x['dropped']} != {x['total']}"
                            for x in bad[:4]), {"imbalanced": bad}


def _dfx_no_loss(p, items, faults):
    pools = _pools(items)
    if not pools:
        return False, "no DFX accounting was read (profiling off, or the platform did not stop)", {}
    lossy = sorted((x for x in pools if x["dropped"]), key=lambda x: -x["dropped"])
    total = sum(x["total"] for x in pools)
    if not lossy:
        return True, f"0 of {total} records dropped", {}
    dropped = sum(x["dropped"] for x in lossy)
    return False, (f"{dropped} of {total} records dropped, in {len(lossy)} pool(s): "
                   + ", ".join(f"thread {x['thread']} {x['kind']} {x['dropped']} of {x['total']}"
                               for x in lossy[:4])), \
        {"dropped": dropped, "total": total, "pools": lossy}


#: Packets an engine may still run after its stall word was set: the turn it was in (64 per queue).
TURN_PACKETS = 64


def _engine_stalled(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    if rec["kind"] != "stall_engine":
        return False, f"{_fault_line(rec)} is not a stall_engine fault", {}
    end = [i for i in _of(items, "fault_end") if i["index"] == rec["index"]]
    if not end:
        return False, f"{_fault_line(rec)} never ended", {}
    end = end[0]
    e, during = end["engine"], end["packets_during"]
    streams = len({x["stream"] for x in _wl(items, "sync")} | {x["stream"] for x in _wl(items, "error")}) or 1
    limit = TURN_PACKETS * streams
    others = {i: n for i, n in enumerate(during) if i != e}
    held = during[e] <= limit and any(others.values()) and not end.get("early")
    span = end["t_s"] - rec["t_s"]
    return held, (f"engine {e} of {rec['target']} ran {during[e]} packet(s) during its {span:.3f} s stall (at most "
                  f"{limit}: the turn it was in); the other engines ran "
                  + ", ".join(f"engine {i}: {n}" for i, n in others.items())
                  + (f"; ended early: {end['early']}" if end.get("early") else "")), \
        {"packets_during": during, "engine": e, "limit": limit}


def _roles_exit(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    run = _of(items, "run")[0]
    roles = p.roles or sorted(run["roles"])
    died = {i["role"]: i for i in _of(items, "role_died")}
    after = {r: round(died[r]["t_s"] - rec["t_s"], 6) for r in roles if r in died}
    late = {r: s for r, s in after.items() if s > p.within_s}
    left = [r for r in roles if r not in died]
    if not after and not left:
        return False, "no role to watch", {}
    slow = max(after, key=after.get) if after else None
    desc = (f"after {_fault_line(rec)} at {rec['t_s']:.3f} s: {len(after)} of {len(roles)} roles exited"
            + (f", the last {slow} {after[slow]:.3f} s later" if slow else "") + f" (bound {p.within_s} s)")
    if left:
        desc += f"; still running: {', '.join(left)}"
    if late:
        desc += "; late: " + ", ".join(f"{r} {s:.3f} s" for r, s in late.items())
    return not left and not late, desc, {"exit_after_s": after, "left": left}


def _segments_removed(p, items, faults):
    end = _of(items, "platform_end")
    if not end:
        return False, "the platform's end was not recorded", {}
    end = end[-1]
    left, swept = end["segments_left"], end.get("swept", [])
    how = (f"{len(swept)} of them left by the dead supervisor and removed by the run's sweep (hdemu clean)"
           if swept else "removed by the supervisor")
    if left:
        return False, f"{len(left)} of the platform's {end['segments']} segments left in /dev/shm: " + \
            ", ".join(left[:4]), {"left": left}
    return True, f"none of the platform's {end['segments']} segments left in /dev/shm; {how}", {"swept": swept}


def _dfx_lanes_stalled(p, items, faults):
    lanes = _of(items, "dfx_lanes")
    if not lanes:
        return False, "no DFX lane statistics were read (profiling off, or the platform did not stop)", {}
    lanes = lanes[-1]["lanes"]
    stalled = {x["lane"]: x["stalls"] for x in lanes if x["stalls"]}
    desc = ", ".join(f"lane {x['lane']}: {x['stalls']} stall(s), {x['stall_ms']:.0f} ms" for x in lanes)
    return bool(stalled), (f"writers waited at their gates: {desc}" if stalled else
                           f"no lane stalled at a gate: {desc}"), {"stalls": stalled}


def _dfx_drops_counted(p, items, faults):
    pools = _pools(items)
    if not pools:
        return False, "no DFX accounting was read (profiling off, or the platform did not stop)", {}
    dropped = sum(x["dropped"] for x in pools)
    bad = [x for x in pools if x["collected"] + x["dropped"] != x["total"]]
    total = sum(x["total"] for x in pools)
    if bad:
        return False, f"{len(bad)} pool(s) do not balance: " + "; ".join(
            f"thread {x['thread']} {x['kind']}: {x['collected']} + {x['dropped']} != {x['total']}" for x in bad[:4]), \
            {"imbalanced": bad}
    if not dropped:
        return False, f"no record was dropped (of {total}): the fault did not make the writers drop", {}
    return True, f"{dropped} of {total} records dropped and counted; every pool balanced", {"dropped": dropped}


def _shard_stalled(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    end = [i for i in _of(items, "fault_end") if i["index"] == rec["index"]]
    if not end:
        return False, f"{_fault_line(rec)} never ended", {}
    end = end[0]
    s, during, limit = end["shard"], end["buffers_during"], rec["evidence"]["sweep_limit"]
    final = _of(items, "dfx_shards")
    after = final[-1]["shards"][s]["buffers"] - end["shards"][s]["buffers"] if final else 0
    others = {i: n for i, n in enumerate(during) if i != s}
    held = during[s] <= limit and (not others or any(others.values())) and after > 0 and not end.get("early")
    span = end["t_s"] - rec["t_s"]
    return held, (f"drain shard {s} took {during[s]} buffer(s) during its {span:.3f} s stall (at most {limit}: the "
                  f"sweep it was in); " + (", ".join(f"shard {i}: {n}" for i, n in others.items()) or "no other shard")
                  + f" meanwhile; after it, shard {s} caught up with {after} buffer(s)"
                  + (f"; ended early: {end['early']}" if end.get("early") else "")), \
        {"buffers_during": during, "shard": s, "limit": limit, "after": after}


def _median(v):
    v = sorted(v)
    n = len(v)
    return None if not n else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _latency_rose(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    t0, t1 = rec["t_s"], rec.get("end_t_s")
    if t1 is None:
        return False, f"{_fault_line(rec)} never ended", {}
    syncs = [e for e in _wl(items, "sync") if "lat_s" in e]
    before = [e["lat_s"] for e in syncs if e["t_s"] <= t0]
    during = [e["lat_s"] for e in syncs if t0 < e["t_s"] <= t1]
    after = [e["lat_s"] for e in syncs if e["t_s"] > t1]
    m = {k: _median(v) for k, v in (("before", before), ("during", during), ("after", after))}
    n = {k: len(v) for k, v in (("before", before), ("during", during), ("after", after))}
    if not before or not during:
        return False, (f"not enough syncs to compare: {n['before']} before {_fault_line(rec)}, {n['during']} during "
                       f"it"), {"medians_s": m, "syncs": n}
    delay = rec.get("evidence", {}).get("delay_ns")
    rose = m["during"] - m["before"]
    return rose > 0, (f"median sync latency {m['before'] * 1e3:.2f} ms before {_fault_line(rec)}, "
                      f"{m['during'] * 1e3:.2f} ms during it ({rose * 1e3:+.2f} ms"
                      + (f"; the delay is {delay / 1e6:g} ms a wake-up" if delay else "") + ")"
                      + (f", {m['after'] * 1e3:.2f} ms after it" if after else "")
                      + f"; {n['before']}, {n['during']}, {n['after']} syncs"), \
        {"medians_s": m, "syncs": n, "rose_s": round(rose, 6)}


def _dfx_loss_reported(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    pools = _pools(items)
    if not pools:
        return False, "no DFX accounting was read (profiling off, or the platform did not stop)", {}
    ev = rec["evidence"]
    t, kind = ev["thread"], ev["record_kind"]
    hit = [x for x in pools if x["thread"] == t and x["kind"] == kind]
    named = hit and any("rejected" in c for c in hit[0]["causes"])
    unexplained = [x for x in pools if x["missing"] and not x["causes"]]
    others = [x for x in pools if x["thread"] != t and x["collected"] + x["dropped"] != x["total"]]
    before = ev.get("collected", {}).get(kind)
    drained = hit and before is not None and hit[0]["collected"] > before
    lines = []
    if hit:
        h = hit[0]
        lines.append(f"pool (thread {t}, {kind}): {h['collected']} collected + {h['dropped']} dropped of {h['total']}, "
                     f"{h['missing']} missing: " + ("; ".join(h["causes"]) or "no cause given"))
        lines.append(f"the thread was drained on after it: {before} -> {h['collected']} collected")
    if others:
        lines.append("other threads' pools out of balance: " + ", ".join(f"thread {x['thread']} {x['kind']}"
                                                                         for x in others[:4]))
    else:
        lines.append(f"every other thread's pools balanced ({sum(1 for x in pools if x['thread'] != t)})")
    if unexplained:
        lines.append(f"{len(unexplained)} pool(s) with records missing and no cause")
    held = bool(named) and bool(drained) and not others and not unexplained
    return held, "; ".join(lines), {"pool": hit[0] if hit else None, "others_imbalanced": others}


_CHECKS = {"host_error": _host_error, "no_host_error": _no_host_error, "workload_completes": _workload_completes,
           "role_dead": _role_dead, "roles_alive": _roles_alive, "others_served": _others_served,
           "probe_served": _probe_served, "reclaimed": _reclaimed, "queue_error": _queue_error,
           "dfx_balanced": _dfx_balanced, "dfx_no_loss": _dfx_no_loss, "engine_stalled": _engine_stalled,
           "roles_exit": _roles_exit, "segments_removed": _segments_removed, "dfx_lanes_stalled": _dfx_lanes_stalled,
           "dfx_drops_counted": _dfx_drops_counted, "shard_stalled": _shard_stalled, "latency_rose": _latency_rose,
           "dfx_loss_reported": _dfx_loss_reported, **MIOPEN_CHECKS}


def check(index: int, p, items: list[dict], faults: list[dict]) -> dict:
    held, evidence, details = _CHECKS[p.kind](p, items, faults)
    return {"index": index, "kind": p.kind, "description": p.description, "verdict": "HELD" if held else "FAILED",
            "evidence": evidence, "details": details}


def check_all(sc, items: list[dict], faults: list[dict]) -> list[dict]:
    return [check(i, p, items, faults) for i, p in enumerate(sc.promise)]
