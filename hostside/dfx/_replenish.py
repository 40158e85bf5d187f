"""The collector's replenish thread: never-used buffers staged in each pool's recycled lane, ArgsDump
arena acknowledgements (``Replenisher``, a part of ``Collector``).

Done buffers do not go through this thread: the drain shard that collected a buffer puts it back
into the recycled lane of its own (thread, kind) pool and hands it out again at once if that thread's
free queue was short (``Collector.process_entry``), so a starved lane never waits for this thread,
nor for another shard. A shard whose pool lane is dry allocates a never-used buffer of that pool
itself; this thread only stages them ahead (``top_up_recycled``), and each buffer it stages is
recorded as recycled in the host's ownership table.
"""
from __future__ import annotations

import time

from shm_layout import dfx as D
from shm_layout.layouts import offset_of

__all__ = ["Replenisher", "REPLENISH_PERIOD_S", "REPLENISH_MIN_S"]

#: Replenish thread period: REPLENISH_MIN_S while buffers flow, doubling up to REPLENISH_PERIOD_S
#: while idle (a short site, or a batch of collected buffers, wakes it at once).
REPLENISH_PERIOD_S = 0.25
REPLENISH_MIN_S = 0.002

_AB_COMPLETED = offset_of(D.arena_block, "completed_payload_count")
_AB_ACK_NS = offset_of(D.arena_block, "ack_ns")


class Replenisher:
    """The replenish thread's methods of ``Collector`` (which holds the state they use)."""

    def proactive_replenish(self) -> None:
        """Startup only, before any shard runs: fill every free queue (may allocate for every shard)."""
        for t in range(self.g.T):
            for k in self.g.kinds:
                for _ in range(min(self.g.slots[k], self.g.slab[(t, k)][1])):
                    b = self.allocate(t, k)
                    if b is None:
                        break
                    self.push_free(t, k, b)

    def watermark(self, t: int, k: int) -> int:
        """Buffers pool (t, k)'s recycled lane should hold: enough to refill its free queue once."""
        return min(self.g.slots[k], self.g.slab[(t, k)][1])

    def top_up_recycled(self) -> None:
        """Stage never-used buffers in every pool's recycled lane, up to its watermark."""
        for (t, k), lane in self.recycled.items():
            want = self.watermark(t, k) - len(lane)
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
            moved, self.flowed = self.flowed, 0
            self.top_up_recycled()
            self.publish_arena_acks()
            if moved:
                period = REPLENISH_MIN_S
            else:                             # back off while nothing flows; a short site wakes it
                self.done_event.wait(period)
                self.done_event.clear()
                period = min(period * 2, REPLENISH_PERIOD_S)
        self.publish_arena_acks()
