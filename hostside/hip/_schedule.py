"""The scheduler of an instantiated graph: each node becomes ops on lanes, the dependencies the lanes
do not already imply become explicit waits, and a *plan* holds the packet templates; a *replica* is one
set of completion signals and staging with the packets rendered for it. ``_graph_exec.GraphExec``
owns the plans and launches them.

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
* **Replicas.** Packets point at exec-owned signals (an event-record packet completes the event's own
  signal, and nothing of the exec waits on that: what waits on a record waits on a marker right behind
  it on its lane, with an exec signal, since the next launch re-arms the event). A launch needs a set whose previous launch has
  finished (END is 0); the exec keeps up to ``GRAPH_MAX_REPLICAS`` sets (each with its own packet
  blocks and staging) so that launches can be queued back to back, and otherwise waits for one (in turn).
  Resetting a set is one numpy store into the signal table.

Packets are packed with ``struct`` formats derived from the shared layouts (``shm_layout.aql``,
``shm_layout.layouts``) once at import; each block row is a packet with its header still INVALID (the
real header sits in a separate array, stored into the ring last).
"""
from __future__ import annotations

import logging
import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L

from ..clr import KERNEL_HEADER, MARKER_HEADER
from ..hsa import HsaError
from ._graph_types import hipGraphNodeType

_log = logging.getLogger("hdemu.hip")

__all__ = ["GRAPH_MAX_REPLICAS", "GRAPH_SIGNAL_BUDGET", "ENode", "Plan", "Replica"]

#: Signal sets (with their packet blocks) an exec keeps so that launches can be queued back to back.
GRAPH_MAX_REPLICAS = 4
#: Signals one exec's replicas may hold together (the platform has ``signals`` in all): a graph with
#: many signals gets fewer replicas, but always one.
GRAPH_SIGNAL_BUDGET = 1024

# -- packet formats, from the declarations of the shared layouts --------------------------------------
PACKET_BYTES = A.PACKET_BYTES
_DISPATCH = L.struct_of(A.kernel_dispatch_packet)
_BARRIER = L.struct_of(A.barrier_and_packet)
_SDMA = L.struct_of(L.sdma_packet)
_RECT = L.struct_of(L.sdma_rect_packet)
#: dependency signals one BARRIER_AND packet holds
BARRIER_DEPS = A.barrier_and_packet.fields["dep_signal"][0].shape[0]
#: u16 index of the header in a packet row (the same for AQL and SDMA packets: one ring fetch)
HEADER_U16 = L.word_of(A.kernel_dispatch_packet, "header", 2)
#: u64 index of the completion signal in a packet row
COMPLETION_U64 = L.word_of(A.barrier_and_packet, "completion_signal")
_INVALID = A.HSA_PACKET_TYPE_INVALID
assert _INVALID == L.SDMA_TYPE_INVALID       # the body rows are written with this header in place
# the positional pack_into calls below name every field in declaration order
assert len(_DISPATCH.unpack(bytes(_DISPATCH.size))) == len(A.kernel_dispatch_packet.names)
assert len(_BARRIER.unpack(bytes(_BARRIER.size))) == len(A.barrier_and_packet.names) - 1 + BARRIER_DEPS
assert len(_SDMA.unpack(bytes(_SDMA.size))) == len(L.sdma_packet.names)
assert _DISPATCH.size == _BARRIER.size == _SDMA.size == PACKET_BYTES
assert HEADER_U16 == L.word_of(A.barrier_and_packet, "header", 2) == L.word_of(L.sdma_packet, "header", 2)

_AQL_KINDS = frozenset(("kernel", "marker", "evrec", "evwait"))
_SDMA_KINDS = frozenset(("copy", "fill"))

# node types
_T = hipGraphNodeType
T_KERNEL, T_MEMSET, T_HOST = _T.hipGraphNodeTypeKernel, _T.hipGraphNodeTypeMemset, _T.hipGraphNodeTypeHost
T_EMPTY, T_WAIT, T_RECORD = _T.hipGraphNodeTypeEmpty, _T.hipGraphNodeTypeWaitEvent, _T.hipGraphNodeTypeEventRecord


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
        # completion signals: for every op another op waits for explicitly, END, and host ops. An
        # event record completes the event's signal; one that another op waits for (END, when the
        # record is the tail of a lane) also gets an exec signal, completed by a marker right behind
        # it: the exec never waits on the event's signal, which the next launch re-arms (and may
        # re-arm before a parked END of this launch has seen it: a deadlock behind the next START)
        exported = []
        for op in ops:
            for p in op.edeps:
                q = ops[p]
                if q.xi < 0:
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
        dependency-only), ("E", op, ()) the marker behind an event record something waits for, ("S", op,
        dep) SDMA (op None: dependency-only), ("T", None, ()) the tail marker. Deps are op ids."""
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
                # deps the op's own packet holds: none for a dispatch, one less for an event wait
                # (its last slot is the event's signal)
                room = 0 if op.kind == "kernel" else (BARRIER_DEPS - 1 if op.kind == "evwait" else BARRIER_DEPS)
                while len(deps) > room:
                    chunk, deps = deps[:BARRIER_DEPS], deps[BARRIER_DEPS:]
                    out.append(("B", None, tuple(chunk)))
                idx = len(out)
                out.append(("D", op, ()) if op.kind == "kernel" else ("B", op, tuple(deps)))
                if op.kind == "evrec" and op.xi >= 0:
                    out.append(("E", op, ()))       # completes the record's exec signal
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
        """A replica whose previous launch has finished; a new one while there are fewer than
        ``max_replicas``; else waits for a busy one (round robin over the replicas)."""
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
            self.blocks[lane] = (np.zeros((len(tpls), PACKET_BYTES), dtype=np.uint8),
                                 np.zeros(len(tpls), dtype=np.uint16))
            for i in range(len(tpls)):
                self.render(lane, i)
        self.host = [(op, [self.sig_of(p) for p in op.edeps], self.sigs[op.xi]) for op in plan.host_ops]
        # the completion signal of the tail marker (the last packet of lane 0), patched in at launch
        self.tail_signal = self.blocks[0][0][-1].view(np.uint64)[COMPLETION_U64:COMPLETION_U64 + 1]

    def sig_of(self, p):
        return self.sigs[self.plan.ops[p].xi]

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
        elif kind == "T" or kind == "E":            # the tail marker (patched at launch); a record's marker
            _BARRIER.pack_into(buf, 0, _INVALID, 0, 0, 0, 0, 0, 0, 0, 0, comp if kind == "E" else 0)
            hdrs[i] = MARKER_HEADER
        elif kind == "B":
            deps = [self.sig_of(p).handle for p in tpl[2]]
            if op is not None and op.kind == "evwait":
                deps.append(op.en.spec.signal.handle)
            elif op is not None and op.kind == "evrec":
                comp = op.en.spec.signal.handle
            deps += [0] * (BARRIER_DEPS - len(deps))
            _BARRIER.pack_into(buf, 0, _INVALID, 0, 0, *deps, 0, comp)
            hdrs[i] = MARKER_HEADER
        else:                                       # SDMA; a disabled node copies 0 bytes
            dep = self.sig_of(tpl[2]).handle if tpl[2] is not None else 0
            ptype, src, dst, size, val, width = L.SDMA_TYPE_COPY, 0, 0, 0, 0, 0
            if op is not None and op.en.enabled:
                c = op.en.spec
                if op.kind == "fill" and c.rows > 1:        # a pitched fill: one rectangular packet
                    _RECT.pack_into(buf, 0, _INVALID, 0, c.width, dep, 0, c.dst, c.size, c.rows, 0, c.pitch,
                                    c.value, 0, comp)
                    hdrs[i] = L.SDMA_TYPE_FILL_RECT
                    return
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
            except HsaError as exc:
                _log.warning("freeing a graph replica's staging buffer: %s", exc)
            self.staging = 0
