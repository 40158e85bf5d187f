"""The AQL engine: kernel dispatches and barriers of the agent's AQL queues, and the kernel loader.

Per packet, in order (``process_queue``): stop at an INVALID header or past the doorbell, acquire
(``rmb``), run it, stamp and decrement the completion signal exactly once, store INVALID into the
header, advance ``read_dispatch_id``. Each queue runs strictly in order, one packet at a time, so
every packet behaves as if its barrier bit were set; the fence-scope bits are carried, not
interpreted. A packet that fails raises ``PacketError``: the queue is failed with its HSA status
(``CommandProcessor.fail_queue``) and the engine goes on with its other queues.

A dispatch (``run_dispatch``) checks its geometry, loads the kernel (``KernelLoader``: the code
object is ``exec``-ed once per agent and its device globals bound), unpacks the kernargs, maps each
pointer argument to a numpy view of the allocation it points into, runs ``fn(ctx, *args)`` once for
the whole grid and, if ``reserved2`` names a counter block, lets the counter unit measure it. With
profiling in mode real, every packet that ran is handed to the engine's task ring.
"""
from __future__ import annotations

import json
import threading
import time

import numpy as np

from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.kernels import NUMPY_TYPES, Signature, kernel as _kernel_decorator

from ._devglobals import bind_globals
from ._memory import MemoryFault
from ._ring import PacketError, QueueState, RingEngine

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

_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH
_BARRIER_AND = A.HSA_PACKET_TYPE_BARRIER_AND
_BARRIER_OR = A.HSA_PACKET_TYPE_BARRIER_OR


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
    """One kernel of a loaded code object: its function, signature and the numpy type of each pointer
    argument (None for a scalar)."""

    __slots__ = ("name", "fn", "sig", "views", "module")

    def __init__(self, name, fn, sig, module):
        self.name, self.fn, self.sig, self.module = name, fn, sig, module
        self.views = [(NUMPY_TYPES[ty] if ptr else None) for (_n, ty, ptr) in sig.args]


class KernelLoader:
    """Kernel objects -> loaded kernels, shared by the agent's AQL engines.

    A kernel object names (code-object slot, generation, kernel index). The first dispatch of any
    kernel of a code object ``exec``-s the object's source and binds its device globals; every kernel
    of it is cached then (``kernels``, read without the lock: a dict lookup is atomic)."""

    def __init__(self, pm, mem, agent: int):
        self.pm, self.mem, self.agent = pm, mem, agent
        self.kernels: dict[int, LoadedKernel] = {}
        self._lock = threading.Lock()

    def kernel(self, kobj: int) -> LoadedKernel:
        k = self.kernels.get(kobj)
        if k is not None:
            return k
        with self._lock:
            k = self.kernels.get(kobj)          # another engine may have loaded it meanwhile
            return k if k is not None else self._load(kobj)

    def _load(self, kobj: int) -> LoadedKernel:
        if kobj == 0:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "kernel_object is null")
        parts = L.split_kernel_object(kobj)
        if parts is None or parts[0] >= L.CODEOBJ_SLOTS:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x} is not a kernel object handle")
        slot, gen, index = parts
        e = self.pm.codeobj[slot]
        if L.owner_state(int(e["owner"])) != L.CO_LOADED or int(e["gen"]) & 0xFFFF != gen:
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x} names code-object slot {slot} generation {gen}, "
                              f"which is not loaded")
        if index >= int(e["n_kernels"]):
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                              f"kernel_object {kobj:#x}: code object has {int(e['n_kernels'])} kernels, "
                              f"not index {index}")
        blob = self.pm.codeobj_blob(slot)
        ml, sl = int(e["meta_len"]), int(e["src_len"])
        try:
            meta = json.loads(bytes(blob[:ml]).decode())
            source = bytes(blob[ml:ml + sl]).decode()
            name = e["name"].decode(errors="replace")
            ns = {"__name__": f"hdemu_codeobj_{slot}_{gen}", "kernel": _kernel_decorator}
            exec(compile(source, f"<code object {name}>", "exec"), ns)
            bind_globals(self.mem, self.agent, ns, meta)
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


class AqlEngine(RingEngine):
    """One AQL engine thread's packet processor (``engine`` is its index in the agent)."""

    def __init__(self, cp, engine: int):
        super().__init__(cp, engine)
        self.agent_index = cp.agent_index
        self.mem = cp.mem
        self.loader = cp.loader
        self.kernels = cp.loader.kernels            # the loader's cache, looked up without its lock
        self.counters = cp.counters
        self.trace = cp.trace
        self.dfx = cp.dfx
        self.complete_signal = cp.complete_signal
        self.signal_value = cp.signal_value
        self.fail_queue = cp.fail_queue

    def run_dispatch(self, qs: QueueState, idx: int, off: int) -> None:
        (_h, setup, wx, wy, wz, _r0, gx, gy, gz, priv, grp, kobj, karg, r2, sig) = \
            _PKT.unpack_from(self.buf, off)
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
        k = self.kernels.get(kobj) or self.loader.kernel(kobj)
        did = L.dispatch_id(self.agent_index, qs.q, idx)
        mem = self.mem
        if k.sig.size:
            try:
                seg, koff, _avail = mem.extent(karg, k.sig.size)
            except MemoryFault as f:
                raise PacketError(f.status, f"kernarg_address: {f}") from None
            raw = k.sig.unpack_from(seg.buf, koff)
            args = []
            for v, dt in zip(raw, k.views):
                if dt is None:
                    args.append(v)
                else:
                    try:
                        args.append(mem.array(v, dt))
                    except MemoryFault as f:
                        raise PacketError(f.status, f"kernel {k.name}: {f}") from None
        else:
            args = ()
        cst = self.counters.begin(r2, k, args) if r2 else None      # counters requested (reserved2)
        ctx = KernelContext((gx, gy, gz), (wx, wy, wz), dims, did, self.agent_index)
        tr = self.trace
        engine = self.engine
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
        if cst is not None:
            self.counters.finish(cst, (gx, gy, gz), (wx, wy, wz), grp, priv, did)
        if self.dfx is not None:
            kb = bytes(seg.buf[koff:koff + min(k.sig.size, _TASK_KARG_BYTES)]) if k.sig.size else b""
            self.dfx.emit(engine, did, kobj, start, end, fetch, qs.last_did, (gx, gy, gz), kb, _DISPATCH)
        qs.last_did = did
        self.complete_signal(sig, start, end)

    def try_barrier(self, qs: QueueState, idx: int, off: int, ptype: int) -> bool:
        """Run a barrier packet if its dependencies are met; False leaves it parked."""
        _h, _r0, _r1, d0, d1, d2, d3, d4, _r2, sig = _BARRIER.unpack_from(self.buf, off)
        deps = [d for d in (d0, d1, d2, d3, d4) if d]
        vals = [self.signal_value(d) for d in deps]
        if ptype == _BARRIER_AND:
            ok = all(v == 0 for v in vals)
        else:
            ok = not deps or any(v == 0 for v in vals)
        if not ok:
            return False
        now = time.monotonic_ns()
        did = L.dispatch_id(self.agent_index, qs.q, idx)
        if self.trace:
            self.trace.record(L.EV_BARRIER_END, self.engine, did, ptype, now)
        if self.dfx is not None:
            self.dfx.emit(self.engine, did, 0, now, now, now, qs.last_did, (0, 0, 0), b"", ptype)
        qs.last_did = did
        self.complete_signal(sig, now, now)
        return True

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
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
                if ptype == _DISPATCH:
                    self.run_dispatch(qs, idx, off)
                    a64[qs.i_kernels_done] += 1
                elif ptype == _BARRIER_AND or ptype == _BARRIER_OR:
                    if not self.try_barrier(qs, idx, off, ptype):
                        qs.park(now)
                        return done
                    if qs.parked_until:
                        qs.unpark()
                else:
                    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                      f"packet type {ptype} is not supported on an AQL queue")
            except PacketError as err:
                self.fail_queue(qs, idx, err, self.engine, _SIGNAL.unpack_from(self.buf, off + _SIGNAL_OFF)[0])
                return done
            self.retire(qs, idx, off)
            done += 1
        if done:
            a64[qs.i_packets_done] += done
        return done
