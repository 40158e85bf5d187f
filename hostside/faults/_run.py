"""``hdemu run``: start the scenario's platform (this process is its supervisor), run the workload in
its own process, inject the faults on schedule, record the history, check the promises.

One directory per run: ``history.jsonl`` (every injected fault, every observed outcome, in time
order, ``t_s`` from the workload's start on CLOCK_MONOTONIC), ``report.json``, ``workload.log`` and
``roles.log`` (what the workload and the platform's roles wrote on stderr), ``dfx/`` (the collector's
outputs, with profiling on). Every process started is reaped and every segment removed, also on
Ctrl-C or SIGTERM (both interrupt the run; cleanup then ignores them).
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hostside.platform import Platform
from shm_layout import layouts as L
from shm_layout.segments import list_segments

from ._inject import InjectError, Injector, dispatches, engine_packets, lane_stalls, owned_by, records, shard_counters
from ._outputs import add_dfx_rows, write_outputs
from ._promises import check_all
from ._remote import ROLES_EXIT_BOUND_S, RemotePlatform
from ._schema import COLLECTOR_KINDS, DURATION_KINDS, RELEASED_KINDS

__all__ = ["run_scenario", "POLL_S", "RECLAIM_BOUND_S", "PROBE_TIMEOUT_S", "STALL_CLEAR_BOUND_S"]

#: Period of the run loop (triggers, role deaths, queue errors, the workload's events).
POLL_S = 0.005
#: After the workload was SIGKILLed: how long the run waits for the CP to reclaim what it owned.
RECLAIM_BOUND_S = 10.0
#: How long the end of a stall waits for the engine to clear its stall word itself (it wakes at the deadline).
STALL_CLEAR_BOUND_S = 1.0
#: Bound of the probe client (one launch and sync) that checks the platform still serves.
PROBE_TIMEOUT_S = 30.0


class History:
    """The run's history, kept in memory and appended to ``history.jsonl`` as it happens."""

    def __init__(self, path: Path):
        self.f = open(path, "w", buffering=1)
        self.items: list[dict] = []
        self.t0_ns = time.monotonic_ns()

    def add(self, type_: str, t_ns: int | None = None, **data) -> dict:
        t_ns = time.monotonic_ns() if t_ns is None else t_ns
        item = {"t_s": round((t_ns - self.t0_ns) / 1e9, 6), "type": type_, **data}
        self.items.append(item)
        self.f.write(json.dumps(item) + "\n")
        return item

    def close(self) -> None:
        self.f.close()


class _EventTail:
    """Reads the workload's events file as it grows (whole lines only)."""

    def __init__(self, path: Path):
        path.touch()
        self.f, self.buf = open(path), ""

    def read(self) -> list[dict]:
        self.buf += self.f.read()
        *lines, self.buf = self.buf.split("\n")
        return [json.loads(ln) for ln in lines if ln.strip()]


def _role_names(plat) -> dict[str, int]:
    names = {f"cp{a}": a for a in range(plat.topo.n_agents)}
    if plat.dfx_roles["collector"]:
        names["collector"] = plat.dfx_roles["collector"][0]
    names.update({f"lane{i}": r for i, r in enumerate(plat.dfx_roles["lanes"])})
    return names


def _start_platform(cfg: dict, log_path: Path) -> Platform:
    """The platform, its roles' stderr going to ``log_path`` (they inherit fd 2 while they start)."""
    with open(log_path, "ab") as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            return Platform(cfg, embedded=False, quiet_roles=True).start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def miopen_env(out: Path, spec: dict) -> dict:
    """A MIOpen workload's binary cache in the run directory (``miopen/``), never the user's home; no
    system db; the busy limit of ``db_busy_limit_s``; MIOPEN_DISABLE_CACHE of the caller's removed."""
    base = (out / "miopen").resolve()
    return {"MIOPEN_CUSTOM_CACHE_DIR": str(base / "cache"), "MIOPEN_USER_DB_PATH": str(base / "userdb"),
            "MIOPEN_SYSTEM_DB_PATH": str(base / "no-system-db"),
            "HDEMU_MIOPEN_DB_BUSY_LIMIT_S": repr(float(spec["db_busy_limit_s"]))}


def _spawn_workload(spec: dict, out: Path, tag: str, plat: Platform, miopen: bool = False) -> subprocess.Popen:
    spec_path, events = out / f"{tag}.spec.json", out / f"{tag}.events.jsonl"
    spec_path.write_text(json.dumps(spec))
    events.write_text("")           # a run directory used again starts a new events file
    env = dict(os.environ, HDEMU_PLATFORM=plat.name, HDEMU_WAIT_TIMEOUT_S=str(spec["wait_timeout_s"]))
    env.pop("HDEMU_CONFIG", None)
    cmd = [sys.executable, "-m", "hostside.faults", "workload", str(spec_path), str(events)]
    if miopen or spec["builtin"] == "miopen":
        env.pop("MIOPEN_DISABLE_CACHE", None)
        env.update(miopen_env(out, spec))
    if spec["builtin"] == "miopen":     # the one process (with dbfault) that imports hostside.miopen
        cmd[2] = "hostside.faults._miopen"
    with open(out / f"{tag}.log", "ab") as log:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                start_new_session=True)


def _reap(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.kill()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        pass


class _Run:
    def __init__(self, sc, cfg: dict, out: Path, progress):
        self.sc, self.cfg, self.out, self.say = sc, cfg, out, progress
        self.plat = None
        self.work = None
        self.probe = None
        self.inj = None
        self.faults = [dict(index=i, kind=f.kind, target=f.target or ("collector" if f.kind in COLLECTOR_KINDS else None),
                            trigger=None if f.trigger is None else
                            dict([f.trigger]), state="pending", **({"how": f.how} if f.how else {}))
                       for i, f in enumerate(sc.fault)]
        self.seen_queue_errors: set = set()
        self.dead_roles: set = set()
        #: per stall_engine fault (its index): the CP's engine packet counters at the last poll that
        #: saw the engine still stalled (read before the check, so the engine had not resumed yet)
        self.stalled_packets: dict = {}
        self.replay_windows = 0
        self.miopen_path = None         # the workload's .ukdb (its miopen_db event)
        self.miopen_calls = 0
        self.outputs: dict = {}
        self.plot = True
        self.supervised = any(f.target == "supervisor" for f in sc.fault)

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> None:
        out, sc = self.out, self.sc
        self.inj = Injector(None, None)
        if any(f.kind == "miopen_db" for f in sc.fault):    # it imports hostside.miopen while the platform starts
            self.inj.start_db_faults(out / "dbfault.log")
        t = time.monotonic()
        if self.supervised:         # the supervisor is a target: it runs in a process of its own
            self.plat = RemotePlatform(self.cfg, out, out / "roles.log")
            self.plat.start()
        else:
            self.plat = _start_platform(self.cfg, out / "roles.log")
        self.roles = _role_names(self.plat)
        up_s = time.monotonic() - t
        self.hist = History(out / "history.jsonl")
        sup = {"supervisor": self.plat.supervisor.pid} if self.supervised else {}
        self.hist.add("run", scenario=sc.name, platform=self.plat.name, platform_up_s=round(up_s, 3),
                      clock_origin_ns=self.hist.t0_ns, supervisor_pid=sup.get("supervisor", os.getpid()),
                      roles={n: self.plat.procs[i].pid for n, i in self.roles.items()})
        self.inj.plat = self.plat
        for f, rec in zip(sc.fault, self.faults):
            if f.kind == "shrink_pool":
                ev = {"thread": f.thread, "buffers": f.buffers, "applied": "profiling.pool_overrides at start"}
                item = self.hist.add("fault", index=rec["index"], kind=f.kind, injected=True, **ev)
                rec.update(state="injected", t_s=item["t_s"], evidence=ev)
                self.say(f"{item['t_s']:8.3f} s  fault {rec['index']}: shrink_pool thread {f.thread} to "
                         f"{f.buffers} buffer(s)")
            elif f.kind == "memory_pressure":
                t_ns = time.monotonic_ns()
                try:
                    ev = self.inj.memory_pressure(sc.workload.device, f.free_bytes)
                except InjectError as exc:
                    rec.update(state="failed", reason=str(exc))
                    self.hist.add("fault", t_ns, index=rec["index"], kind=f.kind, injected=False, reason=str(exc))
                    continue
                item = self.hist.add("fault", t_ns, index=rec["index"], kind=f.kind, injected=True, **ev)
                rec.update(state="injected", t_ns=t_ns, t_s=item["t_s"], evidence=ev)
                self.say(f"{item['t_s']:8.3f} s  fault {rec['index']}: memory_pressure: {ev['allocated']} bytes of "
                         f"agent {ev['agent']} taken, {ev['free_after']} left")
        spec = sc.workload.model_dump()
        db_faults = self.inj.db is not None
        self.work = _spawn_workload(spec, out, "workload", self.plat, miopen=db_faults)
        self.hist.add("workload_start", pid=self.work.pid)
        self.inj.workload = self.work
        tail = _EventTail(out / "workload.events.jsonl")
        deadline = time.monotonic() + sc.workload.timeout_s
        while True:
            self._events(tail)
            self._observe()
            self._faults()
            if self.work.poll() is not None and not self.inj.stopped:
                break
            if time.monotonic() > deadline:
                self.inj.resume_all()
                _reap(self.work)
                self.hist.add("workload_timeout", after_s=sc.workload.timeout_s)
                break
            time.sleep(POLL_S)
        self._events(tail)
        self.hist.add("workload_exit", pid=self.work.pid, exit_code=self.work.returncode)
        self._end_faults()
        for rec in self.faults:
            if rec["state"] == "pending":
                rec.update(state="skipped", reason="the workload ended before its trigger" if rec["kind"] != "miopen_db"
                           or self.miopen_path else "the workload reported no MIOpen binary cache (miopen_db event)")
                self.hist.add("fault", index=rec["index"], kind=rec["kind"], target=rec["target"], injected=False,
                              reason=rec["reason"])
        if any(r["kind"] == "kill" and r["target"] == "workload" and r["state"] == "injected" for r in self.faults):
            self._await_reclaim(self.work.pid)
        for r in self.faults:       # a killed role: the supervisor notices on its own period (a loaded machine)
            if r["kind"] == "kill" and r["target"] in self.roles and r["state"] == "injected":
                self._await_marked_dead(r["target"])
            if r["kind"] == "kill" and r["target"] == "supervisor" and r["state"] == "injected":
                self._await_roles_exit()
        if self.plat.topo.dfx is not None:
            self.hist.add("dfx_shards", shards=shard_counters(self.plat.pm))
        self.outputs = write_outputs(self, out, self.plot)    # the trace before a probe may reuse the workload's ring
        if any(p.kind == "probe_served" for p in sc.promise):
            self._probe()
        self._observe()
        alive = {n: self.plat.procs[i].poll() is None for n, i in self.roles.items()}
        states = {n: L.ROLE_STATE_NAMES.get(int(self.plat.pm.roles[i]["state"]), "?") for n, i in self.roles.items()}
        if self.supervised:
            alive["supervisor"] = self.plat.supervisor.poll() is None
            states["supervisor"] = "running" if alive["supervisor"] else "dead"
        self.hist.add("roles_at_end", alive=alive, states=states)

    def _events(self, tail: _EventTail) -> None:
        for ev in tail.read():
            t_ns = ev.pop("t_ns")
            self.hist.add("workload", t_ns, **ev)
            if ev["ev"] == "replay_window":
                self.replay_windows += 1
            elif ev["ev"] == "miopen_call":
                self.miopen_calls += 1
            elif ev["ev"] == "miopen_db" and self.miopen_path is None:
                self.miopen_path = ev["path"]
            if ev["ev"] == "error":
                self.say(f"{(t_ns - self.hist.t0_ns) / 1e9:8.3f} s  workload: {ev['name']} (stream {ev['stream']})")

    def _observe(self) -> None:
        for n, i in self.roles.items():
            p = self.plat.procs[i]
            if n not in self.dead_roles and p.poll() is not None:
                self.dead_roles.add(n)
                self.hist.add("role_died", role=n, pid=p.pid, exit_code=p.returncode)
        if self.supervised and "supervisor" not in self.dead_roles and self.plat.supervisor.poll() is not None:
            self.dead_roles.add("supervisor")
            self.hist.add("role_died", role="supervisor", pid=self.plat.supervisor.pid,
                          exit_code=self.plat.supervisor.returncode)
        for a, am in enumerate(self.plat.pm.agents):
            for q in range(self.plat.pm.topo.max_queues):
                d = am.qdesc[q]
                st, own = int(d["status"]), int(d["owner"])
                if st and own and (a, q, own) not in self.seen_queue_errors:
                    self.seen_queue_errors.add((a, q, own))
                    self.hist.add("queue_error", agent=a, queue=q, owner_pid=L.owner_pid(own),
                                  status=L.STATUS_NAMES.get(st, st), error_packet_id=int(d["error_packet_id"]),
                                  message=bytes(d["error_msg"]).split(b"\0")[0].decode(errors="replace"))

    def _due(self, f, rec) -> bool:
        kind, v = f.trigger
        if f.kind == "miopen_db" and (self.miopen_path is None or not self.inj.db.is_ready()):
            return False            # the workload has not said where its binary cache is, or dbfault is not up
        if kind == "after_calls":
            return self.miopen_calls >= v
        if kind == "at_s":
            return time.monotonic_ns() - self.hist.t0_ns >= v * 1e9
        if kind == "after_dispatches":
            return dispatches(self.plat.pm) >= v
        if kind == "on_lane_stall":
            return lane_stalls(self.plat.pm, v) >= 1
        if kind == "on_replay_window":
            return self.replay_windows >= v
        return records(self.plat.pm) >= v

    def _faults(self) -> None:
        for f, rec in zip(self.sc.fault, self.faults):
            lasts = f.kind in DURATION_KINDS or (f.kind in RELEASED_KINDS and f.duration_s is not None)
            if rec["state"] == "injected" and lasts and "end_t_s" not in rec:
                if f.kind == "stall_engine":
                    pk = engine_packets(self.plat.pm, int(f.target[2:]))
                    if self.inj.stall_pending(f.target, f.engine):
                        self.stalled_packets[rec["index"]] = pk
                if time.monotonic_ns() - rec["t_ns"] >= f.duration_s * 1e9:
                    self._end(f, rec)
            if rec["state"] != "pending" or not self._due(f, rec):
                continue
            t_ns = time.monotonic_ns()
            try:
                if f.kind == "kill":
                    ev = self.inj.kill(f.target)
                elif f.kind == "stop":
                    ev = self.inj.stop(f.target)
                elif f.kind == "stall_engine":
                    ev = self.inj.stall_engine(f.target, f.engine, f.duration_s)
                elif f.kind == "slow_collector":
                    ev = self.inj.slow_collector(f.delay_s)
                elif f.kind == "slow_wakeup":
                    ev = self.inj.slow_wakeup(f.target, f.engine, f.delay_s)
                elif f.kind == "corrupt_ready_entry":
                    ev = self.inj.corrupt_ready_entry(f.thread, f.field or "buffer_ptr")
                elif f.kind == "stall_shard":
                    ev = self.inj.stall_shard(f.shard, f.duration_s)
                elif f.kind == "miopen_db":
                    ev = self.inj.miopen_db(rec["index"], f.how, self.miopen_path)
                else:
                    ev = self.inj.corrupt(f.kind, self.sc.workload.device, f.queue, f.packet_type)
            except InjectError as exc:
                rec.update(state="failed", reason=str(exc))
                self.hist.add("fault", t_ns, index=rec["index"], kind=f.kind, target=f.target, injected=False,
                              reason=str(exc))
                self.say(f"{(t_ns - self.hist.t0_ns) / 1e9:8.3f} s  fault {rec['index']}: NOT injected: {exc}")
                continue
            t_ns = ev.pop("at_ns", t_ns)        # the instant it took effect, when the injector knows it better
            what = {"kill": "SIGKILL", "stop": "SIGSTOP", "stall_engine": f"stall engine {f.engine} of",
                    "stall_shard": f"stall drain shard {f.shard} of",
                    "miopen_db": f"{f.how} on the MIOpen binary cache of",
                    "corrupt_ready_entry": f"corrupt a ready entry of thread {f.thread} ({f.field or 'buffer_ptr'}) of",
                    "slow_wakeup": f"delay {(f.delay_s or 0) * 1e3:g} ms each wake-up of engine {f.engine} of",
                    "slow_collector": f"delay {(f.delay_s or 0) * 1e3:g} ms a buffer in"}.get(
                f.kind, f.kind.replace("_", " "))
            tgt = f.target or ("collector" if f.kind in COLLECTOR_KINDS else "workload")
            item = self.hist.add("fault", t_ns, index=rec["index"], kind=f.kind, target=tgt,
                                 injected=True, signal=what, trigger=rec["trigger"], **ev)
            rec.update(state="injected", t_ns=t_ns, t_s=item["t_s"], evidence=ev)
            self.say(f"{item['t_s']:8.3f} s  fault {rec['index']}: {what} {tgt} "
                     f"({', '.join(f'{k} {v}' for k, v in ev.items())})")

    def _end(self, f, rec, early: str = "") -> None:
        """The end of a fault with a duration: SIGCONT, or the stall's deadline (the engine clears its
        word itself; ``early``: cleared by the run because the workload ended first)."""
        if f.kind == "stop":
            self.inj.resume(f.target)
            data = {"signal": "SIGCONT"}
        elif f.kind == "miopen_db":
            try:
                data = self.inj.end_miopen_db(rec["index"], self.miopen_path)
            except InjectError as exc:
                data = {"released": False, "reason": str(exc)}
            if f.duration_s is None:
                data["at"] = "the workload's end (no duration_s)"
        elif f.kind == "slow_collector":
            data = self.inj.end_slow_collector()
            data["buffers_during"] = [a["buffers"] - b["buffers"] for a, b in zip(data["shards"],
                                                                                  rec["evidence"]["shards"])]
        elif f.kind == "slow_wakeup":
            data = self.inj.end_slow_wakeup(f.target, f.engine)
            data["wakeups_during"] = data["wakeups"] - rec["evidence"]["wakeups"]
            data["packets_during"] = [a - b for a, b in zip(data["packets"], rec["evidence"]["packets"])]
        elif f.kind == "stall_shard":
            if not early:           # the shard clears its word once past the deadline: give it a moment
                t = time.monotonic()
                while self.inj.shard_stall_pending(f.shard) and time.monotonic() - t < STALL_CLEAR_BOUND_S:
                    time.sleep(0.001)       # a poll period: the shard wakes at the deadline on its own
            after = shard_counters(self.plat.pm)
            data = {"shard": f.shard, "shards": after,
                    "buffers_during": [a["buffers"] - b["buffers"] for a, b in zip(after, rec["evidence"]["shards"])],
                    "cleared_by": "run" if self.inj.end_shard_stall(f.shard) else "collector"}
        else:
            before = rec["evidence"]["packets"]
            if not early:           # the engine clears its word once past the deadline: give it a moment
                t = time.monotonic()
                while self.inj.stall_pending(f.target, f.engine) and time.monotonic() - t < STALL_CLEAR_BOUND_S:
                    time.sleep(0.001)       # a poll period: the engine wakes at the deadline on its own
            after = engine_packets(self.plat.pm, int(f.target[2:]))
            # during the stall: up to the last poll that saw it still set (the run's end of the window
            # comes a poll period or, on a loaded machine, a scheduling delay after the engine resumed:
            # what ran after its deadline is ``packets_to_end``, not the stall's)
            stalled = self.stalled_packets.pop(rec["index"], after)
            data = {"engine": f.engine, "packets_during": [a - b for a, b in zip(stalled, before)],
                    "packets_to_end": [a - b for a, b in zip(after, before)],
                    "cleared_by": "run" if self.inj.end_stall(f.target, f.engine) else "engine"}
        if early:
            data["early"] = early
        end = self.hist.add("fault_end", index=rec["index"], kind=f.kind, target=rec["target"], **data)
        rec["end_t_s"] = end["t_s"]
        self.say(f"{end['t_s']:8.3f} s  fault {rec['index']}: end of {f.kind} {rec['target'] or 'workload'}")

    def _end_faults(self) -> None:
        """After the workload: stalls still set are cleared, memory taken by memory_pressure freed."""
        for f, rec in zip(self.sc.fault, self.faults):
            if rec["state"] != "injected" or "end_t_s" in rec:
                continue
            if f.kind in ("stall_engine", "stall_shard", "slow_collector", "slow_wakeup"):
                self._end(f, rec, early="the workload ended before the stall's deadline")
            elif f.kind == "miopen_db":
                self._end(f, rec, early="the workload ended before the release" if f.duration_s else "")
            elif f.kind == "memory_pressure":
                freed = self.inj.release_memory()
                end = self.hist.add("fault_end", index=rec["index"], kind=f.kind, freed=freed)
                rec["end_t_s"] = end["t_s"]

    # -- after the workload ----------------------------------------------------------------------
    def _await_marked_dead(self, role: str) -> None:
        """Poll (bounded by RECLAIM_BOUND_S) until the supervisor has marked the killed ``role`` dead."""
        i = self.roles[role]
        deadline = time.monotonic() + RECLAIM_BOUND_S
        while (L.ROLE_STATE_NAMES.get(int(self.plat.pm.roles[i]["state"])) != "dead"
               and time.monotonic() < deadline):
            time.sleep(0.02)

    def _await_roles_exit(self) -> None:
        """The supervisor was killed: poll (bounded by ROLES_EXIT_BOUND_S) until every role has exited
        on its own (each watches the supervisor's pid), recording each death as it is seen."""
        deadline = time.monotonic() + ROLES_EXIT_BOUND_S
        while time.monotonic() < deadline:
            self._observe()
            if all(n in self.dead_roles for n in self.roles):
                break
            time.sleep(POLL_S)
        self.hist.add("roles_exited", bound_s=ROLES_EXIT_BOUND_S,
                      left=sorted(n for n in self.roles if n not in self.dead_roles))

    def _await_reclaim(self, pid: int) -> None:
        """Poll until the CPs freed what the killed workload owned (housekeeping, every 0.5 s)."""
        t = time.monotonic()
        left = owned_by(self.plat.pm, pid)
        while any(left.values()) and time.monotonic() - t < RECLAIM_BOUND_S:
            time.sleep(0.02)         # a poll period: housekeeping runs on the CP's own clock
            left = owned_by(self.plat.pm, pid)
        self.hist.add("reclaimed", pid=pid, complete=not any(left.values()), after_s=round(time.monotonic() - t, 3),
                      left=left, bound_s=RECLAIM_BOUND_S)

    def _probe(self) -> None:
        """A fresh client: one launch and sync on the workload's device, with its own bound."""
        spec = dict(self.sc.workload.model_dump(), builtin="launch_loop", entry=None, program=None, streams=1,
                    iterations=1, batch=1, wait_timeout_s=5.0)
        self.probe = _spawn_workload(spec, self.out, "probe", self.plat)
        try:
            code = self.probe.wait(PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _reap(self.probe)
            code = None
        evs = _EventTail(self.out / "probe.events.jsonl").read()
        errors = [e for e in evs if e["ev"] == "error"]
        done = next((e for e in evs if e["ev"] == "done"), None)
        self.hist.add("probe", pid=self.probe.pid, exit_code=code, errors=errors,
                      ok=code == 0 and done is not None and all(v for v in done["verified"] if v is not None))

    def cleanup(self) -> None:
        if self.inj is not None:
            self.inj.close_db_faults()      # what it still holds is released first
            self.inj.resume_all()
            for (target, engine) in list(self.inj.stalled):
                if target == "collector":
                    self.inj.end_shard_stall(engine)
                else:
                    self.inj.end_stall(target, engine)
            if self.cfg["profiling"]["enabled"] and any(f.kind == "slow_collector" for f in self.sc.fault):
                try:
                    self.inj.end_slow_collector()
                except (KeyError, AttributeError):
                    pass            # the platform never came up
            self.inj.release_memory()
        for p in (self.work, self.probe):
            if p is not None:
                _reap(p)
        if self.plat is not None:
            names = list(self.plat.topo.names.values()) if self.plat.pm is not None else []
            self.plat.stop()
            if hasattr(self, "hist"):
                there = {n for n, _pid, _tok in list_segments()}
                end = dict(getattr(self.plat, "end", {}))
                end["segments_left"] = [n for n in names if n in there]
                self.hist.add("platform_end", segments=len(names), **end)
            acc = getattr(self.plat, "dfx_final", None)
            if acc is not None and hasattr(self, "hist"):
                for pool in acc["pools"]:
                    self.hist.add("dfx_pool", **{k: pool[k] for k in ("thread", "kind", "total", "collected",
                                                                       "dropped", "missing", "causes") if k in pool})
                self.hist.add("dfx_lanes", lanes=acc.get("lanes", []), salvaged=acc.get("salvaged_records", 0))
            if self.outputs:
                self.outputs.update(add_dfx_rows(self, self.out))
        if hasattr(self, "hist"):
            self.hist.close()


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_scenario(sc, cfg: dict, out_dir: str | os.PathLike, progress=print, plot: bool = True) -> dict:
    """Run one scenario into ``out_dir``; returns the report (also written to report.json). A Ctrl-C
    or SIGTERM stops the run (KeyboardInterrupt) after every process is reaped and every segment gone."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = json.loads(json.dumps(cfg))
    if cfg["profiling"]["enabled"] and not cfg["profiling"]["output_dir"]:
        cfg["profiling"]["output_dir"] = str((out / "dfx").resolve())
    old_term = signal.signal(signal.SIGTERM, _interrupt)
    log, handler = logging.getLogger("hdemu"), logging.FileHandler(out / "roles.log")   # the supervisor's lines
    handler.setFormatter(logging.Formatter("hdemu %(name)s: %(message)s"))
    log.addHandler(handler)
    propagate, log.propagate = log.propagate, False
    r = _Run(sc, cfg, out, progress)
    r.plot = plot
    t = time.monotonic()
    try:
        r.run()
    finally:
        old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)   # cleanup is not interrupted
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            r.cleanup()
        finally:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
            log.removeHandler(handler)
            log.propagate = propagate
            handler.close()
    report = {"scenario": sc.name, "description": sc.description, "out_dir": str(out.resolve()),
              "platform": r.plat.name, "duration_s": round(time.monotonic() - t, 3),
              "workload": {**sc.workload.model_dump(), "pid": r.work.pid, "exit_code": r.work.returncode},
              "faults": [{k: v for k, v in rec.items() if k != "t_ns"} for rec in r.faults]}
    report["promises"] = check_all(sc, r.hist.items, r.faults)
    report["verdict"] = "FAILED" if any(p["verdict"] == "FAILED" for p in report["promises"]) else "HELD"
    report["counts"] = _counts(r.hist.items)
    report["outputs"] = r.outputs
    with open(out / "report.json", "w") as f:
        json.dump(report, f, indent=1)
    return report


def _counts(items: list[dict]) -> dict:
    wl = [i for i in items if i["type"] == "workload"]
    pools = [i for i in items if i["type"] == "dfx_pool"]
    return {"faults_injected": sum(1 for i in items if i["type"] == "fault" and i.get("injected", True)),
            "workload_errors": sum(1 for i in wl if i["ev"] == "error"),
            "syncs": sum(1 for i in wl if i["ev"] == "sync"),
            "roles_died": sorted(i["role"] for i in items if i["type"] == "role_died"),
            "queue_errors": sum(1 for i in items if i["type"] == "queue_error"),
            "dfx": {"total": sum(p["total"] for p in pools), "collected": sum(p["collected"] for p in pools),
                    "dropped": sum(p["dropped"] for p in pools)} if pools else None}
