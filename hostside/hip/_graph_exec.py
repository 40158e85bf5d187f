"""Executable graphs (``hipGraphExec_t``'s implementation): the kernarg blocks and plans of an
instantiated graph (``_schedule``), the launch path that copies a replica's pre-built packets into the
rings, exec updates (kernel parameters, enabled flags) and teardown.

* **Launch.** Per lane: reserve the indices once, wait for space once, one numpy slice assignment of the
  bodies (rows whose header is still INVALID), ``wmb()``, one strided store of the headers, then one
  doorbell per queue. A lane longer than its ring is fed in halves, with a doorbell after each.
* **Kernargs.** The kernarg blocks are built once (fine-grained host memory, ALLOC_KERNARG); a
  kernel-node update waits for the exec's launches in flight, then rewrites its block.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from shm_layout import layouts as L
from shm_layout.coherence import wmb

from ..hsa import HSA_SIGNAL_CONDITION_EQ, HsaError
from ._schedule import HEADER_U16, PACKET_BYTES, T_EMPTY, T_KERNEL, T_RECORD, T_WAIT, Plan, _expand

_log = logging.getLogger("hdemu.hip")


@dataclass(frozen=True)
class GraphExecStatistics:
    """``hipGraphExec_t.statistics()``: how an instantiated graph was scheduled and used."""
    nodes: int
    launches: int
    aql_lanes: int              # AQL queues its kernels and markers use (1 or 2)
    packets: dict               # queue lane -> packets per launch
    host_ops: int
    signals_per_launch: int
    replicas: int               # launches of this exec that may be in flight at once
    kernarg_bytes: int
    staging_bytes: int

__all__ = ["GRAPH_AQL_LANES", "GraphExec", "copy_block"]

#: AQL lanes a graph may spread over: the launch stream's queue plus auxiliary queues of that stream.
GRAPH_AQL_LANES = 2
#: A kernel node's kernarg block is its argument size rounded up to this many bytes (kernel arguments
#: are at most 256 bytes).
_KARG_ALIGN = 64


def _ring_views(q):
    """(rows, headers) numpy views of a queue's ring, cached on the queue."""
    rv = getattr(q, "_graph_ring", None)
    if rv is None:
        ring = np.frombuffer(q.buf, dtype=np.uint8, count=q.size * PACKET_BYTES,
                             offset=q.ring_off).reshape(q.size, PACKET_BYTES)
        rv = q._graph_ring = (ring, ring.view(np.uint16)[:, HEADER_U16])
    return rv


def copy_block(q, block, hdrs, publish) -> int:
    """Copy pre-built packets into ``q``: bodies (rows whose header is still INVALID) first, then
    the headers, then ``publish(q, last_index)`` (the doorbell, or the stream's batch). A block with
    more packets than the ring holds is fed in halves, ringing ``q``'s doorbell after each half
    (``publish`` is not called). Returns the first packet id, or -1 for an empty block."""
    n = len(hdrs)
    if not n:
        return -1
    ring, ring_h = _ring_views(q)
    size = q.size
    idx = q.add_write_index(n)
    if n <= size:
        q.wait_for_space(idx + n - 1)
        i0 = idx & q.mask
        e = i0 + n
        if e <= size:
            ring[i0:e] = block
            wmb()
            ring_h[i0:e] = hdrs
        else:
            k = size - i0
            ring[i0:] = block[:k]
            ring[:e - size] = block[k:]
            wmb()
            ring_h[i0:] = hdrs[:k]
            ring_h[:e - size] = hdrs[k:]
        publish(q, idx + n - 1)
        return idx
    # more packets than the ring holds: feed it in halves, ringing the doorbell after each half
    step = max(1, size // 2)
    for c0 in range(0, n, step):
        c1 = min(n, c0 + step)
        q.wait_for_space(idx + c1 - 1)
        rows = (np.arange(c0, c1) + idx) & q.mask
        ring[rows] = block[c0:c1]
        wmb()
        ring_h[rows] = hdrs[c0:c1]
        q.ring_doorbell(idx + c1 - 1)
    return idx


def _s64_array(rt) -> np.ndarray:
    a = getattr(rt, "_graph_s64", None)
    if a is None:
        a = rt._graph_s64 = np.frombuffer(rt.pm.segs["signals"].buf, dtype=np.uint64)
    return a


class GraphExec:
    """The instantiated graph: ENodes in topological order, kernarg blocks, plans and launches."""

    def __init__(self, rt, graph, enodes, event_rearm):
        self.rt = rt
        self.event_rearm = event_rearm
        self.graph = graph
        self.order = enodes                  # topological order, deps snapshot in ENode.deps
        self.enode = {en.node: en for en in enodes}
        self.lock = threading.RLock()
        self.destroyed = False
        self.karg_base = 0
        self.launches = 0
        self.plans: dict[int, Plan] = {}
        self.s64np = _s64_array(rt)
        try:
            self._build(rt, enodes)
        except Exception:
            self.destroy()
            raise

    def _build(self, rt, enodes) -> None:
        for en in enodes:
            en.ops = _expand(en, rt)
        self.stage_bytes = 0
        for en in enodes:
            if en.stage_size:
                en.stage_off = self.stage_bytes
                self.stage_bytes += -(-en.stage_size // 256) * 256
        self.stage_in = [en for en in enodes if en.stage_in]
        self.evrec = [en for en in enodes if en.type == T_RECORD]
        self.evwait = [en for en in enodes if en.type == T_WAIT]
        self.ev_nodes = self.evrec + self.evwait
        #: the events its nodes record or wait for, in one order (their locks are taken in it)
        self.events = sorted({id(en.spec): en.spec for en in self.ev_nodes}.values(), key=id)
        self._note_code_objects()
        self.bound = {en: en.spec.signal for en in self.ev_nodes}   # event signal the packets name
        self._alloc_kernargs()
        self.full = self.plan(min(GRAPH_AQL_LANES, self._width()))

    def _width(self) -> int:
        """AQL nodes on the busiest level (longest-path depth): nodes of one level are independent."""
        level, width = {}, {}
        for en in self.order:
            lv = 1 + max((level[d] for d in en.deps), default=0)
            level[en] = lv
            if en.type in (T_KERNEL, T_EMPTY, T_WAIT, T_RECORD):
                width[lv] = width.get(lv, 0) + 1
        return max(width.values(), default=1)

    def plan(self, n_lanes: int) -> Plan:
        p = self.plans.get(n_lanes)
        if p is None:
            p = self.plans[n_lanes] = Plan(self, n_lanes)
        return p

    # -- kernargs ------------------------------------------------------------------------------
    def _alloc_kernargs(self) -> None:
        kern = [en for en in self.order if en.type == T_KERNEL and en.spec.f.sig.size]
        caps = [-(-en.spec.f.sig.size // _KARG_ALIGN) * _KARG_ALIGN for en in kern]
        if not kern:
            return
        self.karg_base = self.rt.allocate(None, sum(caps), L.ALLOC_KERNARG)
        off = 0
        for en, cap in zip(kern, caps):
            en.karg, en.karg_cap = self.karg_base + off, cap
            self._write_kernargs(en)
            off += cap

    def _write_kernargs(self, en) -> None:
        k = en.spec.kargs
        if k:
            self.rt.host_view(en.karg, len(k))[:] = np.frombuffer(k, dtype=np.uint8)

    # -- updates -------------------------------------------------------------------------------
    def wait_idle(self) -> None:
        """Wait until no launch of this exec is in flight."""
        for p in self.plans.values():
            for r in p.replicas:
                if r.launched:
                    r.wait()

    def _note_code_objects(self) -> None:
        """The code objects its kernel nodes use (a launch fails once one of them is unloaded)."""
        self.code_objects = list({id(en.spec.f.co): en.spec.f.co for en in self.order if en.type == T_KERNEL}.values())

    def unloaded_function(self):
        """The name of a kernel of an unloaded module that a node uses, or None."""
        for co in self.code_objects:
            if co.unloaded:
                return next(en.spec.f.name for en in self.order if en.type == T_KERNEL and en.spec.f.co is co)
        return None

    def set_kernel(self, en, spec) -> None:
        """hipGraphExecKernelNodeSetParams: takes effect from the next launch on."""
        with self.lock:
            self.wait_idle()                      # launches in flight still read the old kernargs
            need = spec.f.sig.size
            if need > en.karg_cap:
                addr = self.rt.allocate(None, need, L.ALLOC_KERNARG)
                if en.own_karg:
                    self.rt.free(en.own_karg)
                en.own_karg = addr
                en.karg, en.karg_cap = addr, -(-need // _KARG_ALIGN) * _KARG_ALIGN
            en.spec = spec
            self._note_code_objects()
            self._write_kernargs(en)
            self._rerender(en)

    def set_enabled(self, en, enabled: bool) -> None:
        """hipGraphNodeSetEnabled: takes effect from the next launch. The pre-built packets are
        re-rendered (the rings hold copies); a host op reads the flag as of its launch."""
        with self.lock:
            en.enabled = bool(enabled)
            self._rerender(en)

    def _rerender(self, en) -> None:
        for p in self.plans.values():
            where = p.pos.get(en, ())
            for r in p.replicas:
                for lane, i in where:
                    r.render(lane, i)

    # -- launch --------------------------------------------------------------------------------
    def launch(self, v) -> None:
        """hipGraphLaunch on the stream whose VirtualGPU is ``v``."""
        with self.lock:
            p = self.full
            if p is None:
                raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, "this exec could not be rebuilt after a "
                               "parameter change failed: it can only be destroyed")
            if p.n_lanes > 1 and len(v.aux) < p.n_lanes - 1:
                try:
                    if getattr(v, "_graph_no_aux", False):
                        raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, "no queue for a branch")
                    for k in range(1, p.n_lanes):
                        v.aux_queue(k - 1)
                except HsaError:                  # no queue slot left for a branch: one lane
                    v._graph_no_aux = True
                    p = self.plan(1)
            r = p.replica()
            with contextlib.ExitStack() as held:
                for ev in self.events:            # records, waits and their signals: see hipEventRecord
                    held.enter_context(ev.lock)
                self._launch_locked(v, p, r)
            r.launched = True
            r.vgpu = v
            self.launches += 1

    def _launch_locked(self, v, p, r) -> None:
        """The launch proper, with the exec's lock and its events' locks held."""
        for en in self.evrec:                 # a new record: maybe a fresh signal (_stream._event_rearm)
            self.event_rearm(en.spec, v)
        for en in self.evwait:                # the record it waits for must be rung
            if en.spec.stream is not None and en.spec.stream is not v:
                en.spec.stream.flush()
        for en in self.ev_nodes:              # event signals are bound at launch time
            if en.spec.signal is not self.bound[en]:
                self.bound[en] = en.spec.signal
                self._rerender(en)
        with v.lock:
            self.s64np[r.slots] = 1           # every completion signal of the replica, one store
            for en in self.evrec:
                en.spec.signal.store_relaxed_nowake(1)
            if self.stage_in:
                sv = r.stage_view
                for en in self.stage_in:
                    if en.enabled:
                        n = en.spec.size
                        sv[en.stage_off:en.stage_off + n] = en.spec.src[:n]
            last = v.last_signal
            if last is not None and v.last_engine != "aql" and self.rt.s64[last._i]:
                v._marker_locked([last.handle], signal=False)      # stream order across engines
            done = v._next_signal()           # the stream's own ring: see the tail marker
            r.tail_signal[0] = done.handle
            blocks = r.blocks
            publish = v._publish
            # the stream's queues may be shared with other streams (clr._qpool): no packet of another
            # stream may come between this launch's blocks (one behind lane 0's END that the next
            # SDMA block waited for would deadlock), so both queue locks are held (AQL, then SDMA)
            with contextlib.ExitStack() as qlocks:
                qlocks.enter_context(v.queue.lock)
                sq = v._sdma_queue() if p.uses_sdma else None
                if sq is not None:
                    qlocks.enter_context(sq.lock)
                base = {0: (v.queue, copy_block(v.queue, *blocks[0], publish))}
                for lane in p.lanes_used[1:]:
                    q = v.aux_queue(lane - 1)
                    base[lane] = (q, copy_block(q, *blocks[lane], publish))
                if sq is not None:
                    copy_block(sq, *blocks["S"], publish)
            for en in self.evwait:            # so that a re-record does not move under them
                ws = en.spec.waiters
                if len(ws) > 32:
                    ws[:] = [(q, i) for q, i in ws if not q.destroyed and q.load_read_index() <= i]
                for lane, i in p.pos.get(en, ()):
                    q, first = base[lane]
                    ws.append((q, first + i))
            v.last_signal = done
            v.last_waiters = None
            v.last_engine = "aql"
            v.commands += 1
            if r.host:
                handler = self.rt.async_handler
                for op, deps, mine in r.host:       # enabled as of this launch (packets are copies too)
                    handler.register(deps[0], HSA_SIGNAL_CONDITION_EQ, 0,
                                     _host_runner(op, deps, mine, r, op.en.enabled))
        for en in self.evrec:
            en.spec.recorded = True
            en.spec.stream = v

    # -- teardown ------------------------------------------------------------------------------
    def destroy(self) -> None:
        """Wait for launches in flight, then give back signals, kernarg blocks and staging."""
        with self.lock:
            if self.destroyed:
                return
            self.destroyed = True
            plans = list(self.plans.values())
            for p in plans:
                for r in p.replicas:
                    if r.launched:
                        try:
                            r.wait()
                        except HsaError as exc:     # the stream failed: its sync reports it
                            _log.debug("destroying a graph exec whose launch failed: %s", exc)
            for p in plans:
                for r in p.replicas:
                    r.release()
            for en in self.order:
                if en.own_karg:
                    self.rt.free(en.own_karg)
                    en.own_karg = 0
            if self.karg_base:
                self.rt.free(self.karg_base)
                self.karg_base = 0

    def statistics(self) -> "GraphExecStatistics":
        p = self.full
        return GraphExecStatistics(
            nodes=len(self.order), launches=self.launches, aql_lanes=len(p.lanes_used),
            packets={str(k): len(v) for k, v in p.lanes.items()}, host_ops=len(p.host_ops),
            signals_per_launch=len(p.exported), replicas=len(p.replicas),
            kernarg_bytes=sum(en.karg_cap for en in self.order), staging_bytes=self.stage_bytes)


def _host_runner(op, deps, mine, r, enabled: bool):
    """The async-handler callback of a host op of one launch: once every dependency signal is 0, runs
    the op if its node was enabled when the launch was made, then decrements the op's completion
    signal (also when the op raised: never hang a stream)."""
    def run(_value, _arg):
        for d in deps[1:]:
            if d.load() != 0:
                return True                       # stay armed until all are done
        try:
            if enabled:
                op.action(r)
        except Exception as exc:  # noqa: BLE001
            warnings.warn(f"graph host node {op.en.node.id} raised {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=1)
        finally:
            mine.subtract(1)
        return False
    return run
