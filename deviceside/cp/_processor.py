"""The command processor process of one agent: its engine threads, signals, errors and housekeeping.

Threads: ``n_engines`` AQL engines (``_aql.AqlEngine``) and one SDMA engine (``_sdma.SdmaEngine``,
engine index ``n_engines``). A queue is bound to one engine when it is created (the host picks the
least-loaded engine, like queues mapped onto hardware pipes); an engine serves its queues round
robin, at most 64 packets per queue per turn, each queue strictly in order. A long kernel on one
engine never holds up another engine's queues. ``sys.setswitchinterval`` is lowered so engines share
the GIL finely. The main thread joins the engines; SIGTERM sets ``stopping``.

An engine whose stall word (``engine_stats.stall_until_ns``, written by fault injection) holds a
deadline takes no packet before it: it sleeps on its wake word, then clears the word (``_stall``). One
whose ``engine_stats.wake_delay_ns`` is set sleeps that long each time its wait for work ends with work
(a slow wake-up path: the doorbell-to-fetch latency rises by it).

Right after work an engine spins ``ENGINE_SPIN_S`` through its own loop (the pass after a doorbell runs
its packet), then sleeps on its wake word (the doorbell mailbox) for at most ``IDLE_SLICE_S``; every ``HOUSEKEEPING_S`` an idle engine writes the
heartbeat, checks the boot block's ``shutdown`` and the supervisor, acknowledges destroy requests and
reclaims the queues of dead owners; the janitor (the lowest live engine) also the allocations, and on
agent 0 the signals, code objects and trace rings of dead owners.

Every value read from shared memory is validated before use (``_queues``, ``_ring``, ``_memory``,
``_loader``): a bad packet or descriptor fails its queue with an HSA status, never the engine. The
signals a packet names must be signals of the queue's owner (``check_signal``). Each engine has a
state word (``engine_stats.state``): ENGINE_RUNNING while it serves; an engine whose thread ends with
an exception all the same (a bug, or a kernel that broke the CP's own objects) is ENGINE_DEAD, its
queues fail with HSA_STATUS_ERROR_FATAL and the other engines serve on. The process ends with
``ENGINE_CRASH_EXIT`` once every engine is dead (``os._exit`` in a kernel ends it at once: the
supervisor and the hosts then see a dead command processor).
"""
from __future__ import annotations

import os
import signal as _signal
import sys
import threading
import time

import numpy as np

from shm_layout import layouts as L
from shm_layout.alloc import owner_alive
from shm_layout.coherence import wmb
from shm_layout.errors import ConfigError, HdemuError
from shm_layout.sync import Decrementer, cas, fetch_add, fetch_add32, futex_wake, wait_until
from shm_layout.topology import PlatformMap
from shm_layout.trace import TraceRing

from shm_layout.logs import configure_stderr, role_logger
from deviceside.aicpu import TaskRings

from ._aql import AqlEngine, KernelLoader
from ._counters import CounterUnit
from ._memory import DeviceMemory
from ._queues import QueueTable
from ._ring import DISPATCH_INDEX_MASK, U64_MAX, PacketError, QueueState, describe_exception
from ._sdma import SdmaEngine

__all__ = ["CommandProcessor", "main", "HOUSEKEEPING_S", "IDLE_SLICE_S", "ENGINE_CRASH_EXIT", "ENGINE_SPIN_S"]

#: How often an idle engine does its housekeeping (heartbeat, shutdown and supervisor check, destroy
#: acknowledgements, reclaim of dead owners).
HOUSEKEEPING_S = 0.5
#: Longest sleep of an idle engine; on waking it re-runs its loop, so housekeeping happens.
IDLE_SLICE_S = 0.5
#: Exit status of a command processor whose engines all died.
ENGINE_CRASH_EXIT = 70
#: How long an engine that just ran packets spins for more before it sleeps. Longer than a host's
#: spin (``shm_layout.sync.WAIT_SPIN_S``): on a virtual machine a futex wake-up of an idle CPU can take
#: a few hundred microseconds, and once a round trip takes longer than both spins, host and engine
#: each sleep and wake the other every time (a stable slow mode, 300-700 us a launch + sync); an
#: engine that still spins when the host's next launch comes ends it. Only after work: an idle
#: platform does not spin.
ENGINE_SPIN_S = 2e-3

# signal_slot fields, as indices into u64 / u32 views of the signal table and byte offsets
_SIG_STRIDE64 = L.signal_slot.itemsize // 8
_SIG_STRIDE32 = L.signal_slot.itemsize // 4
_SIG_VALUE64 = L.word_of(L.signal_slot, "value")
_SIG_START64 = L.word_of(L.signal_slot, "start_ts")
_SIG_END64 = L.word_of(L.signal_slot, "end_ts")
_SIG_OWNER64 = L.word_of(L.signal_slot, "owner")
_SIG_WAITERS32 = L.word_of(L.signal_slot, "waiters", 4)
_SIG_VALUE = L.offset_of(L.signal_slot, "value")
_SIG_WAKE = L.offset_of(L.signal_slot, "seq")         # the wake word: seq, then waiters
_SIG_OWNER = L.offset_of(L.signal_slot, "owner")
_SIG_BYTES = L.SIGNAL_SLOT_BYTES
_QUEUE_TABLE_GEN = L.offset_of(L.agent_header, "queue_table_gen")
_QD_OWNER = L.offset_of(L.queue_desc, "owner")
_CO_OWNER = L.offset_of(L.codeobj_entry, "owner")
_TRACE_OWNER = L.offset_of(L.trace_ring_header, "owner")
_ES_BUSY = L.word_of(L.engine_stats, "busy_ns")
_ES_PACKETS = L.word_of(L.engine_stats, "packets")
_ES_SLEEPS = L.word_of(L.engine_stats, "sleeps")
_ES_WAKEUPS = L.word_of(L.engine_stats, "wakeups")
_ES_STALL = L.word_of(L.engine_stats, "stall_until_ns")
_ES_WAKE_DELAY = L.word_of(L.engine_stats, "wake_delay_ns")
#: The longest wake-up delay ``engine_stats.wake_delay_ns`` can ask for (a bad value must not hang an engine).
MAX_WAKE_DELAY_NS = 1_000_000_000
_QTG64 = L.word_of(L.agent_header, "queue_table_gen")
_BOOT_SHUTDOWN32 = L.word_of(L.boot_header, "shutdown", 4)
_ERROR_MSG_MAX = L.queue_desc.fields["error_msg"][0].itemsize - 1    # room for the NUL a reader expects
_flatnonzero = np.flatnonzero        # bound once: a kernel module that replaces it changes nothing here


class CommandProcessor:
    """Attaches to the platform as the command processor of ``agent``; ``run`` serves until stopped."""

    def __init__(self, boot_name: str, agent: int):
        self.log = role_logger(f"cp{agent}")
        self.pm = PlatformMap.attach(boot_name)
        self.topo = self.pm.topo
        if not 0 <= agent < self.topo.n_agents:
            raise ConfigError(f"agent must be in [0, {self.topo.n_agents}), not {agent}")
        self.agent_index = agent
        self.agent = self.pm.agents[agent]
        self.aseg = self.agent.seg
        self.a64 = memoryview(self.aseg.buf).cast("Q")
        self.a16 = memoryview(self.aseg.buf).cast("H")
        self.s64 = memoryview(self.pm.segs["signals"].buf).cast("Q")
        self.s32 = memoryview(self.pm.segs["signals"].buf).cast("I")
        self.boot32 = memoryview(self.pm.boot.buf).cast("I")
        self.signals_addr = self.pm.signals_addr
        self.n_signals = self.topo.n_signals
        #: the completion decrement (and wake) of signal slot i, with its address bound once
        self.decrement = Decrementer(self.signals_addr, _SIG_BYTES, _SIG_VALUE, _SIG_WAKE)
        self.queue_table_gen_addr = self.aseg.addr + _QUEUE_TABLE_GEN
        self.mem = DeviceMemory(self.pm)
        self.stopping = False
        self.loader = KernelLoader(self.pm, self.mem, agent)
        self.trace = TraceRing.claim(self.pm, L.ROLE_CP, f"cp{agent}")
        self.n_engines = self.topo.n_engines
        self.table = QueueTable(self)
        self.role = self._find_role()
        self.supervisor_pid = int(self.pm.boot_hdr["supervisor_pid"][0])
        self.counters = CounterUnit(self.mem, self.topo)
        self.dfx = None
        dg = self.topo.dfx
        if dg is not None and dg.prof["mode"] == "real":
            self.dfx = TaskRings(self.pm, dg, agent, self.n_engines)

    def _find_role(self):
        for i in range(L.BOOT_MAX_ROLES):
            r = self.pm.roles[i]
            if int(r["kind"]) == L.ROLE_CP and int(r["agent"]) == self.agent_index:
                return self.pm.roles[i:i + 1]
        return None

    # -- signals ------------------------------------------------------------------------------
    def check_signal(self, handle: int, qs: QueueState, what: str = "completion signal") -> int:
        """The slot of ``handle``, a signal of the queue's owner; PacketError(INVALID_SIGNAL) if it is
        no signal handle or another process's signal (each process has its own signals)."""
        off = handle - L.SIGNAL_HANDLE_BASE
        slot = off // _SIG_BYTES
        if off < 0 or off % _SIG_BYTES or slot >= self.n_signals:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_SIGNAL, f"{what} {handle:#x} is not a signal handle")
        if self.s64[slot * _SIG_STRIDE64 + _SIG_OWNER64] != qs.sig_own:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_SIGNAL,
                              f"{what} {handle:#x} is not a signal of the queue's owner (pid {qs.owner_pid})")
        return slot

    def complete_signal(self, slot: int, start: int, end: int) -> None:
        """Stamp the signal's start/end, decrement it once, and wake its waiters (``slot`` from
        ``check_signal``)."""
        base = slot * _SIG_STRIDE64
        self.s64[base + _SIG_START64] = start
        self.s64[base + _SIG_END64] = end
        self.decrement(slot)                               # locked: also the barrier before the check
        if self.s32[slot * _SIG_STRIDE32 + _SIG_WAITERS32]:
            self.decrement.wake(slot)

    def wake_signal(self, handle: int, qs: QueueState) -> None:
        """Wake the waiters of a signal of the queue's owner without changing it (a handle that is no
        such signal is left alone)."""
        try:
            slot = self.check_signal(handle, qs)
        except PacketError:
            return
        if self.s32[slot * _SIG_STRIDE32 + _SIG_WAITERS32]:
            addr = self.signals_addr + slot * _SIG_BYTES + _SIG_WAKE
            fetch_add32(addr, 1)
            futex_wake(addr)

    def signal_value(self, handle: int, qs: QueueState) -> int:
        """The value of a dependency signal of the queue's owner."""
        slot = self.check_signal(handle, qs, "dependency")
        v = self.s64[slot * _SIG_STRIDE64 + _SIG_VALUE64]
        return L.signed64(v)

    # -- errors -------------------------------------------------------------------------------
    def fail_queue(self, qs: QueueState, idx: int, err: PacketError, engine: int, signal: int) -> None:
        """Put the queue in error at packet ``idx``: packet id, message and ``active = 0`` first, then
        (after a write barrier) the status a host polls; the waiters of the packet's completion
        ``signal`` (not decremented) are woken to see it now. A queue fails once."""
        if qs.closed:
            return                                # failed once already, or no longer this queue
        qs.closed = True
        if self.a64[qs.i_kindgen] >> 32 != qs.gen:
            fetch_add(self.queue_table_gen_addr, 1)   # the slot was re-created meanwhile: not ours to fail
            return
        d = qs.desc
        d["error_packet_id"] = idx & U64_MAX
        d["error_msg"] = str(err).encode(errors="replace")[:_ERROR_MSG_MAX]
        d["active"] = 0
        wmb()                                     # a host that sees the status sees the message (inactive)
        d["status"] = err.status
        fetch_add(self.queue_table_gen_addr, 1)   # engines drop the inactive queue (else the failed
        if self.trace:                            # packet is re-run in a busy loop)
            self.trace.record(L.EV_QUEUE_ERROR, engine, qs.did_base | (idx & DISPATCH_INDEX_MASK), err.status)
        if signal:
            self.wake_signal(signal, qs)
        self.log.error("queue %d error %s at packet %d: %s", qs.q, L.STATUS_NAMES.get(err.status, err.status),
                       idx, err)

    # -- engines ------------------------------------------------------------------------------
    def engine_main(self, engine: int, sdma: bool) -> None:
        stats = self.agent.engine_stats[engine:engine + 1]
        try:
            self._engine_loop(engine, sdma)
        except BaseException as exc:  # noqa: BLE001 - an engine that dies must be loud and visible
            why = describe_exception(exc)
            self.log.critical("engine %d died: %s", engine, why, exc_info=exc)
            stats["died_ns"] = time.monotonic_ns()
            stats["state"] = L.ENGINE_DEAD
            try:
                self.table.engine_died(engine, why)
            except BaseException:  # noqa: BLE001 - the engine is gone anyway; the others go on
                self.log.exception("engine %d: failing its queues", engine)
            for e in range(self.n_engines + 1):
                futex_wake(self.agent.engine_wake_addr(e))      # the janitor may have changed
            return
        stats["state"] = L.ENGINE_STOPPED

    def _engine_loop(self, engine: int, sdma: bool) -> None:
        eng = SdmaEngine(self, engine) if sdma else AqlEngine(self, engine)
        kind = L.QKIND_SDMA if sdma else L.QKIND_AQL
        wake = self.agent.engine_wake_addr(engine)
        i_stats = (L.AGENT_ENGINE_STATS_OFF + engine * L.engine_stats.itemsize) // 8
        i_busy, i_packets = i_stats + _ES_BUSY, i_stats + _ES_PACKETS
        i_sleeps, i_wakeups = i_stats + _ES_SLEEPS, i_stats + _ES_WAKEUPS
        i_stall, i_wdelay = i_stats + _ES_STALL, i_stats + _ES_WAKE_DELAY
        a64 = self.a64
        boot32 = self.boot32
        i_gen = _QTG64                      # the agent header is at offset 0 of the agent segment
        process = eng.process_queue
        ready = eng.ready
        dfx = self.dfx if not sdma else None
        last_work = 0.0
        dry = True                          # no packet ran since the engine last found none
        gen_seen = -1
        queues: list[QueueState] = []
        last_hk = 0.0

        def control() -> bool:
            """Stopping, the queue table changed, or the platform shuts down."""
            if self.stopping or gen_seen != a64[i_gen]:
                return True
            if boot32[_BOOT_SHUTDOWN32]:
                self.stopping = True
                return True
            return False

        def has_work():
            for qs in queues:
                if ready(qs):
                    return True
            return control()

        def has_other_work():
            """has_work, but a parked queue counts only once its poll is due (its own doorbell
            changes nothing: what it rings is behind the packet that waits)."""
            now = time.monotonic()
            for qs in queues:
                if (qs.parked_until <= now if qs.parked_until else ready(qs)):
                    return True
            return control()

        while not self.stopping:
            if a64[i_stall]:                # a stall deadline (fault injection): one word read a turn
                if dfx is not None:
                    dfx.wake(engine)
                self._stall(engine, i_stall, wake, queues)
                continue
            g = a64[i_gen]
            if g != gen_seen:
                gen_seen = g
                queues = self.table.scan(engine, kind, queues)
            t0 = time.monotonic_ns()
            done = 0
            for qs in queues:
                done += process(qs)
            if done:
                a64[i_busy] = (a64[i_busy] + time.monotonic_ns() - t0) & U64_MAX
                a64[i_packets] = (a64[i_packets] + done) & U64_MAX
                last_work = time.monotonic()
                dry = False
                continue
            if not dry:
                dry = True
                if dfx is not None:
                    dfx.wake(engine)        # the lane's task ring: one notify when the engine runs dry
            now = time.monotonic()
            if now - last_hk > HOUSEKEEPING_S:
                last_hk = now
                self._housekeeping(engine, queues)
            if now - last_work < ENGINE_SPIN_S and not a64[i_wdelay]:
                # right after work, spin through this loop: the next pass runs a packet rung meanwhile
                # (no return through a wait). Not while a queue is parked: its dependency is another
                # engine's (or process's) work, which a spin holding the GIL would only slow down, so
                # the parked wait below sleeps instead. A slow wake-up (wake_delay_ns) takes the wait
                # below too, whose end the delay follows.
                for qs in queues:
                    if qs.parked_until:
                        break
                else:
                    continue
            parked = [qs.parked_until for qs in queues if qs.parked_until and not qs.closed]
            if parked:
                # a queue waits on a dependency: poll it again after its backing-off delay
                # (QueueState.park), asleep on the wake word so that a doorbell of another queue
                # (or a new queue) is served at once, not after the delay
                delay = max(0.0, min(parked) - time.monotonic())
                if delay > 0:
                    wait_until(has_other_work, wake, delay, spin_s=0.0, slice_s=delay)
                continue
            a64[i_sleeps] = (a64[i_sleeps] + 1) & U64_MAX
            # spin only right after work (traffic is likely to continue: the passes above, or here
            # with a wake-up delay set); an idle wake-up sleeps at once
            spin = max(0.0, ENGINE_SPIN_S - (now - last_work))
            if wait_until(has_work, wake, IDLE_SLICE_S, spin_s=spin, slice_s=IDLE_SLICE_S) and a64[i_wdelay]:
                time.sleep(min(a64[i_wdelay], MAX_WAKE_DELAY_NS) / 1e9)   # a slow wake-up (fault injection)
            a64[i_wakeups] = (a64[i_wakeups] + 1) & U64_MAX

    def _stall(self, engine: int, i_stall: int, wake: int, queues) -> None:
        """``engine_stats.stall_until_ns`` is set: take no packet until that CLOCK_MONOTONIC deadline,
        asleep on the wake word (woken early when the word changes), housekeeping every
        ``HOUSEKEEPING_S``; then clear the word (cas: a new deadline written meanwhile is kept)."""
        a64 = self.a64
        addr = self.aseg.addr + i_stall * 8
        last_hk = 0.0
        while not self.stopping:
            until = a64[i_stall]
            now = time.monotonic_ns()
            if not until or (now >= until and cas(addr, until, 0)):
                return
            if time.monotonic() - last_hk > HOUSEKEEPING_S:
                last_hk = time.monotonic()
                self._housekeeping(engine, queues)
            left = min((until - now) / 1e9, HOUSEKEEPING_S)
            wait_until(lambda: self.stopping or a64[i_stall] != until, wake, left, spin_s=0.0, slice_s=left)

    # -- housekeeping -------------------------------------------------------------------------
    def _housekeeping(self, engine, queues) -> None:
        self.agent.hdr["heartbeat_ns"] = time.monotonic_ns()
        boot = self.pm.boot_hdr
        if int(boot["shutdown"][0]) or not owner_alive(self.supervisor_pid):
            self.stopping = True
            return
        changed = False
        for qs in queues:
            d = qs.desc
            if qs.closed:
                continue
            if int(d["destroy_req"][0]):
                qs.closed = True                  # acknowledged: never touched again (the slot may be reused)
                d["active"] = 0
                changed = True
            elif not owner_alive(qs.owner_pid):
                qs.closed = True
                d["active"] = 0
                self.agent.hdr["reclaimed_queues"] += 1
                cas(self.agent.qd_addr(qs.q) + _QD_OWNER, qs.own, 0)
                changed = True
        if changed:
            fetch_add(self.queue_table_gen_addr, 1)
        if engine == self.table.janitor():
            try:
                n = self.mem.reclaim_dead([1 + self.agent_index] + ([0] if self.agent_index == 0 else []))
                if n:
                    self.agent.hdr["reclaimed_allocs"] += n
                if self.agent_index == 0:
                    self._reclaim_global()
            except Exception:  # noqa: BLE001 - a corrupted table must not end the engine: log, try again later
                self.log.exception("engine %d: reclaim of dead owners", engine)

    def _reclaim_global(self) -> None:
        """Agent 0 frees the signals, code objects and trace rings of dead clients (a freed trace
        ring keeps its events until a new owner claims it)."""
        owners = self.pm.signals["owner"]
        live = _flatnonzero(owners != 0)
        pids = {L.owner_pid(int(o)) for o in owners[live]}
        dead = {p for p in pids if not owner_alive(p)}
        for i in live:
            o = int(owners[i])
            if L.owner_pid(o) in dead:
                cas(self.pm.signal_addr(int(i)) + _SIG_OWNER, o, 0)
        seg = self.pm.segs["trace"]
        rb = self.topo.trace_ring_bytes
        for i in range(self.topo.trace_rings):
            o = int(seg.view(L.trace_ring_header, i * rb, 1)["owner"][0])
            if o and not owner_alive(L.owner_pid(o)):
                cas(seg.addr + i * rb + _TRACE_OWNER, o, 0)
        co = self.pm.codeobj["owner"]
        for s in _flatnonzero(co != 0):
            o = int(co[s])
            if not owner_alive(L.owner_pid(o)):
                cas(self.pm.segs["codeobj"].addr + int(s) * L.codeobj_entry.itemsize + _CO_OWNER, o, 0)

    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        hdr = self.agent.hdr
        hdr["cp_pid"] = os.getpid()
        stats = self.agent.engine_stats
        for e in range(self.n_engines + 1):
            stats[e:e + 1]["died_ns"] = 0
            stats[e:e + 1]["state"] = L.ENGINE_RUNNING        # before READY: a host never sees OFF
        engines = []
        for e in range(self.n_engines + 1):
            t = threading.Thread(target=self.engine_main, args=(e, e == self.n_engines),
                                 name=f"engine{e}", daemon=True)
            t.start()
            engines.append(t)
        hdr["state"] = L.AGENT_READY
        if self.role is not None:
            self.role["started_ns"] = time.monotonic_ns()
            self.role["state"] = L.ROLE_READY
        for t in engines:
            while t.is_alive():
                t.join(0.5)
                if self.stopping:
                    break
        all_dead = len(self.table.dead) == len(engines)
        self.stopping = True
        for e in range(self.n_engines + 1):
            futex_wake(self.agent.engine_wake_addr(e))
        for t in engines:
            t.join(2.0)
        hdr["state"] = L.AGENT_EXITED
        if self.role is not None:
            self.role["state"] = L.ROLE_EXITED
        return ENGINE_CRASH_EXIT if all_dead else 0


USAGE = "usage: python -m deviceside.cp BOOT_NAME AGENT_INDEX"


def main(argv=None) -> int:
    """``python -m deviceside.cp BOOT_NAME AGENT_INDEX``: 0 after a clean stop, 2 on bad usage, 1
    when the command processor cannot start (one line on stderr says why)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or not argv[1].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    configure_stderr()
    try:
        cp = CommandProcessor(argv[0], int(argv[1]))
    except HdemuError as exc:
        role_logger(f"cp{argv[1]}").error("cannot start: %s", exc)
        return 1
    _signal.signal(_signal.SIGTERM, lambda *_: setattr(cp, "stopping", True))
    return cp.run()
