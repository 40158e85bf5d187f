"""hsa_queue_t: a ring of 64-byte packets in the agent segment plus its descriptor.

The write index has one writer, this process, serialised by the queue's lock (re-entrant). Packet
bodies are stored first and the 16-bit header last (the publish); the doorbell then carries the last
packet id written, and only ever moves forward (``ring_doorbell``: several threads, or several streams
sharing the queue, ring it in any order). The packet formats come from their declarations in
``shm_layout`` (``struct_of``).

Check before you reserve: a caller holding the queue's lock (the command layer does, for the whole
window) may read ``next_id`` (the id ``add_write_index`` returns next), ``wait_for_space`` for it,
pack the kernargs and the body there (``write_*_body``: the header stays INVALID, so the device never
looks at it), and reserve the id and ``publish`` the header only once nothing can fail any more. A
packet that fails to pack then leaves the queue exactly as it was. Every reservation takes the lock,
so no other writer can take that id meanwhile (streams share a queue: ``hostside.clr._qpool``).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.coherence import wmb
from shm_layout.sync import WAIT_SPIN_S, Notifier, cas, fetch_add, notify

from ._errors import HostWaitTimeout, HsaError
from ._signal import U64_MAX

__all__ = ["Queue", "QueueStatistics", "QUEUE_DESTROY_TIMEOUT_S", "HSA_QUEUE_TYPE_MULTIPLE", "HSA_QUEUE_TYPE_SINGLE"]

#: Longest wait for the CP to acknowledge a queue destroy before the slot is freed anyway.
QUEUE_DESTROY_TIMEOUT_S = 5.0

HSA_QUEUE_TYPE_MULTIPLE = 0
HSA_QUEUE_TYPE_SINGLE = 1

# packet bodies from byte 2 on (the header is stored separately, last)
_PKT_BODY = L.struct_of(A.kernel_dispatch_packet, "setup")
_BARRIER_BODY = L.struct_of(A.barrier_and_packet, "reserved0")
_SDMA_BODY = L.struct_of(L.sdma_packet, "reserved0")
_RECT_BODY = L.struct_of(L.sdma_rect_packet, "reserved0")
_VALUE_BODY = L.struct_of(A.amd_barrier_value_packet, "amd_format")
_VALUE_BODY_OFF = L.offset_of(A.amd_barrier_value_packet, "amd_format")
_BODY_OFF = L.offset_of(A.kernel_dispatch_packet, "setup")      # = 2: the body follows the u16 header
_PKT_BYTES = A.kernel_dispatch_packet.itemsize                   # = 64
#: the agent header's queue-table generation (bumped on every create / destroy)
_OFF_QTABLE_GEN = L.offset_of(L.agent_header, "queue_table_gen")


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class QueueStatistics:
    """``Queue.statistics()``: a queue's indices and counters at one moment."""
    agent: int
    slot: int
    size: int
    engine: int
    kind: str               # "aql" or "sdma"
    write_index: int
    read_index: int
    doorbell: int | None    # the last packet id made visible, None before the first ring
    doorbells_rung: int
    packets_done: int
    kernels_done: int
    barrier_waits: int
    status: str             # hsa_status_t name (HSA_STATUS_SUCCESS while healthy)
    active: bool


class Queue:
    """An hsa_queue_t of one agent: a ring of 64-byte packets plus its descriptor."""

    def __init__(self, rt, agent, size: int, kind: int = L.QKIND_AQL,
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
        self.lock = threading.RLock()     # reservations, doorbell, and a writer's whole window
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
                if j != q and L.owner_state(int(dj["owner"])) == L.Q_ACTIVE and int(dj["kind"]) == L.QKIND_AQL:
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
        ring16 = am.seg.view(np.uint16, self.ring_off, size * (_PKT_BYTES // 2))
        ring16[:] = 0
        ring16[::_PKT_BYTES // 2] = invalid             # every packet header INVALID
        d["active"] = 1
        wmb()
        cas(am.qd_addr(q), claiming, L.own_word(me, L.Q_ACTIVE))
        fetch_add(am.seg.addr + _OFF_QTABLE_GEN, 1)     # queue_table_gen
        self.wake_addr = am.engine_wake_addr(engine)
        #: ``notify(wake_addr)``, pre-bound (``shm_layout.sync.Notifier``): the doorbell's wake of the engine
        self.notify_engine = Notifier(self.wake_addr).fn
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
        self._destroy_claimed = False   # a destroy() runs or ran: the one that frees the slot
        self.next_id = 0            # the packet id add_write_index returns next (written under self.lock)
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
            w = self.next_id
            self.next_id = w + n
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
                if waited > self.rt.wait_timeout_s:
                    raise HostWaitTimeout(f"queue {self.slot} of agent {self.agent.index} stayed full for "
                                          f"{self.rt.wait_timeout_s} s (HDEMU_WAIT_TIMEOUT_S): {self.describe()}")
                time.sleep(sleep)
                sleep = min(sleep * 2, 2e-3)

    # -- packets ---------------------------------------------------------------------------------
    def slot_offset(self, index: int) -> int:
        return self.ring_off + (index & self.mask) * _PKT_BYTES

    def write_dispatch(self, index: int, header: int, setup: int, block, grid, kobj: int,
                       karg: int, signal: int, group_segment: int = 0, private_segment: int = 0,
                       reserved2: int = 0) -> None:
        """Write a kernel dispatch packet at ``index``, body first and header last (not rung).
        ``reserved2`` (u64 @48) is the device address of a counter-request block, 0 for none."""
        off = self.ring_off + (index & self.mask) * _PKT_BYTES
        _PKT_BODY.pack_into(self.buf, off + _BODY_OFF, setup, block[0], block[1], block[2], 0,
                            grid[0], grid[1], grid[2], private_segment, group_segment,
                            kobj, karg, reserved2, signal)
        self.a16[off >> 1] = header

    def write_dispatch_body(self, index: int, setup: int, block, grid, kobj: int, karg: int, signal: int,
                            group_segment: int = 0, private_segment: int = 0, reserved2: int = 0) -> None:
        """The body of a dispatch packet at ``index``, header untouched (still INVALID): raises
        ``struct.error`` for a field out of range (a negative or fractional dimension)."""
        _PKT_BODY.pack_into(self.buf, self.ring_off + (index & self.mask) * _PKT_BYTES + _BODY_OFF, setup,
                            block[0], block[1], block[2], 0, grid[0], grid[1], grid[2], private_segment,
                            group_segment, kobj, karg, reserved2, signal)

    def publish(self, index: int, header: int) -> None:
        """Store the 16-bit header of the packet at ``index`` (its body is written): the device may
        run it once the doorbell covers ``index``."""
        self.a16[(self.ring_off + (index & self.mask) * _PKT_BYTES) >> 1] = header

    def write_barrier(self, index: int, header: int, deps, signal: int) -> None:
        self.write_barrier_body(index, deps, signal)
        self.publish(index, header)

    def write_barrier_body(self, index: int, deps, signal: int) -> None:
        d = list(deps) + [0] * (5 - len(deps))
        if len(d) != 5:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"a barrier has at most 5 dependencies, not {len(deps)}")
        off = self.ring_off + (index & self.mask) * _PKT_BYTES
        _BARRIER_BODY.pack_into(self.buf, off + _BODY_OFF, 0, 0, d[0], d[1], d[2], d[3], d[4], 0, signal)

    def write_sdma(self, index: int, ptype: int, *, dep: int, src: int, dst: int, size: int,
                   signal: int, fill_value: int = 0, fill_width: int = 0) -> None:
        self.write_sdma_body(index, dep=dep, src=src, dst=dst, size=size, signal=signal, fill_value=fill_value,
                             fill_width=fill_width)
        self.publish(index, ptype)

    def write_sdma_body(self, index: int, *, dep: int, src: int, dst: int, size: int, signal: int,
                        fill_value: int = 0, fill_width: int = 0) -> None:
        off = self.ring_off + (index & self.mask) * _PKT_BYTES
        _SDMA_BODY.pack_into(self.buf, off + _BODY_OFF, 0, fill_width, dep, src, dst, size, fill_value, 0, signal)

    def write_sdma_rect_body(self, index: int, *, dep: int, src: int, dst: int, width: int, rows: int,
                             src_pitch: int, dst_pitch: int, signal: int, fill_value: int = 0,
                             fill_width: int = 0) -> None:
        """The body of a rectangular SDMA packet (``sdma_rect_packet``); a field out of its range raises
        (struct.error) before anything is published."""
        off = self.ring_off + (index & self.mask) * _PKT_BYTES
        _RECT_BODY.pack_into(self.buf, off + _BODY_OFF, 0, fill_width, dep, src, dst, width, rows, src_pitch,
                             dst_pitch, fill_value, 0, signal)

    def write_value_body(self, index: int, fmt: int, width: int, addr: int, value: int, mask: int, cond: int,
                         signal: int) -> None:
        """The body of a vendor value packet (``amd_barrier_value_packet``: a barrier-value wait or an
        hdemu write-value); a field out of its range raises (struct.error) before anything is published."""
        off = self.ring_off + (index & self.mask) * _PKT_BYTES
        _VALUE_BODY.pack_into(self.buf, off + _VALUE_BODY_OFF, fmt, 0, width, addr, value, mask, cond, 0, 0, 0,
                              signal)

    def kernarg_slot(self, index: int) -> tuple[int, int]:
        """(offset in the agent segment, device address) of packet ``index``'s kernarg slot."""
        s = (index & self.mask) * L.KERNARG_SLOT_BYTES
        return self.kernarg_off + s, self.kernarg_base + s

    def ring_doorbell(self, index: int) -> None:
        """hsa_signal_store_screlease(doorbell, index): ``index`` is the last packet id written. A
        doorbell already past ``index`` (another writer rang a later packet) is left where it is."""
        a64, i = self.a64, self.i_doorbell
        with self.lock:
            db = a64[i]
            if db == U64_MAX or index > db:
                a64[i] = index
            a64[self.i_rung] += 1
        self.notify_engine()
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
        self.check_status()
        self.agent.check_alive()

    def check_status(self) -> None:
        """Raise if this queue is in error (its status word only: not the device's liveness, which
        costs a look at the command processor's process)."""
        st = self.desc["status"][0]
        if st:
            raise HsaError(int(st), f"queue {self.slot} of agent {self.agent.index} failed at packet "
                                    f"{int(self.desc['error_packet_id'][0])}: {self.error_message}")

    def statistics(self) -> "QueueStatistics":
        """A snapshot of the queue's descriptor (indices, doorbell, device counters, status)."""
        d = self.desc[0]
        db = int(d["doorbell"])
        return QueueStatistics(
            agent=self.agent.index, slot=self.slot, size=self.size, engine=self.engine,
            kind="sdma" if self.kind == L.QKIND_SDMA else "aql", write_index=int(d["write_dispatch_id"]),
            read_index=int(d["read_dispatch_id"]), doorbell=None if db == U64_MAX else db,
            doorbells_rung=int(d["doorbells_rung"]), packets_done=int(d["packets_done"]),
            kernels_done=int(d["kernels_done"]), barrier_waits=int(d["barrier_waits"]),
            status=L.STATUS_NAMES.get(int(d["status"]), str(int(d["status"]))), active=bool(d["active"]))

    def request_destroy(self) -> None:
        """Mark the queue destroyed and ask its engine to let go of it (``destroy_req``), without
        waiting (``destroy`` waits and frees the slot). Idempotent."""
        with self.lock:
            if self.destroyed:
                return
            self.destroyed = True
        self.desc["destroy_req"] = 1
        notify(self.wake_addr)

    def destroy(self, deadline: float | None = None) -> None:
        """Ask the command processor to let go of the queue, wait until it has (at most until
        ``deadline``, CLOCK_MONOTONIC, or ``QUEUE_DESTROY_TIMEOUT_S`` from now), and free its slot;
        only the first call does (a later one returns at once). Several queues are destroyed together
        by a ``request_destroy`` of each, then a ``destroy`` of each with one deadline
        (``Runtime.shutdown``): a stopped command processor then costs the timeout once, not once
        per queue."""
        with self.lock:
            if self._destroy_claimed:
                return
            self._destroy_claimed = True
        self.request_destroy()
        am = self.agent.map
        d = self.desc
        if deadline is None:
            deadline = time.monotonic() + QUEUE_DESTROY_TIMEOUT_S
        while int(d["active"][0]) and time.monotonic() < deadline and self.agent.alive():
            fetch_add(am.seg.addr + _OFF_QTABLE_GEN, 1)
            notify(self.wake_addr)
            time.sleep(0.001)
        cas(am.qd_addr(self.slot), L.own_word(os.getpid(), L.Q_ACTIVE), 0)
        fetch_add(am.seg.addr + _OFF_QTABLE_GEN, 1)
        try:
            self.rt.queues.remove(self)
        except ValueError:          # the runtime's shutdown took it out already
            pass

