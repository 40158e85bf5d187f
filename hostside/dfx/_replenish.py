"""The collector's replenish thread: never-used buffers staged in each pool's recycled lane
(``Replenisher``, a part of ``Collector``); and the ArgsDump arena acknowledgements, which the drain
shard of each thread publishes right after it collected its payloads (``publish_arena_ack``).

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
#: while idle (a short site, or a batch of collected buffers, wakes it at once). Staging ahead is all
#: it does (a shard whose pool lane is dry allocates itself): no need to turn more often.
REPLENISH_PERIOD_S = 0.25
REPLENISH_MIN_S = 0.02

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

    def publish_arena_ack(self, t: int) -> None:
        """completed_payload_count of thread t's arena, its time (ack_ns) stored first. Called by the
        drain shard of t right after it collected payloads (its only writer: the count never goes
        back), so a lane waiting at an arena lap is released at once."""
        ao = self.g.arena_off(t)
        off = ao + _AB_COMPLETED
        if int(self.h64[off // 8]) != self.completed_payloads[t]:
            self.host_put_u64(ao + _AB_ACK_NS, time.monotonic_ns())
            self.host_put_u64(off, self.completed_payloads[t])
            self.wake_thread(t)

    def publish_arena_acks(self) -> None:
        """``publish_arena_ack`` of every thread (a collector driven by hand, without its shards)."""
        if D.K_ARGS_DUMP in self.g.kinds:
            for t in range(self.g.T):
                self.publish_arena_ack(t)

    def replenish_main(self) -> None:
        period = REPLENISH_MIN_S
        while self.running:
            moved, self.flowed = self.flowed, 0
            self.top_up_recycled()
            if moved:
                period = REPLENISH_MIN_S
            else:
                period = min(period * 2, REPLENISH_PERIOD_S)  # back off while nothing flows
            self.done_event.wait(period)      # a short site, or a batch of collected buffers, wakes it
            self.done_event.clear()
