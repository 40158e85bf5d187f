"""The command processor of one GPU agent: ``python -m deviceside.cp BOOT_NAME AGENT``.

Threads (one process per agent):
* ``n_engines`` AQL engines. A queue is bound to one engine when it is created (the host picks the
  least-loaded engine, like queues mapped onto hardware pipes); an engine serves its queues round
  robin, each queue strictly in order. A long kernel on one engine never holds up another engine's
  queues. ``sys.setswitchinterval`` is lowered so engines share the GIL finely.
* one SDMA engine (engine index ``n_engines``) serving copy queues (``deviceside.sdma``).

Per packet, in order: stop at an INVALID header (or past the doorbell), acquire (``rmb``), run it
(kernel dispatch / BARRIER_AND / BARRIER_OR), stamp and decrement the completion signal exactly
once, store INVALID into the header, advance ``read_dispatch_id``. A bad packet sets the queue's HSA
status, deactivates the queue and wakes its waiters; the engine carries on with its other queues.

Idle engines spin ``WAIT_SPIN_S`` and then sleep on their wake word (the doorbell mailbox); every
``HOUSEKEEPING_S`` they reclaim queues whose owner died and check the supervisor.
"""
from __future__ import annotations

import os
import signal as _signal
import struct
import sys
import threading
import time
import traceback

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.coherence import rmb
from shm_layout.kernels import NUMPY_TYPES, Signature, kernel as _kernel_decorator
from shm_layout.sync import (WAIT_SPIN_S, cas, fetch_add, fetch_add32, futex_wake, pid_alive, wait_until)
from shm_layout.topology import PlatformMap
from shm_layout.trace import TraceRing

from .memory import DeviceMemory, MemoryFault
from .counters import CounterUnit          # kernel replay issue: the counter unit (reserved2)
from .devglobals import bind_globals       # kernel replay issue: module-scope device globals

#: How often an engine reclaims dead owners' queues and checks the supervisor.
HOUSEKEEPING_S = 0.5
#: Longest sleep of an idle engine between liveness checks.
IDLE_SLICE_S = 0.5
#: Sleep of an engine whose queue is parked on an unsatisfied barrier (doubles up to the max).
BARRIER_POLL_MIN_S = 100e-6
BARRIER_POLL_MAX_S = 5e-3
#: Limits of a dispatch: work-items per workgroup and in the whole grid.
MAX_WORKGROUP_ITEMS = 1024
MAX_GRID_ITEMS = 1 << 32

_PKT = struct.Struct("<HHHHHHIIIIIQQQQ")
_BARRIER = struct.Struct("<HHI5QQQ")
U64_MAX = (1 << 64) - 1


class PacketError(Exception):
    def __init__(self, status: int, msg: str):
        super().__init__(msg)
        self.status = status


class KernelContext:
    """What a kernel sees besides its arguments: the launch geometry, vectorised ids and counters."""

    __slots__ = ("grid", "block", "dims", "dispatch_id", "agent", "counters")

    def __init__(self, grid, block, dims, did, agent):
        self.grid, self.block, self.dims, self.dispatch_id, self.agent = grid, block, dims, did, agent
        self.counters = None

    def global_id(self, axis: int = 0) -> np.ndarray:
        return np.arange(self.grid[axis], dtype=np.int64)

    @property
    def n(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


class LoadedKernel:
    __slots__ = ("name", "fn", "sig", "views", "module")

    def __init__(self, name, fn, sig, module):
        self.name, self.fn, self.sig, self.module = name, fn, sig, module
        self.views = [(NUMPY_TYPES[ty] if ptr else None) for (_n, ty, ptr) in sig.args]


class QueueState:
    """Engine-private cache of one queue slot."""

    def __init__(self, cp, q: int):
        self.q = q
        d = cp.agent.qdesc[q]
        self.size = int(d["size"])
        self.mask = self.size - 1
        self.kind = int(d["kind"])
        self.gen = int(d["generation"])
        self.owner_pid = int(d["owner"]) & 0xFFFFFFFF
        base = (cp.topo.qdesc_off + q * L.QUEUE_DESC_BYTES) // 8
        self.i_read = base + L.QD_READ // 8
        self.i_doorbell = base + L.QD_DOORBELL // 8
        self.i_owner = base
        self.i_packets_done = base + 48
        self.i_kernels_done = base + 49
        self.ring_off = cp.agent.ring_offset(q)
        self.desc = cp.agent.qdesc[q:q + 1]
        self.parked_until = 0.0
        self.park_s = BARRIER_POLL_MIN_S
        self.last_did = 0


class CommandProcessor:
    def __init__(self, boot_name: str, agent: int):
        self.pm = PlatformMap.attach(boot_name)
        self.topo = self.pm.topo
        if not 0 <= agent < self.topo.n_agents:
            raise SystemExit(f"agent must be in [0, {self.topo.n_agents}), not {agent}")
        self.agent_index = agent
        self.agent = self.pm.agents[agent]
        self.aseg = self.agent.seg
        self.a64 = memoryview(self.aseg.buf).cast("Q")
        self.a16 = memoryview(self.aseg.buf).cast("H")
        self.s64 = memoryview(self.pm.segs["signals"].buf).cast("Q")
        self.s32 = memoryview(self.pm.segs["signals"].buf).cast("I")
        self.mem = DeviceMemory(self.pm)
        self.stopping = False
        self.kernels = {}          # kernel object -> LoadedKernel
        self._co_lock = threading.Lock()
        self.trace = TraceRing.claim(self.pm, L.ROLE_CP, f"cp{agent}")
        self.n_engines = self.topo.n_engines
        self.role = self._find_role()
        self.supervisor_pid = int(self.pm.boot_hdr["supervisor_pid"][0])
        self.hooks = []            # callables(agent, did, kernel, ctx, start, end)
        self.counters = CounterUnit(self, PacketError)
        self.dfx = None
        dg = self.topo.dfx
        if dg is not None and dg.prof["mode"] == "real":
            from .taskring import TaskRings
            self.dfx = TaskRings(self.pm, dg, agent, self.n_engines)

    def _find_role(self):
        for i in range(L.BOOT_MAX_ROLES):
            r = self.pm.roles[i]
            if int(r["kind"]) == L.ROLE_CP and int(r["agent"]) == self.agent_index:
                return self.pm.roles[i:i + 1]
        return None

    # -- signals ------------------------------------------------------------------------------
    def complete_signal(self, handle: int, start: int, end: int) -> None:
        if handle == 0:
            return
        slot = self.pm.signal_slot(handle)
        if slot < 0:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_SIGNAL,
                              f"completion signal {handle:#x} is not a signal handle")
        base = slot * 8
        self.s64[base + 2] = start
        self.s64[base + 3] = end
        fetch_add(self.pm.signals_addr + slot * 64, -1)   # locked: also the barrier before the check
        if self.s32[slot * 16 + 3]:                         # waiters
            addr = self.pm.signals_addr + slot * 64 + 8
            fetch_add32(addr, 1)
            futex_wake(addr)

    def wake_signal(self, handle: int) -> None:
        slot = self.pm.signal_slot(handle)
        if slot >= 0 and self.s32[slot * 16 + 3]:
            addr = self.pm.signals_addr + slot * 64 + 8
            fetch_add32(addr, 1)
            futex_wake(addr)

    def signal_value(self, handle: int) -> int:
        slot = self.pm.signal_slot(handle)
        if slot < 0:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_SIGNAL, f"dependency {handle:#x} is not a signal handle")
        v = self.s64[slot * 8]
        return v - (1 << 64) if v >> 63 else v

    # -- code objects -------------------------------------------------------------------------
    def kernel(self, kobj: int) -> LoadedKernel:
        k = self.kernels.get(kobj)
        if k is not None:
            return k
        with self._co_lock:
            return self._load_kernel(kobj)

    def _load_kernel(self, kobj: int) -> LoadedKernel:
        if kobj == 0:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "kernel_object is null")
        parts = L.split_kernel_object(kobj)
        if parts is None or parts[0] >= L.CODEOBJ_SLOTS:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x} is not a kernel object handle")
        slot, gen, index = parts
        e = self.pm.codeobj[slot]
        if (int(e["owner"]) >> 32) != L.CO_LOADED or int(e["gen"]) & 0xFFFF != gen:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x} names code-object slot {slot} generation {gen}, "
                              f"which is not loaded")
        if index >= int(e["n_kernels"]):
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x}: code object has {int(e['n_kernels'])} kernels, "
                              f"not index {index}")
        import json
        blob = self.pm.codeobj_blob(slot)
        ml, sl = int(e["meta_len"]), int(e["src_len"])
        try:
            meta = json.loads(bytes(blob[:ml]).decode())
            source = bytes(blob[ml:ml + sl]).decode()
            name = e["name"].decode(errors="replace")
            ns = {"__name__": f"hdemu_codeobj_{slot}_{gen}", "kernel": _kernel_decorator}
            exec(compile(source, f"<code object {name}>", "exec"), ns)
            bind_globals(self.mem, self.agent_index, ns, meta)
        except Exception as exc:  # noqa: BLE001 - any failure of user code is a bad code object
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"code object in slot {slot} does not load: {type(exc).__name__}: {exc}") from None
        out = None
        for i, m in enumerate(meta):
            fn = ns.get(m["name"])
            if not callable(fn):
                raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                                  f"code object {name} has no kernel function {m['name']!r}")
            lk = LoadedKernel(m["name"], fn, Signature(m["signature"]), ns)
            self.kernels[L.make_kernel_object(slot, gen, i)] = lk
            if i == index:
                out = lk
        return out

    # -- packets ------------------------------------------------------------------------------
    def run_dispatch(self, qs: QueueState, idx: int, off: int, engine: int) -> None:
        (_h, setup, wx, wy, wz, _r0, gx, gy, gz, priv, grp, kobj, karg, r2, sig) = \
            _PKT.unpack_from(self.aseg.buf, off)
        fetch = time.monotonic_ns()
        dims = setup & 3
        if not 1 <= dims <= 3:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              f"setup dimensions must be 1, 2 or 3, not {dims}")
        if 0 in (wx, wy, wz, gx, gy, gz):
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              f"workgroup {wx}x{wy}x{wz} and grid {gx}x{gy}x{gz} must have no zero dimension")
        if wx * wy * wz > MAX_WORKGROUP_ITEMS or gx * gy * gz > MAX_GRID_ITEMS:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              f"workgroup {wx}x{wy}x{wz} exceeds {MAX_WORKGROUP_ITEMS} work-items or grid "
                              f"{gx}x{gy}x{gz} exceeds {MAX_GRID_ITEMS}")
        k = self.kernel(kobj)
        did = L.dispatch_id(self.agent_index, qs.q, idx)
        if k.sig.size:
            try:
                seg, koff, _avail = self.mem.extent(karg, k.sig.size)
            except MemoryFault as f:
                raise PacketError(f.status, f"kernarg_address: {f}") from None
            raw = k.sig.unpack_from(seg.buf, koff)
            args = []
            for v, dt in zip(raw, k.views):
                if dt is None:
                    args.append(v)
                else:
                    try:
                        args.append(self.mem.array(v, dt))
                    except MemoryFault as f:
                        raise PacketError(f.status, f"kernel {k.name}: {f}") from None
        else:
            args = ()
        cst = self.counters.begin(r2, k, args) if r2 else None      # counters requested (reserved2)
        ctx = KernelContext((gx, gy, gz), (wx, wy, wz), dims, did, self.agent_index)
        tr = self.trace
        start = time.monotonic_ns()
        if tr:
            tr.record(L.EV_KERNEL_BEGIN, engine, did, kobj, start)
        try:
            k.fn(ctx, *args)
        except IndexError as exc:
            raise PacketError(L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                              f"kernel {k.name} accessed memory out of bounds: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a kernel that raises is a device exception
            raise PacketError(L.HSA_STATUS_ERROR_EXCEPTION,
                              f"kernel {k.name} raised {type(exc).__name__}: {exc}") from None
        end = time.monotonic_ns()
        if tr:
            tr.record(L.EV_KERNEL_END, engine, did, kobj, end)
        for h in self.hooks:
            h(self.agent_index, did, k, ctx, start, end)
        if cst is not None:
            self.counters.finish(cst, (gx, gy, gz), (wx, wy, wz), grp, priv, did)
        if self.dfx is not None:
            kb = bytes(seg.buf[koff:koff + min(k.sig.size, 64)]) if k.sig.size else b""
            self.dfx.emit(engine, did, kobj, start, end, fetch, qs.last_did, (gx, gy, gz), kb, 2)
        qs.last_did = did
        self.complete_signal(sig, start, end)

    def try_barrier(self, qs: QueueState, idx: int, off: int, ptype: int, engine: int) -> bool:
        """Run a barrier packet if its dependencies are met; False leaves it parked."""
        _h, _r0, _r1, d0, d1, d2, d3, d4, _r2, sig = _BARRIER.unpack_from(self.aseg.buf, off)
        deps = [d for d in (d0, d1, d2, d3, d4) if d]
        vals = [self.signal_value(d) for d in deps]
        if ptype == A.HSA_PACKET_TYPE_BARRIER_AND:
            ok = all(v == 0 for v in vals)
        else:
            ok = not deps or any(v == 0 for v in vals)
        if not ok:
            return False
        now = time.monotonic_ns()
        did = L.dispatch_id(self.agent_index, qs.q, idx)
        if self.trace:
            self.trace.record(L.EV_BARRIER_END, engine, did, ptype, now)
        if self.dfx is not None:
            self.dfx.emit(engine, did, 0, now, now, now, qs.last_did, (0, 0, 0), b"", ptype)
        qs.last_did = did
        self.complete_signal(sig, now, now)
        return True

    def fail_queue(self, qs: QueueState, idx: int, off: int, err: PacketError, engine: int) -> None:
        d = qs.desc
        d["status"] = err.status
        d["error_packet_id"] = idx
        d["error_msg"] = str(err).encode()[:127]
        d["active"] = 0
        fetch_add(self.agent.seg.addr + 32, 1)   # queue_table_gen: engines drop the inactive queue
        if self.trace:                             # (else the failed packet is re-run in a busy loop)
            self.trace.record(L.EV_QUEUE_ERROR, engine, L.dispatch_id(self.agent_index, qs.q, idx), err.status)
        # wake whoever waits on this packet's signal so that they see the error now
        try:
            sig = struct.unpack_from("<Q", self.aseg.buf, off + 56)[0]
            if sig:
                self.wake_signal(sig)
        except Exception:  # noqa: BLE001
            pass
        print(f"hdemu cp{self.agent_index}: queue {qs.q} error {L.STATUS_NAMES.get(err.status, err.status)}"
              f" at packet {idx}: {err}", file=sys.stderr, flush=True)

    def next_packet(self, qs: QueueState):
        """(packet id, offset, type) of the queue's next packet, or None: the ring is empty, the
        doorbell has not reached it, or its header is still INVALID (not published). Shared by the
        AQL and SDMA engines (both rings use type 1 for INVALID)."""
        idx = self.a64[qs.i_read]
        db = self.a64[qs.i_doorbell]
        if db == U64_MAX or idx > db:
            return None
        off = qs.ring_off + (idx & qs.mask) * 64
        ptype = self.a16[off >> 1] & 0xFF
        if ptype == A.HSA_PACKET_TYPE_INVALID:
            return None
        rmb()
        return idx, off, ptype

    def retire(self, qs: QueueState, idx: int, off: int) -> None:
        """The slot is consumed: header back to INVALID, then the read index moves past it."""
        self.a16[off >> 1] = A.HSA_PACKET_TYPE_INVALID
        self.a64[qs.i_read] = idx + 1

    def process_queue(self, qs: QueueState, engine: int, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        a64 = self.a64
        done = 0
        now = 0.0
        if qs.parked_until:
            now = time.monotonic()
            if now < qs.parked_until:
                return 0
        while done < budget:
            nxt = self.next_packet(qs)
            if nxt is None:
                break
            idx, off, ptype = nxt
            try:
                if ptype == A.HSA_PACKET_TYPE_KERNEL_DISPATCH:
                    self.run_dispatch(qs, idx, off, engine)
                    a64[qs.i_kernels_done] += 1
                elif ptype in (A.HSA_PACKET_TYPE_BARRIER_AND, A.HSA_PACKET_TYPE_BARRIER_OR):
                    if not self.try_barrier(qs, idx, off, ptype, engine):
                        now = now or time.monotonic()
                        qs.parked_until = now + qs.park_s
                        qs.park_s = min(qs.park_s * 2, BARRIER_POLL_MAX_S)
                        qs.desc["barrier_waits"] += 1
                        return done
                    qs.parked_until = 0.0
                    qs.park_s = BARRIER_POLL_MIN_S
                else:
                    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                      f"packet type {ptype} is not supported on an AQL queue")
            except PacketError as err:
                self.fail_queue(qs, idx, off, err, engine)
                return done
            self.retire(qs, idx, off)
            done += 1
        if done:
            a64[qs.i_packets_done] += done
        return done

    # -- engines ------------------------------------------------------------------------------
    def engine_main(self, engine: int, sdma: bool) -> None:
        try:
            self._engine_loop(engine, sdma)
        except Exception:  # noqa: BLE001 - a crashed engine must be loud, then stop the CP
            traceback.print_exc()
            self.stopping = True
            os._exit(70)

    def _engine_loop(self, engine: int, sdma: bool) -> None:
        from .sdma import SdmaEngine
        sd = SdmaEngine(self) if sdma else None
        kind = L.QKIND_SDMA if sdma else L.QKIND_AQL
        wake = self.agent.engine_wake_addr(engine)
        stats = self.agent.engine_stats[engine:engine + 1]
        i_busy = (L.AGENT_ENGINE_STATS_OFF + engine * 64) // 8      # engine_stats: busy_ns, packets
        a64 = self.a64
        last_work = 0.0
        gen_seen = -1
        queues: list[QueueState] = []
        last_hk = 0.0
        process = sd.process_queue if sd else self.process_queue

        boot = self.pm.boot_hdr

        def has_work():
            if self.stopping or gen_seen != self.agent.hdr["queue_table_gen"][0]:
                return True
            if boot["shutdown"][0]:
                self.stopping = True
                return True
            for qs in queues:
                if qs.parked_until:
                    return True
                idx = self.a64[qs.i_read]
                db = self.a64[qs.i_doorbell]
                if db != U64_MAX and idx <= db and \
                        self.a16[(qs.ring_off + (idx & qs.mask) * 64) >> 1] & 0xFF != A.HSA_PACKET_TYPE_INVALID:
                    return True
            return False

        while not self.stopping:
            g = int(self.agent.hdr["queue_table_gen"][0])
            if g != gen_seen:
                gen_seen = g
                queues = self._my_queues(engine, kind, queues)
            t0 = time.monotonic_ns()
            done = 0
            for qs in queues:
                done += process(qs, engine)
            if done:
                a64[i_busy] += time.monotonic_ns() - t0
                a64[i_busy + 1] += done
                last_work = time.monotonic()
                continue
            now = time.monotonic()
            if now - last_hk > HOUSEKEEPING_S:
                last_hk = now
                self._housekeeping(engine, kind, queues)
            parked = [qs.parked_until for qs in queues if qs.parked_until]
            if parked:
                # a queue waits on a barrier: poll its dependencies with a backing-off sleep
                time.sleep(max(0.0, min(parked) - time.monotonic()))
                continue
            stats["sleeps"] += 1
            # spin only right after work (traffic is likely to continue); an idle wake-up sleeps at once
            spin = WAIT_SPIN_S if now - last_work < WAIT_SPIN_S else 0.0
            wait_until(has_work, wake, IDLE_SLICE_S, spin_s=spin, slice_s=IDLE_SLICE_S)
            stats["wakeups"] += 1

    def _my_queues(self, engine, kind, old):
        keep = {qs.q: qs for qs in old}
        out = []
        for q in range(self.topo.max_queues):
            d = self.agent.qdesc[q]
            own = int(d["owner"])
            if own >> 32 != L.Q_ACTIVE or int(d["engine"]) != engine or int(d["kind"]) != kind:
                continue
            if int(d["destroy_req"]):
                d["active"] = 0      # acknowledge: this engine no longer touches the queue
                continue
            if not int(d["active"]):
                continue
            qs = keep.get(q)
            if qs is None or qs.gen != int(d["generation"]):
                qs = QueueState(self, q)
            out.append(qs)
        return out

    def _housekeeping(self, engine, kind, queues) -> None:
        self.agent.hdr["heartbeat_ns"] = time.monotonic_ns()
        boot = self.pm.boot_hdr
        if int(boot["shutdown"][0]) or not pid_alive(self.supervisor_pid):
            self.stopping = True
            return
        changed = False
        for qs in queues:
            d = qs.desc
            if int(d["destroy_req"][0]):
                d["active"] = 0
                changed = True
            elif not pid_alive(qs.owner_pid):
                d["active"] = 0
                self.agent.hdr["reclaimed_queues"] += 1
                cas(self.agent.qd_addr(qs.q), int(d["owner"][0]), 0)
                changed = True
        if changed:
            fetch_add(self.agent.seg.addr + 32, 1)   # queue_table_gen
        if engine == 0 and kind == L.QKIND_AQL:
            n = self.mem.reclaim_dead([1 + self.agent_index] + ([0] if self.agent_index == 0 else []))
            if n:
                self.agent.hdr["reclaimed_allocs"] += n
            if self.agent_index == 0:
                self._reclaim_global()

    def _reclaim_global(self) -> None:
        """Agent 0 frees the signals, code objects and trace rings of dead clients (a freed trace
        ring keeps its events until a new owner claims it)."""
        owners = self.pm.signals["owner"]
        live = np.flatnonzero(owners != 0)
        pids = {int(o) & 0xFFFFFFFF for o in owners[live]}
        dead = {p for p in pids if not pid_alive(p)}
        for i in live:
            o = int(owners[i])
            if (o & 0xFFFFFFFF) in dead:
                cas(self.pm.signal_addr(int(i)) + 32, o, 0)
        seg = self.pm.segs["trace"]
        for i in range(self.topo.trace_rings):
            o = int(seg.view(np.uint64, i * self.topo.trace_ring_bytes, 1)[0])
            if o and not pid_alive(o & 0xFFFFFFFF):
                cas(seg.addr + i * self.topo.trace_ring_bytes, o, 0)
        co = self.pm.codeobj["owner"]
        for s in np.flatnonzero(co != 0):
            o = int(co[s])
            if not pid_alive(o & 0xFFFFFFFF):
                cas(self.pm.segs["codeobj"].addr + int(s) * L.codeobj_entry.itemsize, o, 0)

    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        hdr = self.agent.hdr
        hdr["cp_pid"] = os.getpid()
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
        self.stopping = True
        for e in range(self.n_engines + 1):
            futex_wake(self.agent.engine_wake_addr(e))
        for t in engines:
            t.join(2.0)
        hdr["state"] = L.AGENT_EXITED
        if self.role is not None:
            self.role["state"] = L.ROLE_EXITED
        return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m deviceside.cp BOOT_NAME AGENT_INDEX", file=sys.stderr)
        return 2
    cp = CommandProcessor(argv[0], int(argv[1]))
    _signal.signal(_signal.SIGTERM, lambda *_: setattr(cp, "stopping", True))
    return cp.run()


if __name__ == "__main__":
    sys.exit(main())
