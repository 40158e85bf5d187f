"""Promise checks about a workload's MIOpen calls (the ``miopen_call`` events of ``_miopen``'s workload, or
of a user's code recording them), judged against the run's history like the others of ``_promises``:

* ``miopen_error``: the first MIOpen failure of a call that started after fault ``fault`` has ``status``
  (optional) and ``error`` in its message. A failure is a call that raised ``MiopenError``, or a binary
  cache store that failed (hostside.miopen logs "unable to save binary" as a warning and the call goes on;
  MIOpen's ``Handle::LoadProgram`` does not catch what ``SaveBinary`` throws, so there the call raises);
* ``miopen_no_error``: no MIOpen call failed (neither raised nor failed to store);
* ``miopen_busy_waits``: while ``locked`` fault ``fault`` held the database, the workload's binary cache
  waited for it (``KernDb`` busy waits counted in calls that overlapped the lock);
* ``miopen_recovered``: after fault ``fault`` was released, a call went through the binary cache again
  (stored its program, or loaded it from the user db) and no call that started after the release failed;
* ``miopen_others_served``: the handles the fault did not hit (those whose calls never failed; with the
  builtin, the warm handle: its invoker cache answers, it never reads the db) made calls after fault
  ``fault``, every one of them succeeded, every result of the run checked against the reference, and the
  workload ran to its end.
"""
from __future__ import annotations

import re

__all__ = ["MIOPEN_CHECKS", "failure"]

_STATUS = re.compile(r"\b(miopenStatus\w+)")


def _calls(items) -> list[dict]:
    return [i for i in items if i["type"] == "workload" and i["ev"] == "miopen_call"]


def _start(c) -> float:
    return c["t_s"] - c.get("dur_s", 0.0)


def _line(rec) -> str:
    how = (rec.get("evidence") or {}).get("how", "")
    return f"fault {rec['index']} ({rec['kind']}{' ' + how if how else ''})"


def _injected(rec):
    if rec["state"] != "injected":
        return False, f"{_line(rec)} was not injected: {rec.get('reason', rec['state'])}"
    return True, ""


def failure(c) -> tuple[str, str | None, str] | None:
    """(where, status, message) of a failed call: ``raised`` (MiopenError) or ``store`` (a failed binary
    cache store the library logged); None when it did not fail."""
    if c.get("error"):
        return "raised", c["error"].get("status"), c["error"].get("message", "")
    saves = [ln["message"] for ln in c.get("log", []) if ln.get("function") == "SaveBinary"]
    if saves or (c.get("counters") or {}).get("binary_cache_errors"):
        msg = saves[0] if saves else "a binary cache store failed (its message was not logged: MIOPEN_LOG_LEVEL)"
        m = _STATUS.search(msg)
        return "store", m.group(1) if m else None, msg
    return None


def _who(c) -> str:
    return f"the {c.get('handle', '?')} handle's {c.get('api', '?')} ({c.get('config', '?')}, round {c.get('round', '?')})"


def _what(c, where, msg) -> str:
    if where == "raised":
        return f"{_who(c)} raised {msg[:200]}"
    return (f"{_who(c)} could not store its program: {msg[:200]} (hostside.miopen logged it and the call went on, "
            f"level {c.get('level')}; MIOpen's call would raise it)")


def _miopen_error(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    after = [c for c in _calls(items) if _start(c) >= rec["t_s"]]
    bad = [(c, failure(c)) for c in after if failure(c)]
    if not bad:
        return False, (f"{_line(rec)} at {rec['t_s']:.3f} s: none of the {len(after)} MIOpen calls that started after "
                       f"it failed"), {}
    c, (where, status, msg) = bad[0]
    held = p.error in msg and (p.status is None or status == p.status)
    want = f"{p.status + ' ' if p.status else ''}containing {p.error!r}"
    return held, (f"{_line(rec)} at {rec['t_s']:.3f} s; {_what(c, where, msg)} at {c['t_s']:.3f} s; {len(bad)} of the "
                  f"{len(after)} calls after it failed; expected {want}"), \
        {"call": c, "where": where, "status": status, "failed": len(bad), "after": len(after)}


def _levels(calls) -> str:
    n: dict = {}
    for c in calls:
        n[c.get("level")] = n.get(c.get("level"), 0) + 1
    return ", ".join(f"{k} {v}" for k, v in n.items() if k) or "none"


def _miopen_no_error(p, items, faults):
    calls = _calls(items)
    bad = [(c, failure(c)) for c in calls if failure(c)]
    if not calls:
        return False, "the workload made no MIOpen call", {}
    if not bad:
        return True, f"{len(calls)} MIOpen calls, none failed (levels: {_levels(calls)})", {}
    c, (where, _status, msg) = bad[0]
    return False, f"{len(bad)} of {len(calls)} MIOpen calls failed; the first, at {c['t_s']:.3f} s: {_what(c, where, msg)}", \
        {"failed": len(bad), "first": c}


def _limit(items):
    db = [i for i in items if i["type"] == "workload" and i["ev"] == "miopen_db"]
    return db[0].get("busy_limit_s") if db else None


def _miopen_busy_waits(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    end = rec.get("end_t_s", float("inf"))
    during = [c for c in _calls(items) if c["t_s"] >= rec["t_s"] and _start(c) <= end]
    waits = sum(c.get("db", {}).get("busy_waits", 0) for c in during)
    wait_s = sum(c.get("db", {}).get("busy_wait_s", 0.0) for c in during)
    timeouts = sum(c.get("db", {}).get("timeouts", 0) for c in during)
    waited = sum(1 for c in during if c.get("db", {}).get("busy_waits"))
    span = f"from {rec['t_s']:.3f} s" + (f" to {end:.3f} s" if end != float("inf") else " to the workload's end")
    return waits > 0, (f"while {_line(rec)} held the database ({span}) the workload's binary cache waited {waits} "
                       f"time(s), {wait_s:.3f} s in all, in {waited} of {len(during)} call(s); {timeouts} timeout(s) "
                       f"(busy limit {_limit(items)} s)"), \
        {"busy_waits": waits, "busy_wait_s": round(wait_s, 6), "timeouts": timeouts, "calls": len(during)}


def _miopen_recovered(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    end = rec.get("end_t_s")
    if end is None:
        return False, f"{_line(rec)} was never released", {}
    after = [c for c in _calls(items) if c["t_s"] > end]
    through = [c for c in after if c["ok"] and not failure(c)
               and (c.get("db", {}).get("stores") or c.get("level") == "binary_cache_user")]
    bad = [c for c in after if _start(c) > end and failure(c)]
    if not through:
        return False, f"after the release of {_line(rec)} at {end:.3f} s no call went through the binary cache " \
                      f"({len(after)} calls ended after it)", {}
    c = through[0]
    how = (f"stored its program after {c['db'].get('busy_waits', 0)} busy wait(s)" if c.get("db", {}).get("stores")
           else "loaded its program from the user db")
    desc = (f"after the release of {_line(rec)} at {end:.3f} s, {_who(c)} {how} at {c['t_s']:.3f} s (it started at "
            f"{_start(c):.3f} s); {len(after)} calls ended after the release, " +
            (f"{len(bad)} of those started after it failed: {_what(bad[0], *failure(bad[0])[::2])}" if bad
             else "none of those started after it failed"))
    return not bad, desc, {"call": c, "failed_after": len(bad)}


def _miopen_others_served(p, items, faults):
    rec = faults[p.fault]
    ok, why = _injected(rec)
    if not ok:
        return False, why, {}
    calls = _calls(items)
    hit = {c.get("handle") for c in calls if failure(c)}
    others = sorted({c.get("handle") for c in calls} - hit, key=str)
    after = {h: [c for c in calls if c.get("handle") == h and _start(c) >= rec["t_s"]] for h in others}
    wrong = [c for c in calls if c.get("verified") is False]
    done = [i for i in items if i["type"] == "workload" and i["ev"] == "done"]
    parts = [f"the {h} handle: {len(v)} calls after {_line(rec)} (levels: {_levels(v)}), all succeeded"
             for h, v in after.items()] or ["every handle had a call fail"]
    if hit:
        n = sum(1 for c in calls if c.get("handle") in hit and _start(c) >= rec["t_s"] and failure(c))
        parts.append(f"hit: the {', '.join(sorted(map(str, hit)))} handle(s), {n} failed call(s)")
    parts.append(f"{len(wrong)} wrong result(s) in {sum(1 for c in calls if c.get('ok'))} returned calls" if wrong
                 else f"every one of the {sum(1 for c in calls if c.get('ok'))} returned calls checked")
    if not done:
        parts.append("the workload did not run to its end")
    held = bool(after) and all(after.values()) and not wrong and bool(done)
    return held, "; ".join(parts), {"others": {h: len(v) for h, v in after.items()}, "wrong": len(wrong)}


MIOPEN_CHECKS = {"miopen_error": _miopen_error, "miopen_no_error": _miopen_no_error,
                 "miopen_busy_waits": _miopen_busy_waits, "miopen_recovered": _miopen_recovered,
                 "miopen_others_served": _miopen_others_served}
