"""Fault injection on a running platform (``Platform`` object of this process) and its workload.

Signals go through the ``Popen`` of each role (the supervisor's own handles, so a reused pid is never
hit). Corruptions of the workload's queue are ``_corrupt``'s (through the declared layouts). An engine
stall writes the engine's ``engine_stats.stall_until_ns`` (a deadline the CP's engine loop honours: it
sleeps until then and clears the word). Memory pressure allocates the agent's free device memory (but
``free_bytes``) in this process, the supervisor's, through the shared allocation table. A MIOpen
binary-cache fault is ``_kerndb.inject_fault`` done by the ``dbfault`` process of ``_miopen`` on command
(``DbFaults``), so that this process never imports ``hostside.miopen``.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.alloc import AllocError, AllocTable
from shm_layout.sync import fetch_add32, futex_wake, notify

from ._corrupt import corrupt, corrupt_ready_entry

__all__ = ["Injector", "InjectError", "DbFaults", "dispatches", "records", "owned_by", "engine_packets", "lane_stalls",
           "shard_counters", "DBFAULT_ANSWER_S", "HOLD_BOUND_S"]

#: How long the ``dbfault`` process may take to start, or to answer a command (an inject may wait for
#: the workload's write to end: sqlite's own bound there is 10 s).
DBFAULT_ANSWER_S = 30.0
#: How long a db fault waits for a moment the workload has no file of its db open.
HOLD_BOUND_S = 5.0


class InjectError(Exception):
    """A fault could not be injected (its target is gone, no queue to corrupt); the reason is recorded."""


def dispatches(pm) -> int:
    """AQL packets (dispatches and barriers) every AQL engine of every agent has executed so far."""
    return sum(int(am.engine_stats[e]["packets"]) for am in pm.agents for e in range(pm.topo.n_engines))


def records(pm) -> int:
    """DFX records every AICPU thread has handed to its pools so far (collected, dropped or pending)."""
    g = pm.topo.dfx
    if g is None:
        return 0
    hdr = pm.segs["dfxhdr"]
    return sum(int(hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]["total_record_count"])
               for t in range(g.T) for k in g.kinds)


def engine_packets(pm, agent: int) -> list[int]:
    """Packets each engine of ``agent`` (the AQL engines, then SDMA) has executed so far."""
    return [int(pm.agents[agent].engine_stats[e]["packets"]) for e in range(pm.topo.n_engines + 1)]


def lane_stalls(pm, lane: int) -> int:
    """Stalls DFX lane ``lane`` has ended so far (its lane_status; a stall is counted when it ends)."""
    g = pm.topo.dfx
    return int(pm.segs["dfxctl"].view(D.lane_status, g.lane_status_off(lane), 1)[0]["stalls"])


def shard_counters(pm) -> list[dict]:
    """Per drain shard of the collector: ready entries processed, stalls honoured, time stalled (ns)."""
    g = pm.topo.dfx
    n = min(g.prof["drain_shards"], g.T)
    seg = pm.segs["dfxctl"]
    return [{k: int(seg.view(D.shard_control, g.shard_control_off(s), 1)[0][k]) for k in ("buffers", "stalls",
                                                                                          "stall_ns")}
            for s in range(n)]


def owned_by(pm, pid: int) -> dict:
    """Queues (per agent), allocations and signals that ``pid`` still owns."""
    queues = [(a, q) for a, am in enumerate(pm.agents) for q in range(pm.topo.max_queues)
              if L.owner_pid(int(am.qdesc[q]["owner"])) == pid]
    allocs = sum(int(((r["owner_pid"] == pid) & (r["kind"] != 0)).sum()) for r in pm.alloc_recs)
    sigs = int(((pm.signals["owner"] & 0xFFFFFFFF) == pid).sum())
    return {"queues": queues, "allocations": allocs, "signals": sigs}


def _opens(pid: int, path: str) -> bool:
    """Whether process ``pid`` has the db at ``path`` (or its -wal / -shm / -journal) open."""
    real = os.path.realpath(path)
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(real):
                return True
        except OSError:
            continue
    return False


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return True                         # gone: nothing to wait for


def _hold_off_db(w: subprocess.Popen, path: str) -> tuple[int, int]:
    """SIGSTOP the workload at a moment it has no file of the db open (each KernDb operation opens and
    closes its connection: retried until then, at most HOLD_BOUND_S); returns (the hold's
    CLOCK_MONOTONIC ns, tries). The caller sends SIGCONT."""
    deadline = time.monotonic() + HOLD_BOUND_S
    tries = 0
    while True:
        tries += 1
        w.send_signal(signal.SIGSTOP)
        t = time.monotonic()
        while not _stopped(w.pid) and time.monotonic() - t < 1.0:
            time.sleep(0.0002)              # a poll period: the kernel stops it on its own
        at_ns = time.monotonic_ns()
        if not _opens(w.pid, path):
            return at_ns, tries
        w.send_signal(signal.SIGCONT)
        if time.monotonic() > deadline:
            raise InjectError(f"the workload kept {path} open for {HOLD_BOUND_S} s ({tries} looks)")
        time.sleep(0.001)                   # let it finish the operation it is in


class DbFaults:
    """The ``dbfault`` process (``python -m hostside.faults._miopen dbfault``): started with the run, it
    injects and releases ``_kerndb`` faults on command; closing its stdin releases what it still holds."""

    def __init__(self, log_path):
        env = {k: v for k, v in os.environ.items() if k not in ("HDEMU_PLATFORM", "HDEMU_CONFIG")}
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "hostside.faults._miopen", "dbfault"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                         env=env, start_new_session=True)
        self.ready = False

    def _line(self) -> dict:
        deadline = time.monotonic() + DBFAULT_ANSWER_S
        while True:
            if self.proc.poll() is not None:
                raise InjectError(f"the dbfault process (pid {self.proc.pid}) exited with code {self.proc.returncode}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise InjectError(f"the dbfault process (pid {self.proc.pid}) did not answer within {DBFAULT_ANSWER_S} s")
            if select.select([self.proc.stdout], [], [], min(left, 0.5))[0]:
                line = self.proc.stdout.readline()
                if line:
                    return json.loads(line)

    def is_ready(self) -> bool:
        """Its imports are done (its first line came), without waiting."""
        if not self.ready and self.proc.poll() is None and select.select([self.proc.stdout], [], [], 0)[0]:
            self._line()
            self.ready = True
        return self.ready or self.proc.poll() is not None      # a dead one: ask says why

    def ask(self, **cmd) -> dict:
        if not self.ready:
            self._line()                    # {"ready": true}: its imports are done
            self.ready = True
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise InjectError(f"the dbfault process (pid {self.proc.pid}) is gone: {exc}") from None
        return self._line()

    def close(self) -> None:
        """End it: it releases every fault it still holds, then exits (killed after 10 s)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.proc.stdout.close()


#: Longest wait for a SIGSTOPped role's threads to be seen stopped (``Injector.stop``).
STOP_BOUND_S = 1.0


def _wait_stopped(pid: int, bound_s: float) -> bool:
    """Poll /proc until every thread of ``pid`` is stopped ('T' or 't'), or gone, within ``bound_s``."""
    deadline = time.monotonic() + bound_s
    while True:
        try:
            states = []
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
                except OSError:
                    continue            # a thread that just ended
        except OSError:
            return True                 # the process is gone
        if all(st in "tTZX" for st in states):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0002)              # a poll period: the kernel delivers the stop on its own


class Injector:
    """Resolves role names (``workload``, ``cp<i>``, ``lane<i>``, ``collector``, ``supervisor``) to processes and
    injects faults into them."""

    #: what ``_corrupt`` raises when a corruption cannot be injected (it cannot import this module)
    error = InjectError

    def __init__(self, plat, workload: subprocess.Popen):
        self.plat, self.workload = plat, workload
        self.stopped: dict[str, subprocess.Popen] = {}
        self.stalled: dict[tuple[str, int], int] = {}
        self.hogs: list = []
        self.db: DbFaults | None = None

    # -- the workload's MIOpen binary cache (``_kerndb.inject_fault``, in the dbfault process) -------------
    def start_db_faults(self, log_path) -> None:
        self.db = DbFaults(log_path)

    def miopen_db(self, index: int, how: str, path: str) -> dict:
        """Fault ``how`` on the workload's ``.ukdb`` at ``path`` (or its directory), done while the workload
        is held with SIGSTOP at a moment it has no file of the db open (``_hold_off_db``): no connection
        of its spans the damage, so every db access after ``at_ns`` (the hold) meets the fault."""
        w = self.workload
        if w.poll() is not None:
            raise InjectError(f"the workload (pid {w.pid}) had already exited")
        if self.db.proc.poll() is not None:
            raise InjectError(f"the dbfault process (pid {self.db.proc.pid}) exited with code {self.db.proc.returncode}"
                              f" before the fault (its log: dbfault.log)")
        at_ns, tries = _hold_off_db(w, path)
        try:
            ans = self.db.ask(op="inject", index=index, how=how, path=path)
        finally:
            if w.poll() is None:
                w.send_signal(signal.SIGCONT)
        if not ans["ok"]:
            raise InjectError(ans["reason"])
        return {**ans["evidence"], "at_ns": at_ns, "holds": tries}

    def end_miopen_db(self, index: int, path: str) -> dict:
        """Undo fault ``index`` (the file, records, lock or mode restored)."""
        ans = self.db.ask(op="release", index=index, path=path)
        return {"released": ans["released"], "records": ans["records"]}

    def close_db_faults(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def proc(self, target: str) -> subprocess.Popen:
        p = self.plat
        if target == "workload":
            return self.workload
        if target == "supervisor":          # a platform of its own (``_remote``): its supervisor process
            return self.plat.supervisor
        if target == "collector":
            return p.procs[p.dfx_roles["collector"][0]]
        if target.startswith("lane"):
            return p.procs[p.dfx_roles["lanes"][int(target[4:])]]
        return p.procs[int(target[2:])]

    def _signal(self, target: str, sig: int) -> int:
        pr = self.proc(target)
        if pr.poll() is not None:
            raise InjectError(f"{target} (pid {pr.pid}) had already exited with code {pr.returncode}")
        pr.send_signal(sig)
        return pr.pid

    def kill(self, target: str) -> dict:
        self.resume(target)
        return {"pid": self._signal(target, signal.SIGKILL)}

    def stop(self, target: str) -> dict:
        """SIGSTOP ``target`` and return once every thread of it is stopped: the signal is delivered
        asynchronously, and a command processor spinning on another core runs on (fetching the very
        packet a corruption is about to change) until it is."""
        pid = self._signal(target, signal.SIGSTOP)
        self.stopped[target] = self.proc(target)
        _wait_stopped(pid, STOP_BOUND_S)
        return {"pid": pid}

    def resume(self, target: str) -> bool:
        """SIGCONT a role this injector stopped; False if it was not stopped."""
        pr = self.stopped.pop(target, None)
        if pr is None:
            return False
        if pr.poll() is None:
            pr.send_signal(signal.SIGCONT)
        return True

    def resume_all(self) -> None:
        for t in list(self.stopped):
            self.resume(t)

    def workload_queues(self, agent: int) -> list[int]:
        """Slots of the workload's AQL queues on ``agent``, in slot order."""
        am = self.plat.pm.agents[agent]
        return [q for q in range(self.plat.pm.topo.max_queues)
                if L.owner_pid(int(am.qdesc[q]["owner"])) == self.workload.pid
                and int(am.qdesc[q]["kind"]) == L.QKIND_AQL and int(am.qdesc[q]["active"])]

    def corrupt_header(self, agent: int, nth: int, packet_type: int) -> dict:
        """Overwrite the packet type of a published, not yet fetched packet of the workload's ``nth``
        AQL queue on ``agent``; returns where and what was written."""
        return corrupt(self, "corrupt_header", agent, nth, packet_type)

    def corrupt_ready_entry(self, thread: int, field: str) -> dict:
        """Change ``field`` of an unread entry of AICPU thread ``thread``'s DFX ready queue (``_corrupt``)."""
        if self.proc("collector").poll() is not None:
            raise InjectError("the collector had already exited")
        return corrupt_ready_entry(self, thread, field)

    def corrupt(self, kind: str, agent: int, nth: int, packet_type: int = 4) -> dict:
        """One of the ``_corrupt`` kinds on the workload's ``nth`` AQL queue of ``agent``."""
        return corrupt(self, kind, agent, nth, packet_type)

    # -- an engine stall (engine_stats.stall_until_ns, honoured by the CP's engine loop) ----------------
    def _engine(self, target: str, engine: int):
        if self.proc(target).poll() is not None:
            raise InjectError(f"{target} had already exited")
        return self.plat.pm.agents[int(target[2:])].engine_stats[engine:engine + 1]

    def stall_engine(self, target: str, engine: int, duration_s: float) -> dict:
        """Engine ``engine`` of command processor ``target`` takes no packet for ``duration_s``."""
        st = self._engine(target, engine)
        if int(st["state"][0]) != L.ENGINE_RUNNING:
            raise InjectError(f"engine {engine} of {target} is {L.ENGINE_STATE_NAMES.get(int(st['state'][0]), '?')}")
        until = time.monotonic_ns() + int(duration_s * 1e9)
        st["stall_until_ns"] = until
        self.stalled[(target, engine)] = until
        return {"engine": engine, "until_ns": until, "packets": engine_packets(self.plat.pm, int(target[2:]))}

    def stall_pending(self, target: str, engine: int) -> bool:
        """The stall this injector set is still in the engine's word (not cleared by the engine yet)."""
        until = self.stalled.get((target, engine))
        st = self.plat.pm.agents[int(target[2:])].engine_stats[engine:engine + 1]
        return until is not None and int(st["stall_until_ns"][0]) == until

    def end_stall(self, target: str, engine: int) -> bool:
        """Clear a stall this injector set (the engine clears it itself once past): True if it was still set."""
        until = self.stalled.pop((target, engine), None)
        if until is None:
            return False
        am = self.plat.pm.agents[int(target[2:])]
        st = am.engine_stats[engine:engine + 1]
        was = int(st["stall_until_ns"][0]) == until
        if was:
            st["stall_until_ns"] = 0
            addr = am.engine_wake_addr(engine)
            fetch_add32(addr, 1)        # the wake word changes: the sleeping engine looks again
            futex_wake(addr)
        return was

    # -- the collector: a delay per buffer drained, a stall of one drain shard (``hostside.dfx._shards``) ----
    def _ctl(self):
        if self.proc("collector").poll() is not None:
            raise InjectError("the collector had already exited")
        return self.plat.pm.segs["dfxctl"]

    def slow_collector(self, delay_s: float) -> dict:
        """Every drain shard sleeps ``delay_s`` after each buffer (``ctl_header.drain_delay_ns``)."""
        ctl = self._ctl().view(D.ctl_header, 0, 1)
        ctl["drain_delay_ns"] = int(delay_s * 1e9)
        return {"delay_ns": int(ctl["drain_delay_ns"][0]), "shards": shard_counters(self.plat.pm)}

    def end_slow_collector(self) -> dict:
        self.plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)["drain_delay_ns"] = 0
        return {"shards": shard_counters(self.plat.pm)}

    def _shard_word(self, shard: int):
        g = self.plat.pm.topo.dfx
        return self._ctl().view(D.shard_control, g.shard_control_off(shard), 1)

    def stall_shard(self, shard: int, duration_s: float) -> dict:
        """Drain shard ``shard`` takes no ready entry for ``duration_s`` (``shard_control.stall_until_ns``)."""
        w = self._shard_word(shard)
        until = time.monotonic_ns() + int(duration_s * 1e9)
        w["stall_until_ns"] = until
        self.stalled[("collector", shard)] = until
        g = self.plat.pm.topo.dfx
        n = min(g.prof["drain_shards"], g.T)
        # the sweep under way when the word was set finishes: at most a full ready queue of each of its threads
        limit = g.N * len(range(shard, g.T, n))
        return {"shard": shard, "until_ns": until, "sweep_limit": limit, "shards": shard_counters(self.plat.pm)}

    def shard_stall_pending(self, shard: int) -> bool:
        until = self.stalled.get(("collector", shard))
        g = self.plat.pm.topo.dfx
        w = self.plat.pm.segs["dfxctl"].view(D.shard_control, g.shard_control_off(shard), 1)
        return until is not None and int(w["stall_until_ns"][0]) == until

    def end_shard_stall(self, shard: int) -> bool:
        """Clear a shard stall this injector set (the shard clears it itself once past): True if it was still set."""
        until = self.stalled.pop(("collector", shard), None)
        if until is None:
            return False
        g = self.plat.pm.topo.dfx
        seg = self.plat.pm.segs["dfxctl"]
        w = seg.view(D.shard_control, g.shard_control_off(shard), 1)
        was = int(w["stall_until_ns"][0]) == until
        if was:
            w["stall_until_ns"] = 0
            notify(seg.addr + L.offset_of(D.ctl_header, "collector_wake"))   # the sleeping shard looks again
        return was

    # -- a slow wake-up path (engine_stats.wake_delay_ns, honoured by the CP's engine loop) ---------------
    def slow_wakeup(self, target: str, engine: int, delay_s: float) -> dict:
        """Engine ``engine`` of ``target`` sleeps ``delay_s`` each time its wait for work ends with work."""
        st = self._engine(target, engine)
        st["wake_delay_ns"] = int(delay_s * 1e9)
        return {"engine": engine, "delay_ns": int(st["wake_delay_ns"][0]), "wakeups": int(st["wakeups"][0]),
                "packets": engine_packets(self.plat.pm, int(target[2:]))}

    def end_slow_wakeup(self, target: str, engine: int) -> dict:
        st = self.plat.pm.agents[int(target[2:])].engine_stats[engine:engine + 1]
        st["wake_delay_ns"] = 0
        return {"engine": engine, "wakeups": int(st["wakeups"][0]),
                "packets": engine_packets(self.plat.pm, int(target[2:]))}

    # -- memory pressure (device memory allocated by this process, the supervisor) ----------------------
    def memory_pressure(self, agent: int, free_bytes: int) -> dict:
        """Allocate all of ``agent``'s free device memory but ``free_bytes`` (owned by this process)."""
        pm = self.plat.pm
        table = AllocTable(pm.alloc_hdrs[1 + agent], pm.alloc_recs[1 + agent], L.device_base(agent),
                           pm.topo.memory_bytes, agent)
        free = pm.topo.memory_bytes - int(table.hdr["used_bytes"][0])
        want = (free - free_bytes) // L.ALLOC_ALIGN * L.ALLOC_ALIGN
        if want <= 0:
            raise InjectError(f"agent {agent} has {free} bytes free, not more than free_bytes {free_bytes}")
        try:
            addr = table.allocate(want, L.ALLOC_DEVICE)
        except AllocError as exc:
            raise InjectError(f"allocating {want} bytes of agent {agent}'s memory: {exc}") from None
        self.hogs.append((table, addr))
        return {"agent": agent, "allocated": want, "address": hex(addr),
                "free_after": pm.topo.memory_bytes - int(table.hdr["used_bytes"][0])}

    def release_memory(self) -> int:
        """Free what ``memory_pressure`` allocated; returns the bytes freed."""
        n = 0
        while self.hogs:
            table, addr = self.hogs.pop()
            n += table.free(addr)
        return n
