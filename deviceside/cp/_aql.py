"""The AQL engine: kernel dispatches and barriers of the agent's AQL queues.

Per packet, in order (``process_queue``): stop at an INVALID header or past the doorbell, acquire
(``rmb``), run it, stamp and decrement the completion signal exactly once, store INVALID into the
header, advance ``read_dispatch_id``. Each queue runs strictly in order, one packet at a time, so
every packet behaves as if its barrier bit were set; the fence-scope bits are carried, not
interpreted. A packet that fails raises ``PacketError``: the queue is failed with its HSA status
(``CommandProcessor.fail_queue``) and the engine goes on with its other queues. Whatever else a
packet raises (``SystemExit`` and ``KeyboardInterrupt`` from a kernel included) fails its queue too;
the engine never dies of a packet.

A dispatch (``run_dispatch``) checks its geometry, gets the kernel (``KernelLoader``: loaded once per
code object, re-validated against the code-object table on every dispatch), checks the completion
signal (a signal of the queue's owner), takes the kernargs from the queue's own kernarg slot (or a
kernarg allocation of the owner), maps each pointer argument to a numpy view of an allocation of the
queue's owner, runs ``fn(ctx, *args)`` once for the whole grid and, if ``reserved2`` names a counter
block, lets the counter unit measure it. With profiling in mode real, every packet that ran is handed
to the engine's task ring.
"""
from __future__ import annotations

import operator
import time

import numpy as np

from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.coherence import rmb

from ._loader import KernelLoader, LoadedKernel
from ._memory import MemoryFault
from ._ring import (_HEADER_TYPE_MASK, _INVALID, DISPATCH_INDEX_MASK, PACKET_BYTES, U64_MAX, PacketError, QueueState,
                    RingEngine, describe_exception)

__all__ = ["AqlEngine", "KernelContext", "KernelLoader", "LoadedKernel", "MAX_WORKGROUP_ITEMS", "MAX_GRID_ITEMS"]

#: Limits of a dispatch: work-items per workgroup and in the whole grid.
MAX_WORKGROUP_ITEMS = 1024
MAX_GRID_ITEMS = 1 << 32

_PKT = L.struct_of(A.kernel_dispatch_packet)
_BARRIER = L.struct_of(A.barrier_and_packet)
assert A.barrier_and_packet == A.barrier_or_packet
#: Where a failed packet's completion signal is, whatever its type (the same offset in every AQL packet).
_SIGNAL_OFF = L.offset_of(A.kernel_dispatch_packet, "completion_signal")
_SIGNAL = L.struct_of(A.kernel_dispatch_packet, "completion_signal", "completion_signal")
assert _SIGNAL_OFF == L.offset_of(A.barrier_and_packet, "completion_signal")
#: The kernarg bytes a task event carries (its ``karg`` field).
_TASK_KARG_BYTES = D.task_event.fields["karg"][0].itemsize

_SIG_BASE, _SIG_BYTES = L.SIGNAL_HANDLE_BASE, L.SIGNAL_SLOT_BYTES
_SIG_WORDS, _SIG_WORDS32 = L.signal_slot.itemsize // 8, L.signal_slot.itemsize // 4
_SIG_OWNER64, _SIG_START64, _SIG_END64 = (L.word_of(L.signal_slot, f) for f in ("owner", "start_ts", "end_ts"))
_SIG_WAITERS32 = L.word_of(L.signal_slot, "waiters", 4)
_EV_BEGIN, _EV_END = L.EV_KERNEL_BEGIN, L.EV_KERNEL_END
_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH
_BARRIER_AND = A.HSA_PACKET_TYPE_BARRIER_AND
_BARRIER_OR = A.HSA_PACKET_TYPE_BARRIER_OR
_VENDOR = A.HSA_PACKET_TYPE_VENDOR_SPECIFIC
#: the vendor packets' body after the u16 header (both formats share the barrier-value layout)
_VALUE = L.struct_of(A.amd_barrier_value_packet, "amd_format")
_VALUE_BODY_OFF = L.offset_of(A.amd_barrier_value_packet, "amd_format")
_VALUE_DT = {4: np.dtype("<u4"), 8: np.dtype("<u8")}
_VALUE_FORMATS = {A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE: "barrier-value", A.HDEMU_PACKET_TYPE_WRITE_VALUE: "write-value"}
#: hsa_signal_condition_t -> the comparison of (value & mask) with the packet's value
_COND = {A.HSA_SIGNAL_CONDITION_EQ: operator.eq, A.HSA_SIGNAL_CONDITION_NE: operator.ne,
         A.HSA_SIGNAL_CONDITION_LT: operator.lt, A.HSA_SIGNAL_CONDITION_GTE: operator.ge}
# bound once: a kernel module that replaces these does not change the engine
_now, _arange, _int64 = time.monotonic_ns, np.arange, np.int64
_tnew, _itemgetter = tuple.__new__, operator.itemgetter


def _bad_geometry(dims, block, grid):
    """Raise the PacketError (INVALID_PACKET_FORMAT) that names what is wrong with a dispatch's shape."""
    (wx, wy, wz), (gx, gy, gz) = block, grid
    if not 1 <= dims <= 3:
        raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, f"setup dimensions must be 1, 2 or 3, not {dims}")
    if 0 in block or 0 in grid:
        raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                          f"workgroup {wx}x{wy}x{wz} and grid {gx}x{gy}x{gz} must have no zero dimension")
    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                      f"workgroup {wx}x{wy}x{wz} exceeds {MAX_WORKGROUP_ITEMS} work-items or grid "
                      f"{gx}x{gy}x{gz} exceeds {MAX_GRID_ITEMS}")


class KernelContext(tuple):
    """What a kernel sees besides its arguments: the launch geometry (``grid`` in work-items and
    ``block``, each (x, y, z); ``dims``), its ``dispatch_id``, its ``agent``, vectorised ids
    (``global_id``) and counters (``n``; ``counters`` is None). Read-only; a tuple underneath, so that
    the engine builds one per dispatch with a single C call (``_tnew``)."""

    __slots__ = ()
    grid = property(_itemgetter(0))
    block = property(_itemgetter(1))
    dims = property(_itemgetter(2))
    dispatch_id = property(_itemgetter(3))
    agent = property(_itemgetter(4))
    counters = property(_itemgetter(5))

    def __new__(cls, grid, block, dims, did, agent, counters=None):
        return _tnew(cls, (grid, block, dims, did, agent, counters))

    def __repr__(self) -> str:
        return (f"KernelContext(grid={self[0]}, block={self[1]}, dims={self[2]}, dispatch_id={self[3]:#x}, "
                f"agent={self[4]})")

    def global_id(self, axis: int = 0) -> np.ndarray:
        return _arange(self[0][axis], dtype=_int64)

    @property
    def n(self) -> int:
        g = self[0]
        return g[0] * g[1] * g[2]


class AqlEngine(RingEngine):
    """One AQL engine thread's packet processor (``engine`` is its index in the agent)."""

    def __init__(self, cp, engine: int):
        super().__init__(cp, engine)
        self.agent_index = cp.agent_index
        self.mem = cp.mem
        self.loader = cp.loader
        self.kernels = cp.loader.kernels            # the loader's cache, looked up without its lock
        self.co64, self.co32 = cp.loader.co64, cp.loader.co32
        self.counters = cp.counters
        self.trace = cp.trace
        self.dfx = cp.dfx
        #: the engine's task-ring publisher (profiling, mode real), or None
        self.emit = cp.dfx.emitters[engine] if cp.dfx is not None else None
        self.check_signal = cp.check_signal
        self.complete_signal = cp.complete_signal
        self.signal_value = cp.signal_value
        self.s64, self.s32, self.n_signals, self.signals_addr = cp.s64, cp.s32, cp.n_signals, cp.signals_addr
        self.decrement = cp.decrement
        self.dec_ops = cp.decrement.ops             # slot -> its decrement, once built (Decrementer.op)

    def run_dispatch(self, qs: QueueState, idx: int, off: int) -> None:
        (_h, setup, wx, wy, wz, _r0, gx, gy, gz, priv, grp, kobj, karg, r2, sig) = \
            _PKT.unpack_from(self.buf, off)
        emit = self.emit
        fetch = _now() if emit is not None else 0
        dims = setup & 3
        # one test for the common case (the fields are unsigned: a product is 0 iff a dimension is)
        if not (dims and 0 < wx * wy * wz <= MAX_WORKGROUP_ITEMS and 0 < gx * gy * gz <= MAX_GRID_ITEMS):
            _bad_geometry(dims, (wx, wy, wz), (gx, gy, gz))
        k = self.kernels.get(kobj)
        # the cached kernel is used only while its code object is still loaded, by the queue's owner,
        # in the same generation: otherwise the loader says why not (or reloads a replaced cache entry)
        if k is None or k.owner != qs.co_own or self.co64[k.i_owner] != k.owner or self.co32[k.i_gen] != k.gen:
            k = self.loader.kernel(kobj, qs.owner_pid)
        slot = -1
        if sig:                                     # check_signal, inline: a signal of the queue's owner
            soff = sig - _SIG_BASE
            slot = soff // _SIG_BYTES
            if soff < 0 or soff % _SIG_BYTES or slot >= self.n_signals or \
                    self.s64[slot * _SIG_WORDS + _SIG_OWNER64] != qs.sig_own:
                slot = self.check_signal(sig, qs)   # raises, naming why
        did = qs.did_base | (idx & DISPATCH_INDEX_MASK)
        size = k.sig.size
        if size:
            if qs.karg_lo <= karg and karg + size <= qs.karg_hi:      # the queue's own kernarg slots
                kbuf, koff = self.buf, qs.karg_off + (karg - qs.karg_lo)
            else:
                try:
                    kbuf, koff = self.mem.kernarg(karg, size, qs.owner_pid)
                except MemoryFault as f:
                    raise PacketError(f.status, f"kernarg_address: {f}") from None
            raw = k.sig.unpack_from(kbuf, koff)
            args = []
            mem = self.mem
            mem.refresh()
            pid = qs.owner_pid
            for v, dt in zip(raw, k.views):
                if dt is None:
                    args.append(v)
                else:
                    try:
                        args.append(mem.array(v, dt, pid))
                    except MemoryFault as f:
                        raise PacketError(f.status, f"kernel {k.name}: {f}") from None
        else:
            args = ()
        cst = self.counters.begin(r2, k, args, qs.owner_pid) if r2 else None    # counters requested
        grid, block = (gx, gy, gz), (wx, wy, wz)
        ctx = _tnew(KernelContext, (grid, block, dims, did, self.agent_index, None))
        tr = self.trace
        engine = self.engine
        start = _now()
        try:
            k.fn(ctx, *args)
        except BaseException as exc:  # noqa: BLE001 - a kernel that raises (SystemExit too) is a device exception
            if tr:
                tr.record(_EV_BEGIN, engine, did, kobj, start)      # the kernel began (and has no end)
            if isinstance(exc, IndexError):
                raise PacketError(L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, f"kernel {k.name} accessed memory "
                                  f"out of bounds: {describe_exception(exc, False)}") from None
            raise PacketError(L.HSA_STATUS_ERROR_EXCEPTION,
                              f"kernel {k.name} raised {describe_exception(exc)}") from None
        end = _now()
        if tr:      # BEGIN and END in one call, before the completion signal (the trace is whole at a sync)
            tr.record_span(_EV_BEGIN, _EV_END, engine, did, kobj, start, end)
        if cst is not None:
            self.counters.finish(cst, grid, block, grp, priv, did)
        if emit is not None:
            emit(did, kobj, start, end, fetch, qs.last_did, gx, gy, gz,
                 bytes(kbuf[koff:koff + min(size, _TASK_KARG_BYTES)]) if size else b"", _DISPATCH)
        qs.last_did = did
        if slot >= 0:                               # complete_signal, inline (the hot path)
            s64 = self.s64
            base = slot * _SIG_WORDS
            s64[base + _SIG_START64] = start
            s64[base + _SIG_END64] = end
            (self.dec_ops.get(slot) or self.decrement.op(slot))()   # locked: the barrier before the waiters check
            if self.s32[slot * _SIG_WORDS32 + _SIG_WAITERS32]:
                self.decrement.wake(slot)

    def try_barrier(self, qs: QueueState, idx: int, off: int, ptype: int) -> bool:
        """Run a barrier packet if its dependencies are met; False leaves it parked."""
        _h, _r0, _r1, d0, d1, d2, d3, d4, _r2, sig = _BARRIER.unpack_from(self.buf, off)
        slot = self.check_signal(sig, qs) if sig else -1
        deps = [d for d in (d0, d1, d2, d3, d4) if d]
        vals = [self.signal_value(d, qs) for d in deps]
        if ptype == _BARRIER_AND:
            ok = all(v == 0 for v in vals)
        else:
            ok = not deps or any(v == 0 for v in vals)
        if not ok:
            return False
        self._barrier_done(qs, idx, slot, ptype)
        return True

    def _barrier_done(self, qs: QueueState, idx: int, slot: int, ptype: int) -> None:
        """A barrier-like packet whose condition held: trace, task ring, completion signal."""
        now = _now()
        did = qs.did_base | (idx & DISPATCH_INDEX_MASK)
        if self.trace:
            self.trace.record(L.EV_BARRIER_END, self.engine, did, ptype, now)
        if self.emit is not None:
            self.emit(did, 0, now, now, now, qs.last_did, 0, 0, 0, b"", ptype)
        qs.last_did = did
        if slot >= 0:
            self.complete_signal(slot, now, now)

    def try_value_packet(self, qs: QueueState, idx: int, off: int) -> bool:
        """A vendor packet (``shm_layout.aql.amd_barrier_value_packet``): a barrier-value packet whose
        condition does not hold yet returns False (parked, like a barrier); a write-value packet stores
        its value. Either then completes like a barrier."""
        fmt, _r, width, addr, value, mask, cond, _r1, _r2, _r3, sig = _VALUE.unpack_from(self.buf, off + _VALUE_BODY_OFF)
        slot = self.check_signal(sig, qs) if sig else -1
        name = _VALUE_FORMATS.get(fmt)
        if name is None:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              f"vendor packet format {fmt} is not supported (barrier-value "
                              f"{A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE}, write-value {A.HDEMU_PACKET_TYPE_WRITE_VALUE})")
        test = _COND.get(cond)
        if fmt == A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE and test is None:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                              f"barrier-value condition must be 0..3 (hsa_signal_condition_t), not {cond}")
        if fmt == A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE and width == 0:
            cur = self.signal_value(addr, qs) & mask        # a signal handle, as hsa_ext_amd.h has it
        else:
            v = self._value_view(qs, addr, width)            # (checks the width first)
            if value >> (8 * width):
                raise PacketError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                                  f"{name} {value:#x} does not fit its width of {width} bytes")
            if fmt == A.HDEMU_PACKET_TYPE_WRITE_VALUE:
                v[0] = value
                self._barrier_done(qs, idx, slot, _VENDOR)
                return True
            cur = int(v[0]) & mask & ((1 << (8 * width)) - 1)
        if width != 4:          # int64, as the packet processor compares signal values (a u32 is never negative)
            cur, value = L.signed64(cur), L.signed64(value)
        if not test(cur, value):
            return False
        self._barrier_done(qs, idx, slot, _VENDOR)
        return True

    def _value_view(self, qs: QueueState, addr: int, width: int) -> np.ndarray:
        """The aligned u32 / u64 at ``addr`` in an allocation of the queue's owner, as a 1-element view."""
        dt = _VALUE_DT.get(width)
        if dt is None:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                              f"value packet width must be 4 or 8 bytes (a barrier-value's 0: a signal handle), "
                              f"not {width}")
        if addr % width:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT,
                              f"value packet address {addr:#x} is not aligned to its {width} bytes")
        mem = self.mem
        mem.refresh()
        try:
            return mem.bytes(addr, width, qs.owner_pid).view(dt)
        except MemoryFault as f:
            raise PacketError(f.status, f"value packet address: {f}") from None

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        a64 = self.a64
        if qs.closed:
            return 0
        if a64[qs.i_read] != qs.read or a64[qs.i_kindgen] != qs.kindgen:     # check_slot, inline
            self.check_slot(qs)
            return 0
        done = kernels = 0
        now = 0.0
        if qs.parked_until:
            now = time.monotonic()
            if now < qs.parked_until:
                return 0
        a16 = self.a16
        i_doorbell, ring_off, mask = qs.i_doorbell, qs.ring_off, qs.mask
        while done < budget:
            # next_packet, inline for a published packet (anything else goes through it)
            idx = qs.read
            db = a64[i_doorbell]
            if db == U64_MAX or idx > db:
                break
            off = ring_off + (idx & mask) * PACKET_BYTES
            ptype = a16[off >> 1] & _HEADER_TYPE_MASK
            if ptype == _INVALID:
                nxt = self.next_packet(qs)
                if nxt is None:
                    break
                idx, off, ptype = nxt
            else:
                rmb()
            try:
                if ptype == _DISPATCH:
                    self.run_dispatch(qs, idx, off)
                    kernels += 1
                elif ptype == _BARRIER_AND or ptype == _BARRIER_OR:
                    if not self.try_barrier(qs, idx, off, ptype):
                        qs.park(now)
                        break
                    if qs.parked_until:
                        qs.unpark()
                elif ptype == _VENDOR:
                    if not self.try_value_packet(qs, idx, off):
                        qs.park(now)
                        break
                    if qs.parked_until:
                        qs.unpark()
                else:
                    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                      f"packet type {ptype} is not supported on an AQL queue")
            except BaseException as exc:  # noqa: BLE001 - every packet error is a queue error, never a dead engine
                self.packet_error(qs, idx, exc, _SIGNAL.unpack_from(self.buf, off + _SIGNAL_OFF)[0])
                break
            # retire, inline: INVALID into the header, then the read index (unless the slot changed hands,
            # or the host moved the read index while the packet ran: check_slot fails the queue then)
            if a64[qs.i_kindgen] != qs.kindgen or a64[qs.i_read] != idx:
                self.check_slot(qs)
                return done + 1                     # not this queue's counters any more
            a16[off >> 1] = _INVALID
            qs.read = idx + 1
            a64[qs.i_read] = idx + 1
            done += 1
        if done:                                   # device counters wrap modulo 2**64 (RingEngine.bump)
            i = qs.i_packets_done
            a64[i] = (a64[i] + done) & U64_MAX
            if kernels:
                i = qs.i_kernels_done
                a64[i] = (a64[i] + kernels) & U64_MAX
        return done
