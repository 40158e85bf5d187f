"""The host HSA runtime: agents, queues, signals, memory pools, the allocation tracker, code objects
and the async-handler thread, all on top of the platform's shared memory.

Waits: every wait here spins ``WAIT_SPIN_S`` then sleeps on the object's wake word in slices of
``WAIT_SLICE_S``; after each slice it checks that the command processor of the agent involved is
alive and that the queue involved is not in error, and raises ``HsaError`` if not. So a dead device
turns every host wait into an error within ``DEVICE_LOSS_BOUND_S``, never a hang.

Multi-writer fields (documented in shm_layout.layouts): a queue's write index has one writer, this
process, serialised by the queue's ``threading.Lock``; signal values change by atomic add; slot
ownership (queues, signals, code objects) by cas.
"""
from __future__ import annotations

import atexit
import os
import struct
import threading
import time

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.alloc import AllocError, AllocTable
from shm_layout.coherence import wmb
from shm_layout.kernels import NUMPY_TYPES, Signature, encode_blob, read_globals, read_metadata
from shm_layout.sync import (WAIT_SLICE_S, WAIT_SPIN_S, cas, fetch_add, notify, pid_alive,
                             wait_until)
from shm_layout.topology import PlatformMap
from shm_layout.trace import TraceRing

#: A dead command processor is reported by any host wait within this bound (one wait slice plus
#: the liveness check).
DEVICE_LOSS_BOUND_S = WAIT_SLICE_S + 0.05
#: Longest wait for the CP to acknowledge a queue destroy before the slot is freed anyway.
QUEUE_DESTROY_TIMEOUT_S = 5.0
#: Longest a host wait on device work (stream/event sync, a full queue, a busy completion signal)
#: may take before it fails loudly with HostWaitTimeout, naming the queue and its indices. A live
#: device that simply runs long kernels needs a larger value: set HDEMU_WAIT_TIMEOUT_S.
HOST_WAIT_TIMEOUT_S = float(os.environ.get("HDEMU_WAIT_TIMEOUT_S", "600"))

U64_MAX = (1 << 64) - 1

# hsa_signal_condition_t
HSA_SIGNAL_CONDITION_EQ = 0
HSA_SIGNAL_CONDITION_NE = 1
HSA_SIGNAL_CONDITION_LT = 2
HSA_SIGNAL_CONDITION_GTE = 3
_CONDS = {
    HSA_SIGNAL_CONDITION_EQ: lambda v, x: v == x,
    HSA_SIGNAL_CONDITION_NE: lambda v, x: v != x,
    HSA_SIGNAL_CONDITION_LT: lambda v, x: v < x,
    HSA_SIGNAL_CONDITION_GTE: lambda v, x: v >= x,
}
HSA_QUEUE_TYPE_MULTIPLE = 0
HSA_QUEUE_TYPE_SINGLE = 1

_PKT_BODY = struct.Struct("<HHHHHIIIIIQQQQ")      # a dispatch packet from byte 2 on
_BARRIER_BODY = struct.Struct("<HI5QQQ")          # a barrier packet from byte 2 on
_SDMA_BODY = struct.Struct("<HIQQQQQQQ")          # an SDMA packet from byte 2 on


class HsaError(RuntimeError):
    """An HSA call failed; ``status`` is the hsa_status_t value, ``name`` its hsa.h name."""

    def __init__(self, status: int, msg: str):
        self.status = status
        self.name = L.STATUS_NAMES.get(status, f"HSA_STATUS_{status:#x}")
        super().__init__(f"{self.name}: {msg}")


class HostWaitTimeout(HsaError):
    def __init__(self, msg: str):
        super().__init__(L.HSA_STATUS_ERROR, msg)


class DeviceLost(HsaError):
    def __init__(self, agent: int, msg: str):
        self.agent = agent
        super().__init__(L.HSA_STATUS_ERROR_FATAL, msg)


def _signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


# ------------------------------------------------------------------------------------------------
class Signal:
    """An hsa_signal_t: a 64-byte slot in the platform's signal table."""

    __slots__ = ("rt", "slot", "handle", "addr", "_i", "destroyed")

    def __init__(self, rt: "Runtime", slot: int):
        self.rt = rt
        self.slot = slot
        self.handle = L.SIGNAL_HANDLE_BASE + slot * L.SIGNAL_SLOT_BYTES
        self.addr = rt.pm.signal_addr(slot)
        self._i = slot * 8
        self.destroyed = False

    def load(self) -> int:
        return _signed(self.rt.s64[self._i])

    def store(self, value: int) -> None:
        self.rt.s64[self._i] = value & U64_MAX
        notify(self.addr + 8)

    def store_relaxed_nowake(self, value: int) -> None:
        """Store without waking anyone: for a signal nobody can be waiting on yet."""
        self.rt.s64[self._i] = value & U64_MAX

    def add(self, delta: int) -> int:
        old = fetch_add(self.addr, delta)
        notify(self.addr + 8)
        return _signed(old)

    def subtract(self, delta: int) -> int:
        return self.add(-delta)

    @property
    def start_ts(self) -> int:
        return self.rt.s64[self._i + 2]

    @property
    def end_ts(self) -> int:
        return self.rt.s64[self._i + 3]

    def wait(self, cond: int, value: int, timeout_s: float | None = None, *, check=None) -> int:
        """hsa_signal_wait_scacquire: returns the observed value (which may miss the condition on
        timeout). ``check`` raises to abort (device lost, queue error)."""
        test = _CONDS.get(cond)
        if test is None:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"signal condition must be 0-3, not {cond}")
        s64, i = self.rt.s64, self._i

        def ok():
            v = s64[i]
            v = v - (1 << 64) if v >> 63 else v
            return (v,) if test(v, value) else None
        r = wait_until(ok, self.addr + 8, timeout_s, check=check or self.rt.check_devices)
        return r[0] if r else self.load()

    def destroy(self) -> None:
        if not self.destroyed:
            self.destroyed = True
            self.rt.signals.release(self)

    def __repr__(self):
        return f"<Signal {self.handle:#x} value={self.load()}>"


class SignalPool:
    """Claims signal slots by cas on their owner word; keeps released slots for reuse."""

    def __init__(self, rt: "Runtime"):
        self.rt = rt
        self.free: list[int] = []
        self.cursor = (os.getpid() * 97) % rt.pm.topo.n_signals
        self.lock = threading.Lock()
        self.owned = 0

    def create(self, initial: int = 0, kind: int = 0) -> Signal:
        with self.lock:
            slot = self.free.pop() if self.free else self._claim()
            self.owned += 1
        sig = Signal(self.rt, slot)
        self.rt.pm.signals[slot]["kind"] = kind
        sig.store_relaxed_nowake(initial)
        return sig

    def _claim(self) -> int:
        n = self.rt.pm.topo.n_signals
        me = L.own_word(os.getpid(), L.OWN_ALLOCATED)
        owners = self.rt.pm.signals["owner"]
        for _ in range(2):
            free = np.flatnonzero(owners == 0)
            if not len(free):
                break
            start = np.searchsorted(free, self.cursor)
            for j in list(range(start, len(free))) + list(range(0, start)):
                slot = int(free[j])
                if cas(self.rt.pm.signal_addr(slot) + 32, 0, me):
                    self.cursor = (slot + 1) % n
                    return slot
        raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"all {n} signals of the platform are in use")

    def release(self, sig: Signal) -> None:
        with self.lock:
            self.free.append(sig.slot)
            self.owned -= 1


# ------------------------------------------------------------------------------------------------
class Queue:
    """An hsa_queue_t of one agent: a ring of 64-byte packets plus its descriptor."""

    def __init__(self, rt: "Runtime", agent: "Agent", size: int, kind: int = L.QKIND_AQL,
                 callback=None, data=None, avoid_engines=()):
        topo = rt.pm.topo
        if size <= 0 or size & (size - 1):
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"queue size must be a power of two, not {size}")
        if size > topo.qmax:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                           f"queue size must be at most {topo.qmax} (queue_size_max), not {size}")
        self.rt, self.agent, self.size, self.kind = rt, agent, size, kind
        self.mask = size - 1
        self.callback, self.data = callback, data
        self.lock = threading.Lock()
        am = agent.map
        me = os.getpid()
        claiming = L.own_word(me, 2)
        for q in range(topo.max_queues):
            if cas(am.qd_addr(q), 0, claiming):
                break
        else:
            raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES,
                           f"agent {agent.index} has no free queue slot (max_queues={topo.max_queues})")
        self.slot = q
        d = am.qdesc[q:q + 1]
        self.desc = d
        if kind == L.QKIND_SDMA:
            engine = topo.n_engines
        else:
            load = [0] * topo.n_engines
            for j in range(topo.max_queues):
                dj = am.qdesc[j]
                if j != q and int(dj["owner"]) >> 32 == L.Q_ACTIVE and int(dj["kind"]) == L.QKIND_AQL:
                    e = int(dj["engine"])
                    if e < len(load):
                        load[e] += 1
            # least loaded; engines in avoid_engines only when every engine is (graph branches)
            engine = min(range(len(load)), key=lambda e: (e in avoid_engines, load[e], e))
        self.engine = engine
        d["size"] = size
        d["engine"] = engine
        d["kind"] = kind
        d["generation"] += 1
        d["status"] = 0
        d["error_packet_id"] = 0
        d["error_msg"] = b""
        d["write_dispatch_id"] = 0
        d["read_dispatch_id"] = 0
        d["doorbell"] = U64_MAX
        d["doorbells_rung"] = 0
        d["destroy_req"] = 0
        d["packets_done"] = 0
        d["kernels_done"] = 0
        d["busy_ns"] = 0
        d["barrier_waits"] = 0
        d["created_ns"] = time.monotonic_ns()
        self.ring_off = am.ring_offset(q)
        invalid = L.SDMA_TYPE_INVALID if kind == L.QKIND_SDMA else A.HSA_PACKET_TYPE_INVALID
        ring16 = am.seg.view(np.uint16, self.ring_off, size * 32)
        ring16[:] = 0
        ring16[::32] = invalid
        d["active"] = 1
        wmb()
        cas(am.qd_addr(q), claiming, L.own_word(me, L.Q_ACTIVE))
        fetch_add(am.seg.addr + 32, 1)     # queue_table_gen
        self.wake_addr = am.engine_wake_addr(engine)
        notify(self.wake_addr)
        base = (topo.qdesc_off + q * L.QUEUE_DESC_BYTES) // 8
        self.i_write = base + L.QD_WRITE // 8
        self.i_read = base + L.QD_READ // 8
        self.i_doorbell = base + L.QD_DOORBELL // 8
        self.i_rung = self.i_doorbell + 1
        self.a64 = agent.a64
        self.a16 = agent.a16
        self.buf = am.seg.buf
        self.kernarg_off = am.kernarg_offset(q)
        self.kernarg_base = am.kernarg_address(q, 0)
        self.gid = (agent.index << 12) | q
        self.destroyed = False
        self._write = 0
        self.error_reported = False
        rt.queues.append(self)

    # -- indices -------------------------------------------------------------------------------
    def load_write_index(self) -> int:
        return self.a64[self.i_write]

    def load_read_index(self) -> int:
        return self.a64[self.i_read]

    def add_write_index(self, n: int = 1) -> int:
        """Reserve ``n`` packet ids (hsa_queue_add_write_index_screlease); returns the first."""
        with self.lock:
            w = self._write
            self._write = w + n
            self.a64[self.i_write] = w + n
        return w

    def wait_for_space(self, index: int) -> None:
        """Block until packet id ``index`` has a free slot (the queue is not full)."""
        if index - self.a64[self.i_read] < self.size:
            return
        a64, i_read, size = self.a64, self.i_read, self.size
        t = time.monotonic()
        sleep = 20e-6
        while index - a64[i_read] >= size:
            self.check()
            waited = time.monotonic() - t
            if waited > WAIT_SPIN_S:
                if waited > HOST_WAIT_TIMEOUT_S:
                    raise HostWaitTimeout(f"queue {self.slot} of agent {self.agent.index} stayed full for "
                                          f"{HOST_WAIT_TIMEOUT_S} s (HDEMU_WAIT_TIMEOUT_S): {self.describe()}")
                time.sleep(sleep)
                sleep = min(sleep * 2, 2e-3)

    # -- packets ---------------------------------------------------------------------------------
    def slot_offset(self, index: int) -> int:
        return self.ring_off + (index & self.mask) * 64

    def write_packet(self, index: int, packet: bytes) -> None:
        """Store a whole 64-byte packet: body first, the 16-bit header last (the publish)."""
        if len(packet) != 64:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"a packet is 64 bytes, not {len(packet)}")
        off = self.slot_offset(index)
        self.buf[off + 2:off + 64] = packet[2:]
        wmb()
        self.a16[off >> 1] = packet[0] | (packet[1] << 8)

    def write_dispatch(self, index: int, header: int, setup: int, block, grid, kobj: int,
                       karg: int, signal: int, group_segment: int = 0, private_segment: int = 0) -> None:
        off = self.ring_off + (index & self.mask) * 64
        _PKT_BODY.pack_into(self.buf, off + 2, setup, block[0], block[1], block[2], 0,
                            grid[0], grid[1], grid[2], private_segment, group_segment,
                            kobj, karg, 0, signal)
        self.a16[off >> 1] = header

    def write_barrier(self, index: int, header: int, deps, signal: int) -> None:
        d = list(deps) + [0] * (5 - len(deps))
        if len(d) != 5:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"a barrier has at most 5 dependencies, not {len(deps)}")
        off = self.ring_off + (index & self.mask) * 64
        _BARRIER_BODY.pack_into(self.buf, off + 2, 0, 0, d[0], d[1], d[2], d[3], d[4], 0, signal)
        self.a16[off >> 1] = header

    def write_sdma(self, index: int, ptype: int, *, dep: int, src: int, dst: int, size: int,
                   signal: int, fill_value: int = 0, fill_width: int = 0) -> None:
        off = self.ring_off + (index & self.mask) * 64
        _SDMA_BODY.pack_into(self.buf, off + 2, 0, fill_width, dep, src, dst, size, fill_value, 0, signal)
        self.a16[off >> 1] = ptype

    def kernarg_slot(self, index: int) -> tuple[int, int]:
        """(offset in the agent segment, device address) of packet ``index``'s kernarg slot."""
        s = (index & self.mask) * L.KERNARG_SLOT_BYTES
        return self.kernarg_off + s, self.kernarg_base + s

    def ring_doorbell(self, index: int) -> None:
        """hsa_signal_store_screlease(doorbell, index): ``index`` is the last packet id written."""
        self.a64[self.i_doorbell] = index
        self.a64[self.i_rung] += 1
        notify(self.wake_addr)
        tr = self.rt.trace
        if tr is not None:
            tr.record(L.EV_DOORBELL, self.slot, self.gid, index)

    # -- state -----------------------------------------------------------------------------------
    def describe(self) -> str:
        db = self.a64[self.i_doorbell]
        return (f"write index {self.a64[self.i_write]}, read index {self.a64[self.i_read]}, doorbell "
                f"{'none' if db == U64_MAX else db}")

    @property
    def status(self) -> int:
        return int(self.desc["status"][0])

    @property
    def error_message(self) -> str:
        return self.desc["error_msg"][0].decode(errors="replace")

    def check(self) -> None:
        """Raise if this queue is in error or its device is gone."""
        st = self.desc["status"][0]
        if st:
            raise HsaError(int(st), f"queue {self.slot} of agent {self.agent.index} failed at packet "
                                    f"{int(self.desc['error_packet_id'][0])}: {self.error_message}")
        self.agent.check_alive()

    def statistics(self) -> dict:
        d = self.desc[0]
        return {"agent": self.agent.index, "slot": self.slot, "size": self.size, "engine": self.engine,
                "kind": "sdma" if self.kind == L.QKIND_SDMA else "aql",
                "write_index": int(d["write_dispatch_id"]), "read_index": int(d["read_dispatch_id"]),
                "doorbell": int(d["doorbell"]) if int(d["doorbell"]) != U64_MAX else None,
                "doorbells_rung": int(d["doorbells_rung"]), "packets_done": int(d["packets_done"]),
                "kernels_done": int(d["kernels_done"]), "barrier_waits": int(d["barrier_waits"]),
                "status": L.STATUS_NAMES.get(int(d["status"]), int(d["status"])), "active": bool(d["active"])}

    def destroy(self) -> None:
        if self.destroyed:
            return
        self.destroyed = True
        am = self.agent.map
        d = self.desc
        d["destroy_req"] = 1
        notify(self.wake_addr)
        deadline = time.monotonic() + QUEUE_DESTROY_TIMEOUT_S
        while int(d["active"][0]) and time.monotonic() < deadline and self.agent.alive():
            fetch_add(am.seg.addr + 32, 1)
            notify(self.wake_addr)
            time.sleep(0.001)
        cas(am.qd_addr(self.slot), L.own_word(os.getpid(), L.Q_ACTIVE), 0)
        fetch_add(am.seg.addr + 32, 1)
        if self in self.rt.queues:
            self.rt.queues.remove(self)


# ------------------------------------------------------------------------------------------------
class Agent:
    def __init__(self, rt: "Runtime", index: int):
        self.rt = rt
        self.index = index
        self.map = rt.pm.agents[index]
        self.a64 = memoryview(self.map.seg.buf).cast("Q")
        self.a16 = memoryview(self.map.seg.buf).cast("H")
        self.name = f"hdemu-gpu{index}"
        self._dead = None

    @property
    def cp_pid(self) -> int:
        return int(self.map.hdr["cp_pid"][0])

    def alive(self) -> bool:
        if self._dead:
            return False
        st = int(self.map.hdr["state"][0])
        if st != L.AGENT_READY or not pid_alive(self.cp_pid):
            self._dead = f"command processor of agent {self.index} (pid {self.cp_pid}) is gone"
            return False
        return True

    def check_alive(self) -> None:
        if not self.alive():
            raise DeviceLost(self.index, self._dead)

    def statistics(self) -> dict:
        h = self.map.hdr[0]
        out = {k: int(h[k]) for k in ("cp_pid", "state", "copies", "reclaimed_queues", "reclaimed_allocs")}
        out["packets"] = int(self.map.engine_stats["packets"].sum())
        return out


class CodeObject:
    """A loaded code object: its slot in the table and its kernels' metadata."""

    def __init__(self, rt, slot, gen, name, meta):
        self.rt, self.slot, self.gen, self.name, self.meta = rt, slot, gen, name, meta
        self.kernels = {m["name"]: (L.make_kernel_object(slot, gen, i), Signature(m["signature"]))
                        for i, m in enumerate(meta)}
        self.unloaded = False
        # device globals: name -> (type, count, [address per agent], bytes) (hipModuleGetGlobal)
        self.globals = {k: (t, c, a, c * np.dtype(NUMPY_TYPES[t]).itemsize)
                        for k, (t, c, a) in (meta[0].get("globals", {}) if meta else {}).items()}

    def unload(self):
        if not self.unloaded:
            self.unloaded = True
            cas(self.rt.pm.segs["codeobj"].addr + self.slot * L.codeobj_entry.itemsize,
                L.own_word(os.getpid(), L.CO_LOADED), 0)
            for _t, _c, addrs, _n in self.globals.values():
                for addr in addrs:
                    try:
                        self.rt.free(addr)
                    except HsaError:
                        pass


class Allocation:
    __slots__ = ("base", "size", "agent", "kind")

    def __init__(self, base, size, agent, kind):
        self.base, self.size, self.agent, self.kind = base, size, agent, kind


class Runtime:
    """hsa_init(): attach to a platform (``HDEMU_PLATFORM``) or start an embedded one."""

    def __init__(self, boot_name: str | None = None, *, config: dict | None = None):
        self.platform = None
        if boot_name is None:
            boot_name = os.environ.get("HDEMU_PLATFORM") or None
        if boot_name is None:
            from .platform import Platform
            self.platform = Platform(config).start()
            boot_name = self.platform.name
        self.pm = PlatformMap.attach(boot_name, wait_up_s=10.0)
        if self.pm.state != L.BOOT_UP:
            raise HsaError(L.HSA_STATUS_ERROR_NOT_INITIALIZED,
                           f"platform {boot_name} is {L.BOOT_STATE_NAMES.get(self.pm.state, '?')}, not up")
        self.boot_name = boot_name
        self.s64 = memoryview(self.pm.segs["signals"].buf).cast("Q")
        self.agents = [Agent(self, a) for a in range(self.pm.topo.n_agents)]
        self.signals = SignalPool(self)
        self.queues: list[Queue] = []
        self.trace = TraceRing.claim(self.pm, 0, f"host{os.getpid()}")
        self.host_table = AllocTable(self.pm.alloc_hdrs[0], self.pm.alloc_recs[0], L.HOST_POOL_BASE,
                                     self.pm.topo.host_pool_bytes, -1)
        self.device_tables = [AllocTable(self.pm.alloc_hdrs[1 + a], self.pm.alloc_recs[1 + a],
                                         L.device_base(a), self.pm.topo.memory_bytes, a)
                              for a in range(self.pm.topo.n_agents)]
        self.tracker: dict[int, Allocation] = {}    # base -> Allocation: the allocation tracker
        self.tracker_lock = threading.Lock()
        self.code_objects: list[CodeObject] = []
        self.async_handler = AsyncHandler(self)
        self.closed = False
        atexit.register(self.shutdown)

    # -- liveness ----------------------------------------------------------------------------------
    def check_devices(self) -> None:
        for ag in self.agents:
            ag.check_alive()

    # -- memory pools --------------------------------------------------------------------------
    def allocate(self, agent: int | None, nbytes: int, kind: int) -> int:
        """hsa_amd_memory_pool_allocate: ``agent`` None = fine-grained system memory."""
        table = self.host_table if agent is None else self.device_tables[agent]
        try:
            addr = table.allocate(nbytes, kind)
        except AllocError as exc:
            raise HsaError(exc.status, str(exc)) from None
        with self.tracker_lock:
            self.tracker[addr] = Allocation(addr, -(-nbytes // L.ALLOC_ALIGN) * L.ALLOC_ALIGN,
                                            -1 if agent is None else agent, kind)
        return addr

    def free(self, addr: int) -> None:
        with self.tracker_lock:
            a = self.tracker.pop(addr, None)
        if a is None:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ALLOCATION, f"{addr:#x} is not a live allocation of this process")
        table = self.host_table if a.agent < 0 else self.device_tables[a.agent]
        table.free(addr)

    def pointer_info(self, addr: int) -> Allocation | None:
        """hsa_amd_pointer_info: the allocation (with its owning agent) that contains ``addr``."""
        with self.tracker_lock:
            a = self.tracker.get(addr)
            if a is not None:
                return a
            for a in self.tracker.values():
                if a.base <= addr < a.base + a.size:
                    return a
        return None

    def allocations(self, agent: int | None = None, kinds=None) -> list[Allocation]:
        """The tracker's inventory, filtered by owning agent and kind (kernel replay's snapshot set)."""
        with self.tracker_lock:
            return [a for a in self.tracker.values()
                    if (agent is None or a.agent == agent) and (kinds is None or a.kind in kinds)]

    def host_view(self, addr: int, nbytes: int) -> np.ndarray:
        """u8 view of fine-grained system memory (hipHostMalloc'ed or staging) at ``addr``."""
        off = addr - L.HOST_POOL_BASE
        if off < 0 or off + nbytes > self.pm.topo.host_pool_bytes:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                           f"[{addr:#x}, +{nbytes}) is not fine-grained system memory")
        return self.pm.segs["hostpool"].u8[off:off + nbytes]

    # -- code objects --------------------------------------------------------------------------
    def load_code_object(self, source: str, name: str = "<code object>") -> CodeObject:
        try:
            meta = read_metadata(source, name)
            gdecl = read_globals(source, name)
        except ValueError as exc:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, str(exc)) from None
        if gdecl and meta:      # device globals: one zeroed copy per agent, listed in every kernel's entry
            table = {}
            for g, (ty, count) in gdecl.items():
                nbytes = count * np.dtype(NUMPY_TYPES[ty]).itemsize
                addrs = [self.allocate(a, nbytes, L.ALLOC_DEVICE) for a in range(len(self.agents))]
                for a, addr in enumerate(addrs):
                    off = addr - L.device_base(a)
                    self.pm.segs[f"mem{a}"].u8[off:off + nbytes] = 0
                table[g] = [ty, count, addrs]
            for m in meta:
                m["globals"] = table
        blob, meta_len = encode_blob(source, meta)
        if len(blob) > L.CODEOBJ_BLOB_BYTES:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                           f"code object {name} is {len(blob)} bytes; at most {L.CODEOBJ_BLOB_BYTES}")
        seg = self.pm.segs["codeobj"]
        me = os.getpid()
        for slot in range(L.CODEOBJ_SLOTS):
            if cas(seg.addr + slot * L.codeobj_entry.itemsize, 0, L.own_word(me, L.CO_LOADING)):
                break
        else:
            raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"all {L.CODEOBJ_SLOTS} code-object slots are in use")
        e = self.pm.codeobj[slot:slot + 1]
        gen = (int(e["gen"][0]) + 1) & 0xFFFF
        self.pm.codeobj_blob(slot)[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        e["gen"] = gen
        e["src_len"] = len(blob) - meta_len
        e["meta_len"] = meta_len
        e["n_kernels"] = len(meta)
        e["name"] = name.encode()[:63]
        wmb()
        cas(seg.addr + slot * L.codeobj_entry.itemsize, L.own_word(me, L.CO_LOADING), L.own_word(me, L.CO_LOADED))
        co = CodeObject(self, slot, gen, name, meta)
        self.code_objects.append(co)
        return co

    # -- queues --------------------------------------------------------------------------------
    def queue_create(self, agent: int, size: int, kind: int = L.QKIND_AQL, callback=None, data=None,
                     avoid_engines=()) -> Queue:
        if not 0 <= agent < len(self.agents):
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_AGENT, f"agent must be in [0, {len(self.agents)}), not {agent}")
        self.agents[agent].check_alive()
        q = Queue(self, self.agents[agent], size, kind, callback, data, avoid_engines)
        if callback is not None:
            self.async_handler.watch_queue(q)
        return q

    # -- teardown ------------------------------------------------------------------------------
    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.async_handler.stop()
        for q in list(self.queues):
            try:
                q.destroy()
            except Exception:  # noqa: BLE001
                pass
        if self.trace is not None:
            self.trace.release() if self.platform is None else None
        if self.platform is not None:
            trace_out = os.environ.get("HDEMU_TRACE_OUT")
            self.platform.stop(trace_out=trace_out)
        else:
            self._release_shared()
        self.pm.close()

    def _release_shared(self) -> None:
        """Give back what this process holds on a platform that outlives it."""
        for a in list(self.tracker.values()):
            try:
                self.free(a.base)
            except Exception:  # noqa: BLE001
                pass
        for co in self.code_objects:
            co.unload()
        me = os.getpid()
        owners = self.pm.signals["owner"]
        mine = np.flatnonzero((owners & 0xFFFFFFFF) == me)
        for s in mine:
            cas(self.pm.signal_addr(int(s)) + 32, int(owners[s]), 0)


# ------------------------------------------------------------------------------------------------
class AsyncHandler:
    """The async-handler thread: calls ``handler(value, arg)`` when a signal meets a condition
    (``hsa_amd_signal_async_handler``; the handler returns True to stay armed) and queue error
    callbacks. It polls its registrations with a backing-off sleep (100 us .. 2 ms) while it has any
    and blocks on a condition variable while it has none."""

    POLL_MIN_S = 100e-6
    POLL_MAX_S = 2e-3

    def __init__(self, rt: Runtime):
        self.rt = rt
        self.cv = threading.Condition()
        self.regs: list = []        # [signal, cond, value, handler, arg]
        self.queues: list[Queue] = []
        self.thread = None
        self.stopping = False
        self.in_flight = 0          # handlers currently running
        self.calls = 0
        self.kicked = False

    def kick(self) -> None:
        """Poll the registrations now instead of after the back-off sleep (a waiter that has seen
        its signal change and now waits for the handler: kernel replay's per-pass drain)."""
        with self.cv:
            self.kicked = True
            self.cv.notify()

    def _ensure(self):
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="hsa-async-handler", daemon=True)
            self.thread.start()

    def register(self, signal: Signal, cond: int, value: int, handler, arg=None) -> None:
        if cond not in _CONDS:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"signal condition must be 0-3, not {cond}")
        with self.cv:
            self.regs.append([signal, cond, value, handler, arg])
            self._ensure()
            self.cv.notify()

    def watch_queue(self, q: Queue) -> None:
        with self.cv:
            self.queues.append(q)
            self._ensure()
            self.cv.notify()

    def pending(self) -> int:
        with self.cv:
            return len(self.regs) + self.in_flight

    def _run(self):
        sleep = self.POLL_MIN_S
        while True:
            with self.cv:
                while not self.stopping and not self.regs and not self.queues:
                    self.cv.wait()
                if self.stopping:
                    return
                regs = list(self.regs)
                queues = list(self.queues)
            fired = False
            for reg in regs:
                sig, cond, value, handler, arg = reg
                v = sig.load()
                if _CONDS[cond](v, value):
                    with self.cv:
                        self.in_flight += 1
                    try:
                        keep = handler(v, arg)
                    finally:
                        with self.cv:
                            self.in_flight -= 1
                            self.calls += 1
                            if not keep and reg in self.regs:
                                self.regs.remove(reg)
                    fired = True
            for q in queues:
                if q.status and not q.error_reported:
                    q.error_reported = True
                    q.callback(q.status, q, q.data)
                    fired = True
                if q.destroyed:
                    with self.cv:
                        if q in self.queues:
                            self.queues.remove(q)
            if fired:
                sleep = self.POLL_MIN_S
                continue
            with self.cv:       # kick() (kernel replay's pass drain) ends the back-off sleep at once
                if not self.kicked and not self.stopping:
                    self.cv.wait(sleep)
                self.kicked = False
            sleep = min(sleep * 2, self.POLL_MAX_S)

    def stop(self):
        with self.cv:
            self.stopping = True
            self.cv.notify_all()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(2.0)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()
_default_config: dict | None = None


def configure(config: dict | None) -> None:
    """Config for the next embedded platform this process starts (keys of shm_layout.topology.DEFAULTS)."""
    global _default_config
    _default_config = config


def runtime(config: dict | None = None) -> Runtime:
    """The process's runtime (hsa_init on first use)."""
    global _runtime
    rt = _runtime
    if rt is not None and not rt.closed:
        return rt
    with _runtime_lock:
        if _runtime is None or _runtime.closed:
            cfg = config if config is not None else _default_config
            if cfg is None and os.environ.get("HDEMU_CONFIG"):
                from .platform import load_config
                cfg = load_config(os.environ["HDEMU_CONFIG"])
            _runtime = Runtime(config=cfg)
        return _runtime


def shutdown() -> None:
    """hsa_shut_down: tear down this process's runtime (and its embedded platform)."""
    global _runtime
    with _runtime_lock:
        if _runtime is not None:
            _runtime.shutdown()
            _runtime = None
