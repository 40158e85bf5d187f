"""Which engine serves which queue: the command processor's queue table, rebuilt by each engine's scan.

An engine scans the agent's queue descriptors whenever ``queue_table_gen`` changes (``scan``). The
descriptors are shared memory any client can write, so the scan trusts none of them:

* A queue is *bound* to the one engine that serves it (``bound``: slot -> QueueState, under a lock).
  An engine takes an unbound, active queue that names it, after checking its shape and indices
  (``QueueState.shape_error``); a bad one fails at once (INVALID_QUEUE_CREATION for its size, engine or
  kind, INVALID_QUEUE for its indices). While a queue is bound its ``engine``, ``kind`` and ``size``
  may not change: a change fails it (INVALID_QUEUE), so two engines never serve one queue, none is
  lost, and host and device always agree on where a packet is.
  A re-created queue (new generation or owner) on another engine waits until the old binding's engine
  has let go (every unbind bumps ``queue_table_gen``, so it is picked up on the next scan).
* A queue no engine can ever serve (an engine index out of range, a kind its engine does not run, or
  a dead engine) is failed by the *janitor*, the lowest engine still alive (FATAL for a dead engine).
* Destroy requests are acknowledged (``active = 0``) by the engine that serves the queue.
* The scan reads a descriptor field by field while its owner may re-create the slot: the state an
  engine takes (``QueueState``, read afresh) must still name this engine, kind, generation and owner,
  or the queue is left to the next scan (the creator's ``queue_table_gen`` bump). Without that check an
  SDMA engine could take a new AQL queue it had read as the slot's old SDMA queue.

When an engine dies (``engine_died``) every queue bound to it fails with HSA_STATUS_ERROR_FATAL and
its state word says ENGINE_DEAD; queues placed on it later fail at the janitor's next scan.
"""
from __future__ import annotations

import threading

from shm_layout import layouts as L
from shm_layout.sync import fetch_add

from ._ring import PacketError, QueueState

__all__ = ["QueueTable"]


class QueueTable:
    """The bindings of one command processor's queues to its engines (see the module doc)."""

    def __init__(self, cp):
        self.cp = cp
        self.agent = cp.agent
        self.n_engines = cp.n_engines
        self.max_queues = cp.topo.max_queues
        self.qmax = cp.topo.qmax
        self.bound: dict[int, QueueState] = {}
        self.dead: set[int] = set()
        self.lock = threading.Lock()

    def janitor(self) -> int:
        """The lowest live engine: it fails unservable queues and does the agent-wide housekeeping."""
        return next((e for e in range(self.n_engines + 1) if e not in self.dead), -1)

    def _fail(self, qs: QueueState, status: int, msg: str, engine: int) -> None:
        self.cp.fail_queue(qs, qs.read, PacketError(status, msg), engine, 0)

    def _unbind(self, qs: QueueState) -> bool:
        if self.bound.get(qs.q) is qs:
            del self.bound[qs.q]
            return True
        return False

    def _unservable(self, eng: int, knd: int):
        """(status, why) when no engine of this CP can serve a queue naming ``eng`` and ``knd``."""
        why = L.queue_shape_error(1, eng, knd, self.n_engines, self.qmax)
        if why is not None:
            return L.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION, f"queue descriptor: {why}"
        if eng in self.dead:
            return L.HSA_STATUS_ERROR_FATAL, f"engine {eng} of the command processor is dead"
        return None

    def scan(self, engine: int, kind: int, old: list) -> list:
        """This engine's queues (the states it already serves kept), every descriptor validated on
        the way; destroy requests acknowledged, bad queues failed (see the module doc)."""
        mine = {qs.q: qs for qs in old}
        out = []
        released = False
        qdesc = self.agent.qdesc
        with self.lock:
            janitor = self.janitor() == engine
            for q in range(self.max_queues):
                d = qdesc[q]
                own = int(d["owner"])
                cur = mine.pop(q, None)
                if L.owner_state(own) != L.Q_ACTIVE:
                    if cur is not None:
                        released |= self._unbind(cur)
                    continue
                eng, knd, gen, size = int(d["engine"]), int(d["kind"]), int(d["generation"]), int(d["size"])
                active, destroy = int(d["active"]), int(d["destroy_req"])
                if cur is not None:
                    if cur.gen == gen and cur.own == own and not cur.closed:
                        if destroy or not active:
                            cur.closed = True
                            if destroy:
                                d["active"] = 0          # acknowledge: this engine no longer touches it
                            released |= self._unbind(cur)
                        elif (eng, knd, size) != (cur.engine, cur.kind, cur.size):
                            self._fail(cur, L.HSA_STATUS_ERROR_INVALID_QUEUE,
                                       f"engine/kind/size changed under the command processor from {cur.engine}/"
                                       f"{cur.kind}/{cur.size} to {eng}/{knd}/{size}", engine)
                            released |= self._unbind(cur)
                        else:
                            out.append(cur)
                        continue
                    cur.closed = True
                    released |= self._unbind(cur)       # failed, or destroyed and re-created since
                if not active:
                    continue
                b = self.bound.get(q)
                if b is not None and b.gen == gen and b.own == own:
                    # another engine serves it: it may not move (that engine's scan would fail it too)
                    if (eng, knd, size) != (b.engine, b.kind, b.size) and not b.closed:
                        self._fail(b, L.HSA_STATUS_ERROR_INVALID_QUEUE,
                                   f"engine/kind/size changed under the command processor from {b.engine}/"
                                   f"{b.kind}/{b.size} to {eng}/{knd}/{size}", engine)
                    continue
                if (eng, knd) != (engine, kind):
                    bad = self._unservable(eng, knd) if janitor else None
                    if bad is not None:
                        if destroy:
                            d["active"] = 0          # no engine will: acknowledge for it
                        else:
                            qs = QueueState(self.agent, q)
                            if (qs.engine, qs.kind, qs.gen, qs.own) == (eng, knd, gen, own):
                                self._fail(qs, bad[0], bad[1], engine)     # (not a queue re-created since)
                    continue
                if b is not None and not b.closed:
                    continue        # the old queue of this slot is still served elsewhere: next scan
                if destroy:
                    d["active"] = 0
                    continue
                qs = QueueState(self.agent, q)
                if (qs.engine, qs.kind, qs.gen, qs.own) != (eng, knd, gen, own):
                    continue        # re-created under the scan: its creator's bump brings a new scan
                why = L.queue_shape_error(qs.size, qs.engine, qs.kind, self.n_engines, self.qmax)
                if why is not None:
                    self._fail(qs, L.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION, f"queue descriptor: {why}", engine)
                    continue
                why = qs.shape_error(self.n_engines, self.qmax)
                if why is not None:
                    self._fail(qs, L.HSA_STATUS_ERROR_INVALID_QUEUE, f"queue descriptor: {why}", engine)
                    continue
                self.bound[q] = qs
                out.append(qs)
            for cur in mine.values():
                released |= self._unbind(cur)
        if released:
            fetch_add(self.cp.queue_table_gen_addr, 1)   # a slot re-created elsewhere may be taken now
        return out

    def engine_died(self, engine: int, why: str) -> None:
        """Mark ``engine`` dead and fail every queue bound to it (FATAL)."""
        with self.lock:
            self.dead.add(engine)
            for qs in [b for b in self.bound.values() if b.engine == engine]:
                self._fail(qs, L.HSA_STATUS_ERROR_FATAL, f"engine {engine} of the command processor died: {why}",
                           engine)
                self._unbind(qs)
        fetch_add(self.cp.queue_table_gen_addr, 1)
