"""Buffer ownership, host side, and the host's bookkeeping of what it lost.

Every DFX buffer is, at any time, in exactly one place: on the device (handed to one AICPU thread:
in its free queue, its current buffer, or published on its ready queue), with the collector (taken
off a ready queue, its records being written), or recycled (in its pool's recycled lane, waiting to
be handed to the same thread again); or never allocated. A buffer belongs to one (thread, kind) pool
(its slab, ``home``) and is only ever handed to that thread. ``BufferTable`` is the host's own record
of it, which nothing on the device can write. The device keeps its side in the shared ownership words
(``shm_layout.dfx.buffer_owner``: FREE, CURRENT, READY, COLLECTED). The collector takes a buffer off
a ready queue only when both sides agree: the host handed it to that very thread and has not had it
back since, and the device's word says READY with the entry's seq. Anything else is a duplicated,
foreign or stale entry: rejected (counted, with its cause), and the buffer is not touched, so one
lane's bad entry can never hand another lane's live buffer to a third.

The loss words (``shm_layout.dfx.pool_loss``, in dfxctl) are written by the collector and, after its
death, by the supervisor's salvage: both go through ``reject`` and ``check_sequence`` here.
"""
from __future__ import annotations

from shm_layout import dfx as D

__all__ = ["BufferTable", "H_UNALLOCATED", "H_DEVICE", "H_COLLECTOR", "H_RECYCLED", "H_STATE_NAMES",
           "reject", "check_sequence", "add_loss"]

H_UNALLOCATED, H_DEVICE, H_COLLECTOR, H_RECYCLED = 0, 1, 2, 3
H_STATE_NAMES = {0: "never allocated", 1: "on the device", 2: "with the collector", 3: "recycled"}


class BufferTable:
    """The host's record of every buffer: its place (H_*) and, on the device, the thread that has it.

    Single writer per buffer at a time (the shard that took it, the replenish thread that recycles
    it, the shard that hands it out); list stores are atomic under the GIL.
    """

    def __init__(self, g):
        self.g = g
        self.state = [H_UNALLOCATED] * g.n_buffers
        self.owner = [-1] * g.n_buffers
        #: the pool seq of the last use of each buffer the host took back (a pool's seqs only grow)
        self.seq = [0] * g.n_buffers
        #: the thread whose pool (slab) each buffer belongs to: where it goes back when it is done
        self.home = [-1] * g.n_buffers
        for (t, _k), (_off, n) in g.slab.items():
            first = g.first_id[(t, _k)]
            self.home[first:first + n] = [t] * n

    def hand(self, bid: int, t: int) -> None:
        self.owner[bid] = t
        self.state[bid] = H_DEVICE

    def take(self, bid: int, seq: int = 0) -> None:
        self.state[bid] = H_COLLECTOR
        if seq:
            self.seq[bid] = seq

    def recycle(self, bid: int) -> None:
        self.owner[bid] = -1
        self.state[bid] = H_RECYCLED

    def check_returned(self, bid: int, t: int, seq: int | None = None):
        """None if buffer ``bid`` may come back from thread ``t`` (as the use ``seq`` of its pool, if
        given); else (LOSS_* cause, why)."""
        st = self.state[bid]
        if st != H_DEVICE:
            return D.LOSS_DUPLICATE, f"the buffer is {H_STATE_NAMES[st]} (a duplicated or stale entry)"
        if self.owner[bid] != t:
            return D.LOSS_FOREIGN, f"the buffer was handed to thread {self.owner[bid]}, not to thread {t}"
        if seq is not None and seq <= self.seq[bid]:
            # back on the device with the same thread (a collected buffer is handed out again at once),
            # but this use was collected already
            return D.LOSS_DUPLICATE, (f"its use seq {seq} was collected already (last seq {self.seq[bid]}): "
                                      f"a duplicated or stale entry")
        return None


def add_loss(c64, g, t: int, k: int, field: str, n: int, cause: int = 0) -> int:
    """Add ``n`` to ``field`` of pool (t, k)'s loss words and set ``cause``; returns the new value."""
    i = g.loss_word(t, k, field)
    v = int(c64[i]) + n
    c64[i] = v
    if cause:
        j = g.loss_word(t, k, "causes")
        c64[j] = int(c64[j]) | cause
    return v


def reject(c64, g, t: int, k: int | None, cause: int) -> None:
    """Count one rejected ready entry of thread t: against pool (t, k), or against the thread when the
    entry names no pool of it."""
    if k is None or (t, k) not in g.slab:
        i = g.rejected_word(t)
        c64[i] = int(c64[i]) + 1
        return
    add_loss(c64, g, t, k, "rejected", 1, cause)


def check_sequence(c64, g, t: int, k: int, collected: int, published_before: int) -> int:
    """Account one accepted buffer of pool (t, k) that starts at record ``published_before`` of the
    pool's published sequence, when ``collected`` records of it have been collected so far. The host
    has accounted ``collected + lost - overlap`` records of the sequence: a buffer that starts later
    reveals a gap (records lost: a deflated count, a lost or rejected entry), one that starts earlier
    an overlap (records collected twice: an inflated count). Returns the gap (negative: overlap)."""
    lost = int(c64[g.loss_word(t, k, "lost")])
    overlap = int(c64[g.loss_word(t, k, "overlap")])
    gap = published_before - (collected + lost - overlap)
    if gap > 0:
        c64[g.loss_word(t, k, "lost")] = lost + gap
    elif gap < 0:
        c64[g.loss_word(t, k, "overlap")] = overlap - gap
    return gap
