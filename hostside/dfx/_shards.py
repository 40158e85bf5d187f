"""The drain shards' fault-injection words (``hdemu run``'s slow collector and shard stall), a part of
the collector (``Collector`` inherits ``ShardControl``).

* ``ctl_header.drain_delay_ns``: after each buffer it drains, a shard sleeps that long (capped at
  ``MAX_DRAIN_DELAY_NS``): a slow collector. Unset, it costs one word read a buffer.
* ``shard_control[s].stall_until_ns``: a CLOCK_MONOTONIC deadline; while it is ahead shard s drains
  nothing, asleep on the collector's wake word (woken early when the word changes, and at stop), then
  clears it itself (cas: a new deadline written meanwhile is kept). Unset, it costs one word read a
  turn of the shard's loop. The shard stalls between sweeps: a sweep under way finishes first.
* ``shard_control[s].buffers`` / ``stalls`` / ``stall_ns``: what the shard did, for the run's evidence.
"""
from __future__ import annotations

import time

from shm_layout import dfx as D
from shm_layout.layouts import offset_of
from shm_layout.sync import cas, wait_until

__all__ = ["ShardControl", "shard_words", "MAX_DRAIN_DELAY_NS"]

#: The longest delay per buffer the ``drain_delay_ns`` word can ask for (a bad value must not hang a shard).
MAX_DRAIN_DELAY_NS = 1_000_000_000
#: Longest sleep slice of a stalled shard (it re-reads its word after each).
_STALL_SLICE_S = 0.25
_DELAY_W = offset_of(D.ctl_header, "drain_delay_ns") // 8                       # a u64 word of dfxctl
_SC = {f: offset_of(D.shard_control, f) // 8 for f in D.shard_control.names}    # u64 words of one shard_control


def shard_words(g, n_shards: int) -> list[dict]:
    """Per shard, the u64 index into dfxctl of each ``shard_control`` field."""
    return [{f: g.shard_control_off(s) // 8 + w for f, w in _SC.items()} for s in range(n_shards)]


class ShardControl:
    """Needs ``c64`` (a u64 view of dfxctl), ``ctl`` (the segment), ``shard_w``, ``collector_wake``, ``running``."""

    def drained_one(self, s: int) -> None:
        """Shard s processed one ready entry: count it; sleep if the collector is made slow."""
        self.c64[self.shard_w[s]["buffers"]] += 1
        delay = self.c64[_DELAY_W]
        if delay:
            time.sleep(min(delay, MAX_DRAIN_DELAY_NS) / 1e9)   # the injected delay itself, not a wait for anything

    def stall_word(self, s: int) -> int:
        return self.c64[self.shard_w[s]["stall_until_ns"]]

    def stall_shard(self, s: int, until: int) -> None:
        """Drain nothing until ``until`` (CLOCK_MONOTONIC ns), asleep; then clear the word."""
        w = self.shard_w[s]
        i = w["stall_until_ns"]
        addr = self.ctl.addr + i * 8
        t0 = time.monotonic_ns()
        self.c64[w["stalls"]] += 1
        while self.running:
            now = time.monotonic_ns()
            if now >= until and cas(addr, until, 0):
                break
            if self.c64[i] != until:            # rewritten meanwhile: honour the new deadline (0: none)
                until = self.c64[i]
                if not until:
                    break
                continue
            left = max(0.0, (until - now) / 1e9)
            wait_until(lambda: not self.running or self.c64[i] != until, self.collector_wake, left,
                       spin_s=0.0, slice_s=max(0.001, min(left, _STALL_SLICE_S)))
        self.c64[w["stall_ns"]] += time.monotonic_ns() - t0
