"""One AICPU thread's side of the DFX buffer protocol: the push and pop gates, the stall log and the
common-mode park.

Thread ``t`` owns ready queue ``t`` and, per subsystem kind, a pool (active buffer + free queue). At
a buffer switch it follows the device order of the DFX backpressure design:

    publish the full buffer:  header -> entry -> ownership word READY -> clear the active head -> wmb
                              -> advance queue_tails[t]   (the PUSH gate runs before any of it)
    claim a replacement:      rmb -> buffer_ptrs[head % SLOT] -> check its ownership word (FREE, this
                              thread) -> CURRENT -> active head -> head + 1  (POP gate)

Ownership (``shm_layout.dfx.buffer_owner``): a buffer is claimed only if the host handed it to this
thread (its word says FREE and names this thread); anything else in the free queue (a buffer handed
out twice, another thread's, a stale slot) is skipped and logged, never written into. The buffer header
carries the pool's running count of published records (``published_before``) so the host can check
the sequence.

(The design document clears the current buffer after the tail advance; here the active head lets
go first, because the collector counts each lane's holdings from it: see hostside.collector.top_up.)

The push gate blocks while the ready queue is full ((tail + 1) % N == head); the pop gate while the
free queue is empty (head == tail). Each gate takes ONE budget before its loop, counted in emulated
system-counter cycles at the arch's frequency (a2a3 50 MHz, a5 1 GHz): 30 s by default
(``backpressure_timeout_s``), 0 under policy ``drop``, ``block_timeout_s`` under ``block_timeout``.
A gate fails only while ownership is on the device, so the affected records are counted dropped.
Under ``common_mode`` a thread that stalls raises the shared stall flag and every thread parks at
its next record until the host has drained everything (one aligned gap). Every stall is logged in
the thread's stall log (thread, kind, gate, start, end, outcome, refill time) and, but for the
stall pool's own waits, written in-band as a stall record. That record is written after the call
that stalled (``write`` drains ``stall_backlog`` at its end), never from inside the gate: a stall
record that fills the stall pool's buffer publishes it on the ready queue, and from inside the push
gate it would take the very slot the gate just found free (the outer publish then overran the ring
by one entry, and the host saw a full queue as empty: a whole lap of entries lost).

After a backstop expires the thread checks the collector's pid: if the host is gone it drops from
then on without waiting (``host_gone``), and the lane exits or idles (``on_host_gone``). A thread the
collector marked corrupt (it no longer drains its queue) drops at once too, without waiting.
"""
from __future__ import annotations

import time

import numpy as np

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.coherence import data_written, publish, rmb, wmb
from shm_layout.sync import fetch_add32, notify, wait_until

__all__ = ["GatedThread", "Pool", "GATE_SLICE_S", "GATE_SPIN_S", "COMMON_STALL_WORD"]

#: Longest single sleep inside a gate or a common-mode park (liveness and stop checks run this often).
GATE_SLICE_S = 0.05
#: Spin before sleeping at a gate / on an empty task ring.
GATE_SPIN_S = 50e-6
#: A thread wakes the collector at most this often while it publishes (coalesced: a wake-up of a
#: sleeping process costs the waker a futex syscall that can take 100+ us on a virtual machine, and
#: the woken shard a context switch), except when its ready queue is a quarter full, before it waits
#: at a gate, when it claimed its pool's last free buffer, and when it goes idle (``wake_collector``).
COLLECTOR_WAKE_NS = 10_000_000

# pool_block fields as indices into u64 / u32 views, relative to the pool block
_PB_CUR_PTR64 = L.word_of(D.pool_block, "current_buf_ptr")
_PB_CUR_SEQ32 = L.word_of(D.pool_block, "current_buf_seq", 4)
_PB_COUNT32 = L.word_of(D.pool_block, "current_count", 4)
_PB_TOTAL64 = L.word_of(D.pool_block, "total_record_count")
_PB_DROPPED64 = L.word_of(D.pool_block, "dropped_record_count")
_PB_PUBLISHED64 = L.word_of(D.pool_block, "published_record_count")
_PB_PTRS64 = L.word_of(D.pool_block, "buffer_ptrs")
_PB_HEAD32 = L.word_of(D.pool_block, "head", 4)
_PB_TAIL32 = L.word_of(D.pool_block, "tail", 4)
_PB_REFILL64 = L.word_of(D.pool_block, "refill_ns")
_AR_ACK64 = L.word_of(D.arena_block, "ack_ns")
# a buffer: its header, then the records
_BUF_HDR = L.struct_of(D.buffer_header)
_BUF_RECORDS = D.buffer_header.itemsize
_ENTRY = L.struct_of(D.ready_entry)
# dfxctl: the common-mode stall flag and its wake word, the collector's wake word, a lane's backstops
_CTL_COMMON_STALL = L.offset_of(D.ctl_header, "common_stall")
#: ctl_header.common_stall as an index into a u32 view of dfxctl: non-zero while a thread holds the stall
COMMON_STALL_WORD = L.word_of(D.ctl_header, "common_stall", 4)
_CTL_COMMON_SEQ = L.offset_of(D.ctl_header, "common_seq")
_CTL_COLLECTOR_WAKE = L.offset_of(D.ctl_header, "collector_wake")
_LS_BACKSTOPS64 = L.word_of(D.lane_status, "backstops")
# a thread's stall log: the count, then the records
_STALL_COUNT64 = L.word_of(D.stall_log_header, "count")
_STALL_RECORDS = D.stall_log_header.itemsize
_STALL = L.struct_of(D.stall_record)


class Pool:
    """Device-side state of one (thread, kind) pool; the shared fields live in the DFX header."""

    __slots__ = ("t", "k", "off", "cap", "rsize", "dtype", "cur", "count", "seq", "total", "dropped",
                 "budget", "policy", "slots", "view", "u8", "published", "cur_own", "refill_i", "base", "rec")

    def __init__(self, g: D.DfxGeometry, t: int, k: int):
        self.t, self.k = t, k
        self.off = g.pool_off(t, k)
        self.cap = g.per_buf[k]
        self.dtype = g.rec_dtype[k]
        self.rsize = self.dtype.itemsize
        self.cur = 0          # device address of the active buffer, 0 = none
        self.count = 0        # records in the active buffer
        self.seq = 0
        self.total = 0
        self.dropped = 0
        self.budget = g.budget_cycles(k)
        self.policy = g.policy[k]
        self.slots = g.slots[k]
        self.view = None      # the active buffer's records
        self.u8 = None        # the same bytes, unstructured (a copy of whole records of this dtype)
        self.base = 0         # dfxbuf offset of the active buffer's first record
        self.rec = L.struct_of(self.dtype)    # one record, packed in place (``AicpuThread.write_one``)
        self.published = 0    # records published on the ready queue
        self.cur_own = 0      # u64 index (dfxhdr) of the active buffer's ownership word
        self.refill_i = self.off // 8 + _PB_REFILL64


class GatedThread:
    """The buffer protocol of AICPU thread ``t`` of ``lane``; ``write`` is the subclass's."""

    def __init__(self, lane, t: int):
        self.lane = lane
        self.log = lane.log
        self.g = g = lane.g
        self.t = t
        self.h32 = lane.h32
        self.h64 = lane.h64
        self.hbuf = lane.hdr.buf
        self.pools = {k: Pool(g, t, k) for k in g.kinds}
        self.wake = lane.ctl.addr + g.wake_word_off(t)
        self.col_wake = lane.ctl.addr + _CTL_COLLECTOR_WAKE
        self.col_woke_ns = 0          # when this thread last woke the collector
        self.col_unwoken = False      # it published since (the collector may not have looked yet)
        self.common_stall = lane.ctl.addr + _CTL_COMMON_STALL
        self.common_seq = lane.ctl.addr + _CTL_COMMON_SEQ
        self.i_head = g.head_off(t) // 4
        self.i_tail = g.tail_off(t) // 4
        self.tail = self.h32[self.i_tail]
        self.host_gone = False
        self.i_corrupt = g.corrupt_word(t)         # in lane.c64: the collector no longer drains us
        self.arena_ack_i = g.arena_off(t) // 8 + _AR_ACK64
        self.free_word = D.buffer_owner_word(D.BUF_FREE, t)     # a buffer the host handed to this thread
        self.status = lane.status
        self.i_backstops = lane.status_off // 8 + _LS_BACKSTOPS64
        stall = g.stall_log_off(t)
        self.stall_i = stall // 8 + _STALL_COUNT64
        self.stall_base = stall + _STALL_RECORDS
        #: in-band stall records not written yet (``flush_stalls``, after the call that stalled)
        self.stall_backlog: list = []

    def write(self, k: int, recs: np.ndarray, park: bool = True) -> None:
        """Write records of kind ``k`` (the subclass's; the stall log writes its in-band copies)."""
        raise NotImplementedError

    # -- clocks -------------------------------------------------------------------------------------
    def cycles(self) -> int:
        return time.monotonic_ns() * self.g.freq_hz // 1_000_000_000

    # -- the two gates --------------------------------------------------------------------------------
    def _gate(self, pool: Pool, gate: int, ready, release_i: int | None = None) -> bool:
        """Block until ``ready()`` or the pool's budget runs out; True when ready. ``release_i``: the
        u64 word (dfxhdr) where the host stamps the publish that ends this wait (its release time)."""
        if ready():
            return True
        if pool.budget == 0 or self.host_gone or self.lane.c64[self.i_corrupt]:
            return False
        self.wake_collector(True)       # the host ends this wait: it must know what we published
        start_ns = time.monotonic_ns()
        if ready():          # a release between the first look and the clock is no stall of ours
            return True
        deadline = self.cycles() + pool.budget      # one budget, taken once, before the loop
        ctl = self.lane.ctl_hdr
        common = pool.policy == "common_mode"
        if common:
            fetch_add32(self.common_stall, 1)
        ok = False
        try:
            while True:
                left = (deadline - self.cycles()) / self.g.freq_hz
                if left <= 0:
                    ok = bool(ready())
                    break
                if wait_until(ready, self.wake, min(left, GATE_SLICE_S), spin_s=GATE_SPIN_S,
                              slice_s=GATE_SLICE_S):
                    ok = True
                    break
                if int(ctl["stop"][0]) and not self.lane.collector_alive():
                    break
        finally:
            if common:
                fetch_add32(self.common_stall, -1)
                notify(self.common_seq)
        end_ns = time.monotonic_ns()
        release = 0
        if ok and release_i is not None:
            # the host stamps the time before it publishes, so the stamp may precede our clock by the
            # few instructions between its stamp and its publish: the release was not before the stall
            release = min(max(int(self.h64[release_i]), start_ns), end_ns)
        if pool.k != D.K_STALL:          # waits of the stall records' own pool are not stalls of a row
            self._log_stall(pool.k, gate, start_ns, end_ns, ok, release)
        if not ok:
            self.lane.c64[self.i_backstops] += 1
            if not self.lane.collector_alive():
                self.host_gone = True
        return ok

    def _log_stall(self, k, gate, start, end, ok, release=0):
        c64 = self.lane.c64
        n = c64[self.stall_i]
        off = self.stall_base + (n % D.STALL_LOG) * D.stall_record.itemsize
        outcome = D.STALL_RECOVERED if ok else D.STALL_EXPIRED
        _STALL.pack_into(self.lane.ctl.buf, off, self.t, k, gate, outcome, start, end, release)
        c64[self.stall_i] = n + 1
        st = self.status
        st["stalls"] += 1
        st["stall_ns"] += end - start
        if k != D.K_STALL and D.K_STALL in self.pools:     # the in-band copy, in the data stream, later
            self.stall_backlog.append((self.t, k, gate, outcome, start, end, release))

    def flush_stalls(self) -> None:
        """Write the in-band copies of the stalls logged so far into the stall pool (outside every
        gate: see the module). The stall pool's own waits log no stall, so this adds none."""
        if self.stall_backlog:
            r = np.array(self.stall_backlog, D.stall_record)
            self.stall_backlog.clear()
            self.write(D.K_STALL, r, park=False)

    def _common_park(self):
        """Under common_mode: wait at this thread's next record while any thread holds the stall."""
        c32 = self.lane.c32
        if not c32[COMMON_STALL_WORD]:
            return
        start = time.monotonic_ns()
        while c32[COMMON_STALL_WORD] and not self.host_gone and not int(self.lane.ctl_hdr["stop"][0]):
            wait_until(lambda: not c32[COMMON_STALL_WORD], self.common_seq, GATE_SLICE_S, spin_s=GATE_SPIN_S)
            if not self.lane.collector_alive():
                break
        self._log_stall(0, D.GATE_COMMON, start, time.monotonic_ns(), True)

    def _push(self, pool: Pool) -> bool:
        """Publish the full current buffer on the ready queue (the push gate guards it)."""
        N = self.g.N
        h32, i_head = self.h32, self.i_head
        # the counters first: a thread parked at this gate, or at the pop gate after the publish,
        # leaves total == dropped + current_count + published for the host to read
        self._store_counts(pool)
        if not self._gate(pool, D.GATE_PUSH, lambda: (self.tail + 1) % N != h32[i_head]):
            return False
        _BUF_HDR.pack_into(self.lane.buf.buf, pool.cur - D.DFX_BUF_BASE, pool.count, pool.k, pool.seq, self.t,
                           pool.published)
        _ENTRY.pack_into(self.hbuf, self.g.entry_off(self.t, self.tail), self.t, pool.k, pool.cur, pool.seq,
                         pool.count)
        self.h64[pool.cur_own] = D.buffer_owner_word(D.BUF_READY, self.t, pool.seq)
        pool.published += pool.count
        i = pool.off // 8
        # the records move from current_count to published_record_count (two stores: a live reader
        # between them sees them twice, for a few instructions)
        self.h64[i + _PB_PUBLISHED64] = pool.published
        self.h32[pool.off // 4 + _PB_COUNT32] = 0
        # the active head lets go of the buffer before the tail hands it over: the host counts a
        # lane's holdings (free entries + current buffer) and must never see a published buffer
        # still named current (it would under-fill a starving lane and leave it parked)
        self.h64[i + _PB_CUR_PTR64] = 0
        data_written()
        wmb()
        publish("queue_tails")
        self.tail = (self.tail + 1) % N
        h32[self.i_tail] = self.tail
        self.col_unwoken = True
        if 4 * ((self.tail - h32[i_head]) % N) >= N:
            self.wake_collector()           # a quarter full: drain now
        else:
            self.wake_collector_due()
        return True

    def wake_collector(self, always: bool = False) -> None:
        """Wake the collector if this thread published since its last wake (``always``: anyway)."""
        if self.col_unwoken or always:
            self.col_unwoken = False
            self.col_woke_ns = time.monotonic_ns()
            notify(self.col_wake)

    def wake_collector_due(self) -> None:
        """``wake_collector`` once ``COLLECTOR_WAKE_NS`` have passed since the last wake."""
        if self.col_unwoken and time.monotonic_ns() - self.col_woke_ns >= COLLECTOR_WAKE_NS:
            self.wake_collector()

    def _pop(self, pool: Pool) -> bool:
        """Claim a replacement buffer from the free queue (the pop gate guards it)."""
        h32 = self.h32
        i_head = pool.off // 4 + _PB_HEAD32
        i_tail = pool.off // 4 + _PB_TAIL32
        if not self._gate(pool, D.GATE_POP, lambda: h32[i_head] != h32[i_tail], pool.refill_i):
            return False
        rmb()
        head = h32[i_head]
        ptr = self.h64[pool.off // 8 + _PB_PTRS64 + head % pool.slots]
        try:
            own = self.g.owner_off(self.g.buffer_id(pool.k, ptr)) // 8
        except ValueError as exc:     # the host handed out a bad pointer: skip the entry, say so
            h32[i_head] = (head + 1) & 0xFFFFFFFF
            self.log.error("thread %d: free queue of %s gave a bad pointer: %s", self.t, D.KIND_NAMES[pool.k], exc)
            return False
        word = self.h64[own]
        if word != self.free_word:
            # not handed to this thread (handed out twice, another thread's, a stale slot): never
            # write into it
            h32[i_head] = (head + 1) & 0xFFFFFFFF
            state, owner, seq = D.buffer_owner_fields(word)
            self.log.error("thread %d: free queue of %s gave buffer %#x, which is %s (thread %d, seq %d): skipped",
                           self.t, D.KIND_NAMES[pool.k], ptr, D.BUF_STATE_NAMES.get(state, state), owner, seq)
            return False
        pool.cur = ptr
        pool.cur_own = own
        pool.count = 0
        pool.seq += 1
        pool.base = ptr - D.DFX_BUF_BASE + _BUF_RECORDS
        pool.view = np.frombuffer(self.lane.buf.buf, dtype=pool.dtype, count=pool.cap, offset=pool.base)
        pool.u8 = np.frombuffer(self.lane.buf.buf, dtype=np.uint8, count=pool.cap * pool.rsize, offset=pool.base)
        # the active head names the buffer BEFORE the head advances: a host that counts this lane's
        # holdings (free entries + current buffer) may over-count for a moment, never under-count
        self.h64[own] = D.buffer_owner_word(D.BUF_CURRENT, self.t, pool.seq)
        self.h64[pool.off // 8 + _PB_CUR_PTR64] = ptr
        h32[pool.off // 4 + _PB_CUR_SEQ32] = pool.seq
        h32[i_head] = (head + 1) & 0xFFFFFFFF
        if h32[i_head] == h32[i_tail]:
            self.wake_collector()           # the pool's last free buffer: the host refills after it drains
        return True

    def _switch(self, pool: Pool, replace: bool = True) -> None:
        """Publish the active buffer if it holds records (or count them dropped when the push gate
        fails), then claim a replacement if ``replace``."""
        if pool.count:
            if not self._push(pool):
                pool.dropped += pool.count     # never published: ownership is still ours
                pool.count = 0
                self._store_counts(pool)
                return
            pool.cur = 0                       # the published buffer now belongs to the host
            pool.count = 0
            pool.view = pool.u8 = None
        if replace:
            self._pop(pool)

    def _store_counts(self, pool: Pool) -> None:
        i = pool.off // 8
        self.h64[i + _PB_TOTAL64] = pool.total
        self.h64[i + _PB_DROPPED64] = pool.dropped
        self.h32[pool.off // 4 + _PB_COUNT32] = pool.count
