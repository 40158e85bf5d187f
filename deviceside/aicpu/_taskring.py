"""Device-local task rings: the command processor hands every executed packet to an AICPU lane.

One single-producer, single-consumer ring per (agent, AQL engine) in the ``dfxctl`` segment
(``shm_layout.dfx.task_ring_header``, then ``TASK_RING`` ``task_event``s); ring ``r`` is consumed by
AICPU thread ``r % T``. The CP engine writes the event, then advances ``tail`` and notifies the
thread's wake word; the thread reads events up to ``tail`` and advances ``head``. A full ring never
blocks the GPU: the event is dropped and counted in ``dropped``, which the lane statistics report.

``TaskRings`` is the producer (used by the command processor through ``deviceside.aicpu``); the
consumer is ``AicpuThread.poll_tasks``. Both use the word indices and the event struct below.
"""
from __future__ import annotations

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.sync import notify

__all__ = ["TaskRings", "EVENT", "EVENTS_OFF", "EVENT_BYTES", "HEAD", "TAIL", "DROPPED"]

#: One task event, packed and unpacked whole (fields in task_event order; ``grid`` is three values).
EVENT = L.struct_of(D.task_event)
EVENT_BYTES = D.task_event.itemsize
#: Where the events start, from the ring's header.
EVENTS_OFF = D.task_ring_header.itemsize
#: Fields of the ring header, as indices into a u64 view relative to the header's first word.
HEAD = L.word_of(D.task_ring_header, "head")
TAIL = L.word_of(D.task_ring_header, "tail")
DROPPED = L.word_of(D.task_ring_header, "dropped")


class TaskRings:
    """The producer side of one agent's task rings: one ring per AQL engine."""

    def __init__(self, pm, g, agent: int, n_engines: int):
        self.g = g
        self.ctl = pm.segs["dfxctl"]
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.rings = []       # per engine: (events offset, header's u64 index, consumer's wake word address)
        for e in range(n_engines):
            r = g.ring_of(agent, e, n_engines)
            base = g.task_ring_off(r)
            t = g.thread_of_ring(r)
            self.rings.append((base + EVENTS_OFF, base // 8, self.ctl.addr + g.wake_word_off(t)))

    def emit(self, engine, did, kobj, start, end, fetch, prev, grid, karg: bytes, ptype: int) -> bool:
        """Publish one executed packet on ``engine``'s ring; False when it was dropped (ring full)."""
        if engine >= len(self.rings):
            return False
        events, hi, wake = self.rings[engine]
        c64 = self.c64
        tail = c64[hi + TAIL]
        if tail - c64[hi + HEAD] >= D.TASK_RING:
            c64[hi + DROPPED] += 1
            return False
        EVENT.pack_into(self.ctl.buf, events + (tail % D.TASK_RING) * EVENT_BYTES, did, kobj, start, end, fetch,
                        prev, grid[0], grid[1], grid[2], len(karg), ptype, karg)
        c64[hi + TAIL] = tail + 1
        notify(wake)
        return True
