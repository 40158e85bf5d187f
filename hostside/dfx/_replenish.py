"""The collector's replenish thread: done buffers back into recycled lanes, recycled lanes topped up
to their watermark, ArgsDump arena acknowledgements (``Replenisher``, a part of ``Collector``).

A done buffer goes to the recycled lane of the shard with the largest deficit
(``select_recycled_shard``: its watermark, plus its starved sites, minus what it holds; the origin
shard wins ties); a lane short of its watermark gets never-used buffers (``allocate``). Each buffer
that enters a recycled lane is recorded as recycled in the host's ownership table.
"""
from __future__ import annotations

import time

from shm_layout import dfx as D
from shm_layout.layouts import offset_of
from shm_layout.sync import notify

__all__ = ["Replenisher", "REPLENISH_PERIOD_S", "REPLENISH_MIN_S"]

#: Replenish thread period: REPLENISH_MIN_S while buffers flow, doubling up to REPLENISH_PERIOD_S
#: while idle (a short site, or a batch of done buffers, wakes it at once).
REPLENISH_PERIOD_S = 0.25
REPLENISH_MIN_S = 0.002

_AB_COMPLETED = offset_of(D.arena_block, "completed_payload_count")
_AB_ACK_NS = offset_of(D.arena_block, "ack_ns")


class Replenisher:
    """The replenish thread's methods of ``Collector`` (which holds the state they use)."""

    def watermark(self, k: int, s: int) -> int:
        """Buffers shard s's recycled lane of kind k should hold: enough to refill each of its
        lanes' free queues once, so that the steady-state top-up finds what it needs."""
        return sum(min(self.g.slots[k], self.g.slab[(t, k)][1]) for t in self.queues_of(s))

    def deficit(self, k: int, s: int) -> int:
        """How many buffers shard s's recycled lane of kind k lacks: its watermark plus its starved
        (short) sites minus what it holds. A starved shard has the largest deficit by construction."""
        return self.watermark(k, s) + self.short_count.get((k, s), 0) - len(self.recycled[(k, s)])

    def select_recycled_shard(self, k: int, origin: int) -> int:
        """The recycled lane a done buffer goes to: the largest deficit, the origin shard winning ties."""
        best, best_def = origin, self.deficit(k, origin)
        for s in range(self.S):
            d = self.deficit(k, s)
            if d > best_def:
                best, best_def = s, d
        return best

    def drain_done_into_recycled(self) -> int:
        n = 0
        while True:
            try:
                ptr, k, _t, origin = self.done.popleft()
            except IndexError:
                return n
            self.table.recycle(self.g.buffer_id(k, ptr))
            self.recycled[(k, self.select_recycled_shard(k, origin))].append(ptr)
            n += 1

    def top_up_recycled(self) -> None:
        for (k, s), lane in self.recycled.items():
            want = self.watermark(k, s) - len(lane)
            for t in self.queues_of(s):
                while want > 0:
                    b = self.allocate(t, k)
                    if b is None:
                        break
                    self.table.recycle(self.g.buffer_id(k, b))
                    lane.append(b)
                    want -= 1

    def publish_arena_acks(self) -> None:
        """completed_payload_count of every thread's arena, its time (ack_ns) stored first."""
        if D.K_ARGS_DUMP not in self.g.kinds:
            return
        for t in range(self.g.T):
            ao = self.g.arena_off(t)
            off = ao + _AB_COMPLETED
            if int(self.h64[off // 8]) != self.completed_payloads[t]:
                self.host_put_u64(ao + _AB_ACK_NS, time.monotonic_ns())
                self.host_put_u64(off, self.completed_payloads[t])
                self.wake_thread(t)

    def replenish_main(self) -> None:
        period = REPLENISH_MIN_S
        while self.running:
            moved = self.drain_done_into_recycled()
            self.top_up_recycled()
            self.publish_arena_acks()
            if moved:
                notify(self.collector_wake)   # shards with short sites retry now
                period = REPLENISH_MIN_S
            else:                             # back off while nothing flows; a short site wakes it
                self.done_event.wait(period)
                self.done_event.clear()
                period = min(period * 2, REPLENISH_PERIOD_S)
        self.drain_done_into_recycled()
        self.publish_arena_acks()
