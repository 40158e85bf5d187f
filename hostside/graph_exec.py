"""Executable graphs (``hipGraphExec_t``): the schedule and the pre-built packets of an instantiated
graph, and the launch path that copies them into the rings. The public HIP face is ``hostside.graph``.

Rationale (read this before changing the scheduler):

* **Ops.** Each graph node becomes one or two *ops*; each op runs on one *lane*: an AQL lane (lane 0 is
  the launch stream's own queue, lane k>0 the stream's k-th auxiliary queue, ``VirtualGPU.aux_queue``),
  the stream's SDMA queue (lane ``"S"``), or the host (lane ``"H"``: the async-handler thread runs it).
  A pageable device->host copy is an SDMA copy into staging plus a host op that copies the staging into
  the array; a pageable host->device copy is staged at launch time (the array is read when
  ``hipGraphLaunch`` runs) and copied by SDMA. Two virtual ops bracket the graph: START (lane 0, after
  everything earlier on the stream) and END (lane 0, after every op; its signal becomes the stream's
  last signal, so later work on the stream waits for the whole graph).
* **Dependencies.** An AQL or SDMA lane runs its packets one at a time, in order, so a dependency on an
  op that is already known to have completed before the lane reaches a packet needs nothing. We keep,
  per lane, the bitset of ops known complete (ancestors of everything placed on it) and turn only the
  remaining, transitively reduced predecessors into *explicit* dependencies: a BARRIER_AND packet in
  front of an AQL op (5 signals per packet, chained), dependency-only SDMA packets in front of an SDMA
  op (the SDMA packet has one dep_signal; a chain of size-0 copies on the in-order engine is an AND, and
  unlike a join marker on an AQL lane it adds no false dependency), or the list of signals a host op
  checks before it runs. Only ops something depends on explicitly get a completion signal.
  Every packet waits only for ops earlier in the topological order, so no assignment can deadlock.
* **Lanes.** An AQL op goes to a lane whose last op is one of its ancestors (no false dependency),
  preferring the one that needs the fewest explicit dependencies; so chains stay on one lane and
  independent branches spread over ``GRAPH_AQL_LANES`` lanes (on different CP engines when the queues
  landed on different engines). If the stream cannot get an auxiliary queue, the one-lane plan runs.
* **Replicas.** Packets point at exec-owned signals. A launch needs a set whose previous launch has
  finished (END is 0); the exec keeps up to ``GRAPH_MAX_REPLICAS`` sets (each with its own packet
  blocks and staging) so that launches can be queued back to back, and waits for the oldest otherwise.
  Resetting a set is one numpy store into the signal table.
* **Launch.** Per lane: reserve the indices once, wait for space once, one numpy slice assignment of the
  bodies (rows whose header is still INVALID), ``wmb()``, one strided store of the headers, then one
  doorbell per queue. The kernarg blocks are built once (fine-grained host memory, ALLOC_KERNARG); a
  kernel-node update waits for the exec's launches in flight, then rewrites its block.
"""
from __future__ import annotations

import struct
import threading
import warnings

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.coherence import wmb

from .commands import KERNEL_HEADER, MARKER_HEADER
from .hsa import HSA_SIGNAL_CONDITION_EQ, HsaError

#: AQL lanes a graph may spread over: the launch stream's queue plus auxiliary queues of that stream.
GRAPH_AQL_LANES = 2
#: Signal sets (with their packet blocks) an exec keeps so that launches can be queued back to back.
GRAPH_MAX_REPLICAS = 4
#: Signals one exec may hold over all its replicas (the platform has ``signals`` in all).
GRAPH_SIGNAL_BUDGET = 1024
#: Kernarg bytes reserved per kernel node (kernel arguments are at most 256 bytes).
_KARG_ALIGN = 64

_DISPATCH = struct.Struct("<HHHHHHIIIIIQQQQ")
_BARRIER = struct.Struct("<HHI5QQQ")
_SDMA = struct.Struct("<HHIQQQQQQQ")
_INVALID = A.HSA_PACKET_TYPE_INVALID
assert _INVALID == L.SDMA_TYPE_INVALID       # the body rows are written with this header in place

_AQL_KINDS = frozenset(("kernel", "marker", "evrec", "evwait"))
_SDMA_KINDS = frozenset(("copy", "fill"))


# node types (hipGraphNodeType values)
T_KERNEL, T_MEMCPY, T_MEMSET, T_HOST, T_EMPTY, T_WAIT, T_RECORD = 0, 1, 2, 3, 5, 6, 7


class KernelSpec:
    """A kernel node: function, packed kernargs, global grid size, workgroup size, LDS bytes."""

    __slots__ = ("f", "params", "kargs", "grid", "block", "shared", "dims")

    def __init__(self, f, params, kargs, grid, block, shared, dims):
        self.f, self.params, self.kargs = f, params, kargs
        self.grid, self.block, self.shared, self.dims = grid, block, shared, dims


class CopySpec:
    """A 1-D copy node: ``dst``/``src`` are addresses, or u8 numpy views for pageable memory."""

    __slots__ = ("dst", "src", "size", "dk", "sk", "kind")

    def __init__(self, dst, src, size, dk, sk, kind):
        self.dst, self.src, self.size, self.dk, self.sk, self.kind = dst, src, size, dk, sk, kind


class FillSpec:
    __slots__ = ("dst", "value", "size", "width")

    def __init__(self, dst, value, size, width):
        self.dst, self.value, self.size, self.width = dst, value, size, width


class HostSpec:
    __slots__ = ("fn", "userData")

    def __init__(self, fn, userData):
        self.fn, self.userData = fn, userData


class _Op:
    __slots__ = ("id", "kind", "en", "preds", "lane", "edeps", "xi", "action")

    def __init__(self, oid, kind, en, preds, action=None):
        self.id, self.kind, self.en, self.preds, self.action = oid, kind, en, preds, action
        self.lane = None
        self.edeps = ()
        self.xi = -1            # index of its completion signal in a replica, -1 = none


class ENode:
    """An exec's copy of one graph node: dependencies and parameters as instantiated (updatable
    through the exec only), enabled flag, kernarg block, staging offset, ops."""

    __slots__ = ("node", "type", "spec", "deps", "enabled", "karg", "karg_cap", "own_karg",
                 "stage_size", "stage_off", "stage_in", "ops")

    def __init__(self, node, spec):
        self.node, self.type, self.spec = node, node.type, spec
        self.deps = []
        self.enabled = True
        self.karg = 0
        self.karg_cap = 0
        self.own_karg = 0
        self.stage_size = 0
        self.stage_off = 0
        self.stage_in = False
        self.ops = []


def _expand(en, rt):
    """The ops of a node: [(kind, action)]. SDMA copy actions are (src, dst, size) with None for
    the replica's staging; host actions are callables of the replica."""
    t, c = en.type, en.spec
    if t == T_KERNEL:
        return [("kernel", None)]
    if t == T_EMPTY:
        return [("marker", None)]
    if t == T_RECORD:
        return [("evrec", None)]
    if t == T_WAIT:
        return [("evwait", None)]
    if t == T_MEMSET:
        return [("fill", None)]
    if t == T_HOST:
        return [("host", lambda r: c.fn(c.userData))]
    n = c.size
    dev = ("device", "pinned")
    if c.dk in dev and c.sk in dev:
        return [("copy", (c.src, c.dst, n))]
    if c.sk == "pageable" and c.dk == "device":
        en.stage_size, en.stage_in = n, True     # staged when hipGraphLaunch runs
        return [("copy", (None, c.dst, n))]
    if c.dk == "pageable" and c.sk == "device":
        en.stage_size = n

        def unstage(r, en=en, n=n):
            en.spec.dst[:n] = r.stage_view[en.stage_off:en.stage_off + n]
        return [("copy", (c.src, None, n)), ("host", unstage)]
    src = rt.host_view(c.src, n) if c.sk == "pinned" else c.src
    dst = rt.host_view(c.dst, n) if c.dk == "pinned" else c.dst

    def h2h(r, src=src, dst=dst, n=n):
        dst[:n] = src[:n]
    return [("host", h2h)]


# ------------------------------------------------------------------------------------------------
class Plan:
    """The schedule of an exec for a number of AQL lanes: packet templates per lane, host ops."""

    def __init__(self, ex, n_lanes: int):
        self.ex = ex
        self.n_lanes = n_lanes
        self.replicas: list[Replica] = []
        self.next_rep = 0
        self._build_ops()
        self._schedule()
        self._templates()
        n = len(self.exported)
        self.max_replicas = max(1, min(GRAPH_MAX_REPLICAS, GRAPH_SIGNAL_BUDGET // max(1, n)))

    # -- ops -----------------------------------------------------------------------------------
    def _build_ops(self):
        ops = [_Op(0, "start", None, [])]
        done = {}                                   # ENode -> op ids whose completion is the node's
        for en in self.ex.order:
            preds = list(dict.fromkeys(p for d in en.deps for p in done[d])) or [0]
            first = preds
            for kind, action in en.ops:
                op = _Op(len(ops), kind, en, preds, action)
                ops.append(op)
                preds = [op.id]
            # a successor of an event-record node depends on what the record waited for, not on
            # the event's signal (which the application may re-record elsewhere meanwhile)
            done[en] = first if en.type == T_RECORD else preds
        self.end = _Op(len(ops), "end", None, [])
        ops.append(self.end)
        self.ops = ops

    def _schedule(self):
        ops, n_lanes = self.ops, self.n_lanes
        anc = [0] * len(ops)        # DAG ancestors (bitsets)
        hb = [0] * len(ops)         # ops complete before this one starts: ancestors + lane order
        known = {k: 0 for k in range(n_lanes)}
        known["S"] = 0
        known[0] = 1                                 # lane 0 starts after START (op 0)
        tail = {k: None for k in range(n_lanes)}
        tail[0] = 0
        count = {k: 0 for k in range(n_lanes)}
        host_ops = []

        def reduce(cands):
            """Drop the candidates whose completion another candidate's completion implies."""
            if len(cands) < 2:
                return list(cands)
            return [p for p in cands if not any(q != p and (hb[q] >> p) & 1 for q in cands)]

        ops[0].lane = 0
        for op in ops[1:-1]:
            a = 0
            for p in op.preds:
                a |= anc[p] | (1 << p)
            anc[op.id] = a
            if op.kind in _AQL_KINDS:
                best = None
                for k in range(n_lanes):
                    t = tail[k]
                    free = t is None or t == 0 or (a >> t) & 1     # no false dependency on lane k
                    need = reduce([p for p in op.preds if not (known[k] >> p) & 1])
                    key = (0 if free else 1, len(need), 0 if free else count[k], k)
                    if best is None or key < best[0]:
                        best = (key, k, need)
                _key, lane, need = best
                count[lane] += 1
            elif op.kind in _SDMA_KINDS:
                lane = "S"
                need = reduce([p for p in op.preds if not (known["S"] >> p) & 1])
            else:
                lane = "H"
                need = reduce(op.preds)
                host_ops.append(op)
            op.lane = lane
            op.edeps = need
            h = a
            for p in need:
                h |= hb[p]
            if lane != "H":
                h |= known[lane]
                known[lane] = h | (1 << op.id)
                tail[lane] = op.id
            hb[op.id] = h
        # END (lane 0): after the tails of the other lanes and every host op lane 0 does not cover.
        end = self.end
        cands = [t for k, t in tail.items() if k != 0 and t is not None] + [o.id for o in host_ops]
        end.preds = cands
        end.lane = 0
        end.edeps = reduce([p for p in cands if not (known[0] >> p) & 1])
        self.lanes_used = sorted({o.lane for o in ops if isinstance(o.lane, int)})
        self.uses_sdma = "S" in tail
        self.host_ops = host_ops
        # completion signals: for every op another op waits for explicitly, END, and host ops
        exported = []
        for op in ops:
            for p in op.edeps:
                q = ops[p]
                if q.xi < 0 and q.kind != "evrec":     # an event record completes the event itself
                    q.xi = len(exported)
                    exported.append(q)
        for op in [end] + host_ops:
            if op.xi < 0:
                op.xi = len(exported)
                exported.append(op)
        self.exported = exported

    # -- packet templates ----------------------------------------------------------------------
    def _templates(self):
        """Per lane a list of templates: ("D", op, ()) dispatch, ("B", op, deps) barrier (op None:
        dependency-only), ("S", op, dep) SDMA (op None: dependency-only). Deps are op ids."""
        lanes = {k: [] for k in self.lanes_used}
        if self.uses_sdma:
            lanes["S"] = []
        pos = {}                                     # ENode -> [(lane, index)]
        for op in self.ops:
            lane = op.lane
            if lane == "H":
                continue
            if op.kind == "start":
                if op.xi >= 0:
                    lanes[0].append(("B", op, ()))
                continue
            out = lanes[lane]
            deps = list(op.edeps)
            if lane == "S":
                while len(deps) > 1:
                    out.append(("S", None, deps.pop(0)))
                idx = len(out)
                out.append(("S", op, deps[0] if deps else None))
            else:
                room = 0 if op.kind == "kernel" else (4 if op.kind == "evwait" else 5)
                while len(deps) > room:
                    chunk, deps = deps[:5], deps[5:]
                    out.append(("B", None, tuple(chunk)))
                idx = len(out)
                out.append(("D", op, ()) if op.kind == "kernel" else ("B", op, tuple(deps)))
            if op.en is not None:
                pos.setdefault(op.en, []).append((lane, idx))
        # after END: a marker whose completion signal is a fresh one of the launch stream's ring,
        # patched in at launch. It becomes the stream's last signal, so nothing outside the exec
        # ever names an exec signal (a replica is reused once END is 0).
        lanes[0].append(("T", None, ()))
        self.lanes = lanes
        self.pos = pos
        self.n_packets = sum(len(v) for v in lanes.values())

    # -- replicas ------------------------------------------------------------------------------
    def replica(self) -> "Replica":
        """A replica whose previous launch has finished (waits for the oldest if all are busy)."""
        s64 = self.ex.rt.s64
        for r in self.replicas:
            if not r.launched or s64[r.end_i] == 0:
                return r
        if len(self.replicas) < self.max_replicas:
            r = Replica(self)
            self.replicas.append(r)
            return r
        r = self.replicas[self.next_rep % len(self.replicas)]
        self.next_rep += 1
        r.wait()
        return r


class Replica:
    """One set of completion signals and staging, with the packet blocks (per lane) that use them."""

    def __init__(self, plan: Plan):
        self.plan = plan
        ex = plan.ex
        rt = ex.rt
        self.sigs = []
        self.staging = 0
        self.launched = False
        self.vgpu = None
        try:
            self.sigs = [rt.signals.create(0, kind=1) for _ in plan.exported]
            if ex.stage_bytes:
                self.staging = rt.allocate(None, ex.stage_bytes, L.ALLOC_STAGING)
        except HsaError:
            self.release()
            raise
        self.slots = np.array([s._i for s in self.sigs], dtype=np.intp)
        self.end_sig = self.sigs[plan.end.xi]
        self.end_i = self.end_sig._i
        self.stage_view = rt.host_view(self.staging, ex.stage_bytes) if ex.stage_bytes else None
        self.blocks = {}
        for lane, tpls in plan.lanes.items():
            self.blocks[lane] = (np.zeros((len(tpls), 64), dtype=np.uint8), np.zeros(len(tpls), dtype=np.uint16))
            for i in range(len(tpls)):
                self.render(lane, i)
        self.host = [(op, [self.sig_of(p) for p in op.edeps], self.sigs[op.xi]) for op in plan.host_ops]
        self.tail = self.blocks[0][0][-1].view(np.uint64)       # [7] = the tail marker's signal

    def sig_of(self, p):
        op = self.plan.ops[p]
        return op.en.spec.signal if op.kind == "evrec" else self.sigs[op.xi]

    def render(self, lane, i) -> None:
        """Write packet ``i`` of ``lane`` into this replica's block (with the header INVALID in the
        row; the real header goes to the headers array, stored into the ring last)."""
        tpl = self.plan.lanes[lane][i]
        block, hdrs = self.blocks[lane]
        buf = block[i]
        kind, op = tpl[0], tpl[1]
        comp = self.sigs[op.xi].handle if op is not None and op.xi >= 0 else 0
        if kind == "D":
            en = op.en
            k = en.spec
            if en.enabled:
                _DISPATCH.pack_into(buf, 0, _INVALID, k.dims, k.block[0], k.block[1], k.block[2], 0,
                                    k.grid[0], k.grid[1], k.grid[2], 0, k.shared, k.f.kobj, en.karg, 0, comp)
                hdrs[i] = KERNEL_HEADER
            else:                                   # a disabled node is an empty marker
                _BARRIER.pack_into(buf, 0, _INVALID, 0, 0, 0, 0, 0, 0, 0, 0, comp)
                hdrs[i] = MARKER_HEADER
        elif kind == "T":
            _BARRIER.pack_into(buf, 0, _INVALID, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            hdrs[i] = MARKER_HEADER
        elif kind == "B":
            deps = [self.sig_of(p).handle for p in tpl[2]]
            if op is not None and op.kind == "evwait":
                deps.append(op.en.spec.signal.handle)
            elif op is not None and op.kind == "evrec":
                comp = op.en.spec.signal.handle
            deps += [0] * (5 - len(deps))
            _BARRIER.pack_into(buf, 0, _INVALID, 0, 0, *deps, 0, comp)
            hdrs[i] = MARKER_HEADER
        else:                                       # SDMA; a disabled node copies 0 bytes
            dep = self.sig_of(tpl[2]).handle if tpl[2] is not None else 0
            ptype, src, dst, size, val, width = L.SDMA_TYPE_COPY, 0, 0, 0, 0, 0
            if op is not None and op.en.enabled:
                c = op.en.spec
                if op.kind == "fill":
                    ptype, dst, size, val, width = L.SDMA_TYPE_FILL, c.dst, c.size, c.value, c.width
                else:
                    src, dst, size = op.action
                    if src is None:
                        src = self.staging + op.en.stage_off
                    if dst is None:
                        dst = self.staging + op.en.stage_off
            _SDMA.pack_into(buf, 0, _INVALID, 0, width, dep, src, dst, size, val, 0, comp)
            hdrs[i] = ptype

    def wait(self) -> None:
        """Wait for this replica's last launch (bounded like every stream wait)."""
        if self.vgpu is not None:
            self.vgpu.sync_signal(self.end_sig)

    def release(self) -> None:
        for s in self.sigs:
            s.destroy()
        self.sigs = []
        if self.staging:
            try:
                self.plan.ex.rt.free(self.staging)
            except HsaError:
                pass
            self.staging = 0


# ------------------------------------------------------------------------------------------------
def _ring_views(q):
    """(rows, headers) numpy views of a queue's ring, cached on the queue."""
    rv = getattr(q, "_graph_ring", None)
    if rv is None:
        ring = np.frombuffer(q.buf, dtype=np.uint8, count=q.size * 64, offset=q.ring_off).reshape(q.size, 64)
        rv = q._graph_ring = (ring, ring.view(np.uint16)[:, 0])
    return rv


def copy_block(q, block, hdrs, publish) -> None:
    """Copy pre-built packets into ``q``: bodies (rows whose header is still INVALID) first, then
    the headers, then ``publish(q, last_index)`` (the doorbell, or the stream's batch). Returns the
    first packet id."""
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
            self._write_kernargs(en)
            self._rerender(en)

    def set_enabled(self, en, enabled: bool) -> None:
        """hipGraphNodeSetEnabled: only the pre-built packets change (the ring holds copies)."""
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
            for en in self.evrec:                 # a new record: maybe a fresh signal (hip._event_rearm)
                self.event_rearm(en.spec)
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
                r.tail[7] = done.handle
                blocks = r.blocks
                publish = v._publish
                base = {0: (v.queue, copy_block(v.queue, *blocks[0], publish))}
                for lane in p.lanes_used[1:]:
                    q = v.aux_queue(lane - 1)
                    base[lane] = (q, copy_block(q, *blocks[lane], publish))
                if p.uses_sdma:
                    copy_block(v._sdma_queue(), *blocks["S"], publish)
                for en in self.evwait:            # so that a re-record does not move under them
                    ws = en.spec.waiters
                    if len(ws) > 32:
                        ws[:] = [(q, i) for q, i in ws if not q.destroyed and q.load_read_index() <= i]
                    for lane, i in p.pos.get(en, ()):
                        q, first = base[lane]
                        ws.append((q, first + i))
                v.last_signal = done
                v.last_engine = "aql"
                v.commands += 1
                if r.host:
                    handler = self.rt.async_handler
                    for op, deps, mine in r.host:
                        handler.register(deps[0], HSA_SIGNAL_CONDITION_EQ, 0, _host_runner(op, deps, mine, r))
            r.launched = True
            r.vgpu = v
            self.launches += 1
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
                        except HsaError:
                            pass
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

    def statistics(self) -> dict:
        p = self.full
        return {"nodes": len(self.order), "launches": self.launches, "aql_lanes": len(p.lanes_used),
                "packets": {str(k): len(v) for k, v in p.lanes.items()},
                "host_ops": len(p.host_ops), "signals_per_launch": len(p.exported),
                "replicas": len(p.replicas), "kernarg_bytes": sum(en.karg_cap for en in self.order),
                "staging_bytes": self.stage_bytes}


def _host_runner(op, deps, mine, r):
    """The async-handler callback of a host op: runs once every dependency signal is 0, then
    decrements the op's completion signal (also when the callback raised: never hang a stream)."""
    def run(_value, _arg):
        for d in deps[1:]:
            if d.load() != 0:
                return True                       # stay armed until all are done
        try:
            if op.en.enabled:
                op.action(r)
        except Exception as exc:  # noqa: BLE001
            warnings.warn(f"graph host node {op.en.node.id} raised {type(exc).__name__}: {exc}",
                          RuntimeWarning, stacklevel=1)
        finally:
            mine.subtract(1)
        return False
    return run
