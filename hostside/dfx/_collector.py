"""The host DFX collector process: ``python -m hostside.dfx BOOT_NAME [OUT_DIR]``.

Threads:
* drain shards ``s = 0 .. S-1``: shard ``s`` serves ready queues ``q = s, s + S, ...`` (start,
  stride) and is the only runtime writer of those threads' free queues and recycled lanes.
  ``process_entry`` checks the entry and the buffer's ownership on both sides (``_ownership``),
  reads the buffer from the device (non-SVM), checks its header and the pool's published sequence,
  tops up the free queue the entry came from (``top_up``: that pool's recycled lane, else a
  never-used buffer of it), appends the records to ``<kind>.bin``, then puts the buffer back in its
  own pool's lane (``recycle``), handing it out at once if that free queue was short. A buffer only
  circulates in its own (thread, kind) pool, so it is never stranded with a shard whose threads are
  all at their cap while its own thread starves, and no thread waits on another shard or on the
  replenish thread for its buffers. A top-up that runs dry records a *short site*, retried after
  every sweep.
* the replenish thread: stages never-used buffers in each pool's recycled lane (``top_up_recycled``);
  a shard acknowledges its threads' ArgsDump payloads itself once collected (``publish_arena_ack``).
* startup ``proactive_replenish`` fills every free queue before any shard exists.

Coherence: every host read of a device-written field goes through ``read_range_from_device`` and
every host write through ``write_range_to_device``, each of exactly the bytes it touches (no-ops
under SVM). Every entry, pointer, count and payload read from the device is validated: a bad entry
is rejected (counted against its pool with its cause, its buffer untouched unless the device did
release it), a bad payload is skipped (the record is kept), and only a queue index outside its ring,
or an unexpected error while draining a thread, marks that thread *corrupt* (reported, no longer
drained). The other threads keep flowing.

Durability: the outputs are unbuffered; a buffer's records (and payloads) are written to the file
before its records are counted ``collected``, so whatever is counted is in the file even if the
collector is killed right after. Then the buffer's ownership word says COLLECTED and the queue head
moves: the supervisor's salvage of a dead collector skips what it collected. A SIGKILL between the
file write and the count leaves that buffer in the file twice (salvage appends it again), never one
counted and missing; one in the few instructions between the count and the word makes salvage count
it again too, and the accounting reports it (an overlap of the pool's published sequence).

Fault injection (``_shards``): a delay per buffer drained, a stall of one shard (one word read each).

Supervision: each drain shard contains the errors of the thread it drains (that thread is marked
corrupt, the rest go on), and the main thread restarts a shard or the replenish thread that died.

Shutdown handshake: the supervisor sets ``stop``; lanes publish their partial buffers and report
FLUSHED (or exit); the collector drains until every lane is flushed or gone and every ready queue is
empty, collects the current buffers of lanes that died (``adopt_dead_lanes``), writes the outputs,
and reports DONE. SIGINT is ignored (a terminal's Ctrl-C is the supervisor's to handle), SIGTERM is
a stop. ``quiesce_req = g`` makes it drain everything queued and answer ``quiesce_ack = g``.
"""
from __future__ import annotations

import collections
import json
import os
import signal as _signal
import sys
import threading
import time

import numpy as np

from shm_layout import dfx as D
from shm_layout.layouts import offset_of, struct_of
from shm_layout.coherence import SharedRegion, data_written, publish, rmb, wmb
from shm_layout.sync import notify, pid_alive, wait_until
from shm_layout.errors import HdemuError, PlatformError
from shm_layout.logs import configure_stderr, role_logger
from shm_layout.topology import PlatformMap

from ._accounting import accounting
from ._deadlanes import DeadLanes
from ._ownership import BufferTable, add_loss, check_sequence, reject
from ._readers import read_stalls
from ._shards import ShardControl, shard_words
from ._replenish import REPLENISH_MIN_S, REPLENISH_PERIOD_S, Replenisher  # noqa: F401 (periods re-exported)
from ._swimlane import write_swimlane

_log = role_logger("collector")

#: Longest sleep of an idle drain shard (a lane's publish wakes it at once through collector_wake).
SHARD_SLICE_S = 0.25
#: Period of the collector's main thread (quiesce requests, the stop handshake).
CONTROL_PERIOD_S = 0.05
#: After ``stop``, the longest wait for lanes to flush before the collector gives up on them.
FLUSH_TIMEOUT_S = 60.0
#: Rejected entries logged per thread (then every LOG_EVERY-th): a lane gone mad must not flood stderr.
LOG_FIRST, LOG_EVERY = 8, 1000

# Everything read or written by hand below is derived from the declared layouts, once, here.
_ENTRY = struct_of(D.ready_entry)
_ENTRY_BYTES = D.ready_entry.itemsize
_BUF_HDR = struct_of(D.buffer_header)            # record_count, kind, seq, thread
_BUF_RECORDS = D.buffer_header.itemsize          # a buffer's records follow its header
_PB_CUR_PTR = offset_of(D.pool_block, "current_buf_ptr")
_PB_PTR_BYTES = D.pool_block.fields["buffer_ptrs"][0].base.itemsize   # one free-queue slot
_CTL_COLLECTOR_WAKE = offset_of(D.ctl_header, "collector_wake")
_PAYLOAD_HDR = struct_of(D.payload_file_header)  # task_id, thread, length (args_payload.bin)


class CorruptLane(Exception): """A thread's queue indices are broken: it is no longer drained."""  # noqa: E701


def _write_all(f, data) -> None:
    """Write all of ``data`` to the unbuffered file ``f`` (a raw write may be short)."""
    mv = memoryview(data).cast("B")
    while len(mv):
        mv = mv[f.write(mv):]


class Collector(Replenisher, DeadLanes, ShardControl):
    """The collector of one platform's DFX pipeline (the replenish thread's part: ``Replenisher``; the
    current buffers of dead lanes: ``DeadLanes``; the shards' fault-injection words: ``ShardControl``)."""

    def __init__(self, boot_name: str, out_dir: str | None = None):
        self.pm = PlatformMap.attach(boot_name)
        g = self.pm.topo.dfx
        if g is None:
            raise PlatformError(f"profiling is not enabled on platform {boot_name}")
        self.g = g
        self.boot_name = boot_name
        self.out_dir = out_dir or g.prof["output_dir"] or f"hdemu-dfx-{boot_name}"
        hdr_seg, buf_seg, self.ctl = self.pm.segs["dfxhdr"], self.pm.segs["dfxbuf"], self.pm.segs["dfxctl"]
        dev_hdr, dev_buf = hdr_seg.u8[:g.hdr_bytes], buf_seg.u8[:g.buf_region_bytes]
        buf_seg.populate(write=False)        # read buffer after buffer: no first-touch page faults
        self.hdr = SharedRegion(dev_hdr, None if g.svm else np.zeros(g.hdr_bytes, np.uint8), g.svm)
        self.buf = SharedRegion(dev_buf, None if g.svm else np.zeros(g.buf_region_bytes, np.uint8), g.svm)
        self.h32 = self.hdr.host.view(np.uint32)
        self.h64 = self.hdr.host.view(np.uint64)
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.wake_addrs = [self.ctl.addr + g.wake_word_off(t) for t in range(g.T)]
        self.collector_wake = self.ctl.addr + _CTL_COLLECTOR_WAKE
        self.collected_w = {(t, k): g.collected_word(t, k) for t in range(g.T) for k in g.kinds}
        self.ctl_hdr = self.ctl.view(D.ctl_header, 0, 1)
        self.S = min(g.prof["drain_shards"], g.T)
        self.shard_w = shard_words(g, self.S)
        self.heads = [0] * g.T                       # host-owned queue_heads (cached)
        self.free_tails = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        self.allocated = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        # per (thread, kind) pool: its buffers waiting to be handed to that thread again (the shard that
        # serves the thread pops and appends; the replenish thread stages never-used ones)
        self.recycled = {(t, k): collections.deque() for t in range(g.T) for k in g.kinds}
        self.flowed = 0                              # buffers collected since the replenish thread's last round
        self.done_event = threading.Event()          # wakes the replenish thread (arena acks, staging)
        self.alloc_lock = threading.Lock()
        self.out_lock = threading.Lock()
        self.corrupt: dict[int, str] = {}
        self.collected = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        self.completed_payloads = [0] * g.T
        self.stats = {"entries": 0, "buffers_bytes": 0, "short_sites": 0, "retries_ok": 0, "sweeps": 0,
                      "rejected": 0, "bad_payloads": 0, "adopted": 0, "restarts": 0}
        self.table = BufferTable(g)
        self.rejections = [0] * g.T
        self.threads: dict[str, threading.Thread] = {}
        self.running = True
        self.files = {}
        self.skip_writeback = g.prof["skip_writeback_thread"]
        self.quiesce_seen = 0

    # -- coherence helpers ----------------------------------------------------------------------------
    def dev_u32(self, off: int) -> int:
        self.hdr.read_range_from_device(off, 4)
        return int(self.h32[off // 4])

    def dev_u64(self, off: int) -> int:
        self.hdr.read_range_from_device(off, 8)
        return int(self.h64[off // 8])

    def host_put_u32(self, off: int, v: int, *, t: int | None = None) -> None:
        self.h32[off // 4] = v
        if t is not None and t == self.skip_writeback:
            return            # injected bug: this write never reaches a non-SVM device
        self.hdr.write_range_to_device(off, 4)

    def host_put_u64(self, off: int, v: int) -> None:
        self.h64[off // 8] = v
        self.hdr.write_range_to_device(off, 8)

    def wake_thread(self, t: int) -> None:
        notify(self.wake_addrs[t])

    def wake_all(self) -> None:
        """Wake the drain shards (and every AICPU thread parked at a gate)."""
        notify(self.collector_wake)
        for t in range(self.g.T):
            self.wake_thread(t)

    # -- outputs --------------------------------------------------------------------------------------
    def _open_outputs(self):
        os.makedirs(self.out_dir, exist_ok=True)
        # unbuffered: what is counted collected has been written (see the module: durability)
        for k in self.g.kinds:
            self.files[k] = open(os.path.join(self.out_dir, f"{D.KIND_NAMES[k]}.bin"), "wb", buffering=0)
        self.files["payload"] = open(os.path.join(self.out_dir, "args_payload.bin"), "wb", buffering=0)
        fmt = {D.KIND_NAMES[k]: self.g.rec_dtype[k].descr for k in self.g.kinds}
        with open(os.path.join(self.out_dir, "format.json"), "w") as f:
            json.dump({"kinds": fmt, "arch": self.g.arch}, f)

    def write_records(self, k: int, recs) -> None:
        """Append records of kind k to ``<kind>.bin`` (unbuffered: written when this returns)."""
        _write_all(self.files[k], recs)

    def publish_collected(self, t, k, n):
        self.collected[(t, k)] += n
        self.c64[self.collected_w[(t, k)]] = self.collected[(t, k)]

    # -- buffers ----------------------------------------------------------------------------------------
    def allocate(self, t: int, k: int):
        """A never-used buffer of pool (t, k), or None when its pool is exhausted (the caller hands it
        out or recycles it)."""
        with self.alloc_lock:
            i = self.allocated[(t, k)]
            if i >= self.g.slab[(t, k)][1]:
                return None
            self.allocated[(t, k)] = i + 1
        return self.g.buffer_addr(t, k, i)

    def shard_of(self, t: int) -> int:
        return t % self.S

    def push_free(self, t: int, k: int, addr: int) -> None:
        """Hand buffer ``addr`` to thread t: its slot, its ownership word (FREE, t) and the refill
        time, then (wmb) the tail that publishes them."""
        g = self.g
        bid = g.buffer_id(k, addr)
        self.table.hand(bid, t)
        po = g.pool_off(t, k)
        tail = self.free_tails[(t, k)]
        slot_off = po + D.PB_PTRS + (tail % g.slots[k]) * _PB_PTR_BYTES
        self.h64[slot_off // 8] = addr
        self.hdr.write_range_to_device(slot_off, _PB_PTR_BYTES)
        self.host_put_u64(g.owner_off(bid), D.buffer_owner_word(D.BUF_FREE, t))
        # the refill time before the tail: a thread that sees the tail move sees its time
        self.host_put_u64(po + D.PB_REFILL, time.monotonic_ns())
        data_written()
        wmb()
        publish("free_queue.tail")
        tail = (tail + 1) & 0xFFFFFFFF
        self.free_tails[(t, k)] = tail
        self.host_put_u32(po + D.PB_TAIL, tail, t=t)

    def recycle(self, bid: int, k: int, ptr: int) -> None:
        """Buffer ``bid`` (done: its records are written, its word says COLLECTED) back into the
        recycled lane of its own pool, to be handed to the same thread again."""
        home = self.table.home[bid]
        self.table.recycle(bid)
        self.recycled[(home, k)].append(ptr)

    def top_up(self, t: int, k: int) -> bool:
        """Fill the free queue of (t, k) out of that pool's recycled lane, then with never-used buffers
        of that pool; False when neither has one (every buffer of the pool is out)."""
        po = self.g.pool_off(t, k)
        head = self.dev_u32(po + D.PB_HEAD)
        if (self.free_tails[(t, k)] - head) & 0xFFFFFFFF > self.g.slots[k]:
            raise CorruptLane(f"free queue head {head} of {D.KIND_NAMES[k]} is outside [tail - "
                              f"{self.g.slots[k]}, tail = {self.free_tails[(t, k)]}]")
        holding = 1 if self.dev_u64(po + _PB_CUR_PTR) else 0   # the lane's current buffer (read after the head)
        lane = self.recycled[(t, k)]
        pushed = False
        ok = True
        # a lane never holds more than its own pool (free entries + current buffer)
        target = min(self.g.slots[k], self.g.slab[(t, k)][1] - holding)
        while (self.free_tails[(t, k)] - head) & 0xFFFFFFFF < target:
            try:
                b = lane.popleft()
            except IndexError:
                b = self.allocate(t, k)
                if b is None:
                    ok = False
                    break
            self.push_free(t, k, b)
            pushed = True
        if pushed:
            self.wake_thread(t)
        return ok

    # -- drain shards ------------------------------------------------------------------------------------
    def process_entry(self, s: int, t: int, entry, short: list) -> None:
        """One ready entry of thread t: take its buffer if both sides agree it was released by t,
        write its records if its header is sound, count them collected, recycle the buffer."""
        core, k, ptr, seq, count = entry
        g = self.g
        if core != t or k not in g.kinds:
            return self.reject(t, None if k not in g.kinds else k, D.LOSS_MALFORMED,
                               f"entry names core {core} and kind {k} on the ready queue of thread {t}")
        try:
            bid = g.buffer_id(k, ptr)
        except ValueError as exc:
            return self.reject(t, k, D.LOSS_MALFORMED, str(exc))
        bad = self.table.check_returned(bid, t, seq)
        if bad is not None:
            return self.reject(t, k, bad[0], f"buffer {ptr:#x} (seq {seq}): {bad[1]}")
        own = g.owner_off(bid)
        word = self.dev_u64(own)
        if word != D.buffer_owner_word(D.BUF_READY, t, seq):
            state, owner, wseq = D.buffer_owner_fields(word)
            return self.reject(t, k, D.LOSS_UNRELEASED,
                               f"buffer {ptr:#x} (seq {seq}) is {D.BUF_STATE_NAMES.get(state, state)} on the "
                               f"device (thread {owner}, seq {wseq}), not ready")
        self.table.take(bid, seq)                # the buffer is the host's now, whatever its contents
        off = ptr - D.DFX_BUF_BASE
        self.buf.read_range_from_device(off, _BUF_HDR.size)
        hcount, bk, bseq, bthread, before = _BUF_HDR.unpack_from(self.buf.host, off)
        cap = g.per_buf[k]
        sound = hcount == count and count <= cap and bk == k and bseq == seq and bthread == t
        try:
            if not self.top_up(t, k):            # refill the device first: it may be parked
                if (t, k) not in short:
                    short.append((t, k))
                self.stats["short_sites"] += 1
        except CorruptLane as exc:
            self.mark_corrupt(t, str(exc))
        if sound:
            dt = g.rec_dtype[k]
            nbytes = count * dt.itemsize
            rec0 = off + _BUF_RECORDS
            self.buf.read_range_from_device(rec0, nbytes)
            recs = self.buf.host[rec0:rec0 + nbytes].view(dt)
            with self.out_lock:                  # on disk before it is counted (see the module)
                if k == D.K_ARGS_DUMP and count:
                    self._collect_payloads(t, recs)
                self.write_records(k, recs)
            if k == D.K_ARGS_DUMP and count:
                self.publish_arena_ack(t)        # a lane may wait at an arena lap for these
            gap = check_sequence(self.c64, g, t, k, self.collected[(t, k)], before)
            if gap:
                self._log_rejection(t, "pool %s of thread %d: buffer seq %d starts at record %d of the published "
                                    "sequence, %d %s than expected (%s)", D.KIND_NAMES[k], t, seq, before, abs(gap),
                                    "later" if gap > 0 else "earlier",
                                    "records lost" if gap > 0 else "records collected twice")
            self.publish_collected(t, k, count)
            self.stats["buffers_bytes"] += nbytes
        else:
            self.reject(t, k, D.LOSS_MALFORMED,
                        f"buffer {ptr:#x} header (count {hcount}, kind {bk}, seq {bseq}, thread {bthread}) does not "
                        f"match its entry (count {count}, kind {k}, seq {seq}, thread {t}, capacity {cap})")
        self.host_put_u64(own, D.buffer_owner_word(D.BUF_COLLECTED, t, seq))
        # the buffer goes back to its own pool at once, by this shard: a lane that published its last
        # buffer (a one-buffer pool) gets it back now, whatever the replenish thread is doing
        self.recycle(bid, k, ptr)
        if (t, k) in short and t not in self.corrupt:
            try:
                if self.top_up(t, k):
                    short.remove((t, k))
                    self.stats["retries_ok"] += 1
            except CorruptLane as exc:
                self.mark_corrupt(t, str(exc))
        self.flowed += 1
        if self.flowed >= self.S * len(g.kinds):
            self.done_event.set()        # a batch: the replenish thread stages more

    def reject(self, t: int, k, cause: int, why: str) -> None:
        """Count a rejected entry of thread t against its pool (or the thread) and say why."""
        reject(self.c64, self.g, t, k, cause)
        self.stats["rejected"] += 1
        self._log_rejection(t, "thread %d: ready entry rejected (%s): %s", t, D.LOSS_NAMES[cause], why)

    def _log_rejection(self, t: int, fmt: str, *args) -> None:
        n = self.rejections[t]
        self.rejections[t] = n + 1
        if n < LOG_FIRST or n % LOG_EVERY == 0:
            _log.error(fmt, *args)

    def _collect_payloads(self, t, recs):
        """Append each record's payload (its header, then its bytes) to args_payload.bin; a payload
        that does not lie in the thread's arena is skipped and counted (the record is kept)."""
        base = self.g.arena_data(t)
        f = self.files["payload"]
        for i in np.flatnonzero(recs["payload_len"]):       # the records that have one, in order
            r = recs[i]
            n = int(r["payload_len"])
            phys = int(r["payload_offset"]) % D.ARENA_BYTES
            if phys + n > D.ARENA_BYTES:
                add_loss(self.c64, self.g, t, D.K_ARGS_DUMP, "bad_payloads", 1, D.LOSS_BAD_PAYLOAD)
                self.stats["bad_payloads"] += 1
                self._log_rejection(t, "thread %d: ArgsDump payload of task %#x (offset %d, %d bytes) is "
                                    "outside its %d-byte arena: skipped", t, int(r["task_id"]),
                                    int(r["payload_offset"]), n, D.ARENA_BYTES)
            else:
                phys += base
                self.buf.read_range_from_device(phys, n)
                _write_all(f, _PAYLOAD_HDR.pack(int(r["task_id"]), t, n))
                _write_all(f, self.buf.host[phys:phys + n])
        self.completed_payloads[t] += len(recs)             # every record's payload, empty ones included

    def drain_queue(self, s: int, t: int, short: list) -> int:
        g = self.g
        tail = self.dev_u32(g.tail_off(t))
        if tail >= g.N:
            raise CorruptLane(f"queue_tails[{t}] = {tail} is outside [0, {g.N})")
        head = self.heads[t]
        n = 0
        while head != tail and t not in self.corrupt:
            eo = g.entry_off(t, head)
            self.hdr.read_range_from_device(eo, _ENTRY_BYTES)
            rmb()
            self.process_entry(s, t, _ENTRY.unpack_from(self.hdr.host, eo), short)
            head = (head + 1) % g.N
            self.heads[t] = head
            wmb()
            self.host_put_u32(g.head_off(t), head)
            n += 1
            self.drained_one(s)
        if n:
            self.stats["entries"] += n
            self.wake_thread(t)
        return n

    def mark_corrupt(self, t: int, why: str, cause: int = 0) -> None:
        if t not in self.corrupt:
            self.corrupt[t] = why
            if cause:
                for k in self.g.kinds:
                    add_loss(self.c64, self.g, t, k, "causes", 0, cause)
            self.c64[self.g.corrupt_word(t)] = 1
            _log.error("AICPU thread %d is corrupt and no longer drained: %s", t, why)
            self.wake_thread(t)          # its gates now drop at once instead of waiting for us

    def sweep(self, s: int, queues, short: list) -> int:
        did = 0
        for t in queues:
            if t in self.corrupt:
                continue
            try:
                did += self.drain_queue(s, t, short)
            except CorruptLane as exc:
                self.mark_corrupt(t, str(exc))
            except Exception as exc:  # noqa: BLE001 - contain it to the thread it came from
                _log.exception("drain shard %d: error while draining thread %d", s, t)
                self.mark_corrupt(t, f"collector error: {type(exc).__name__}: {exc}", D.LOSS_COLLECTOR_ERROR)
        # retry the short sites after every sweep (not only idle ones)
        if short:
            still = []
            for site in short:
                if site[0] in self.corrupt or site in still:
                    continue
                try:
                    ok = self.top_up(*site)
                except CorruptLane as exc:
                    self.mark_corrupt(site[0], str(exc))
                    continue
                if ok:
                    self.stats["retries_ok"] += 1
                else:
                    still.append(site)
            short[:] = still
            if still:
                self.done_event.set()    # the replenish thread stages what it can now
        return did

    def queues_of(self, s: int):
        return list(range(s, self.g.T, self.S))

    def pending(self, queues) -> bool:
        for t in queues:
            if t in self.corrupt:
                continue
            if self.dev_u32(self.g.tail_off(t)) != self.heads[t]:
                return True
        return False

    def shard_main(self, s: int) -> None:
        queues = self.queues_of(s)
        short: list = []
        wake = self.collector_wake
        while self.running:
            if self.stall_word(s):               # a stalled shard (fault injection, ``_shards``)
                self.stall_shard(s, self.stall_word(s))
                continue
            if self.sweep(s, queues, short):
                continue
            self.stats["sweeps"] += 1
            wait_until(lambda: not self.running or self.pending(queues), wake,
                       SHARD_SLICE_S if not short else 0.0005, spin_s=50e-6, slice_s=SHARD_SLICE_S)
        self.sweep(s, queues, short)

    # -- life cycle ------------------------------------------------------------------------------------------
    def lanes_finished(self) -> bool:
        for i in range(self.g.prof["lanes"]):
            st = self.ctl.view(D.lane_status, self.g.lane_status_off(i), 1)[0]
            pid = int(st["pid"])
            if int(st["state"]) in (D.LANE_FLUSHED, D.LANE_EXITED, D.LANE_IDLE_HOST_GONE):
                continue
            if pid and not pid_alive(pid):
                continue
            return False
        return True

    def all_drained(self) -> bool:
        return not self.pending(range(self.g.T))

    # -- threads and their supervision ----------------------------------------------------------------
    def _thread_targets(self) -> dict:
        t = {f"drain{s}": (self.shard_main, (s,)) for s in range(self.S)}
        t["replenish"] = (self.replenish_main, ())
        return t

    def _spawn(self, name: str) -> None:
        fn, args = self._thread_targets()[name]

        def body():
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - said here; the main thread restarts it (supervise_threads)
                _log.exception("collector thread %s died", name)
        th = threading.Thread(target=body, name=name, daemon=True)
        self.threads[name] = th
        th.start()

    def start_threads(self) -> None:
        """The drain shards and the replenish thread."""
        self.running = True
        for name in self._thread_targets():
            self._spawn(name)

    def supervise_threads(self) -> int:
        """Restart every collector thread that died while the collector runs; returns how many."""
        n = 0
        for name, th in list(self.threads.items()):
            if self.running and not th.is_alive():
                _log.error("collector thread %s is dead: restarting it", name)
                self.stats["restarts"] += 1
                self._spawn(name)
                n += 1
        return n

    def stop_threads(self) -> None:
        self.running = False
        self.wake_all()
        self.done_event.set()
        for th in self.threads.values():
            th.join(10)

    # -- life cycle ------------------------------------------------------------------------------------------
    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        self._open_outputs()
        self.proactive_replenish()
        self.ctl_hdr["collector_pid"] = os.getpid()
        self.ctl_hdr["collector_state"] = D.COL_RUNNING
        self.start_threads()
        sup = int(self.pm.boot_hdr["supervisor_pid"][0])
        stop_seen = None
        tick = 0
        while True:
            time.sleep(CONTROL_PERIOD_S)
            tick += 1
            self.supervise_threads()
            q = int(self.ctl_hdr["quiesce_req"][0])
            if q != self.quiesce_seen:
                while not self.all_drained():
                    notify(self.collector_wake)      # lanes coalesce their wakes: the shards look now
                    time.sleep(0.002)
                self.quiesce_seen = q
                self.ctl_hdr["quiesce_ack"] = q
            if int(self.ctl_hdr["stop"][0]) or (tick % 10 == 0 and not pid_alive(sup)):
                stop_seen = stop_seen or time.monotonic()
                self.ctl_hdr["collector_state"] = D.COL_DRAINING
                if (self.lanes_finished() and self.all_drained()) or time.monotonic() - stop_seen > FLUSH_TIMEOUT_S:
                    break
        self.stop_threads()
        self.adopt_dead_lanes()
        self.write_outputs()
        self.ctl_hdr["collector_state"] = D.COL_DONE
        return 0

    def write_outputs(self) -> None:
        for f in self.files.values():
            f.close()
        summary = accounting(self.pm)
        for im in summary["imbalances"]:
            _log.error("pool (thread %d, %s) is unbalanced by %d records: %s", im["thread"], im["kind"],
                       im["missing"], "; ".join(im["causes"]))
        summary["corrupt_threads"] = {str(t): why for t, why in self.corrupt.items()}
        summary["collector"] = dict(self.stats)
        summary["arch"] = self.g.arch
        with open(os.path.join(self.out_dir, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        stalls = read_stalls(self.pm)
        with open(os.path.join(self.out_dir, "stalls.json"), "w") as f:
            json.dump(stalls, f, indent=1)
        try:
            write_swimlane(self.out_dir, stalls)
        except Exception as exc:  # noqa: BLE001 - the raw outputs are written; report and go on
            _log.error("swimlane output failed: %s", exc)


def main(argv=None) -> int:
    """``python -m hostside.dfx BOOT_NAME [OUT_DIR]``: 0 after a clean stop, 2 on bad usage, 1 when
    the collector cannot start (one line on stderr says why)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 2):
        print("usage: python -m hostside.dfx BOOT_NAME [OUT_DIR]", file=sys.stderr)
        return 2
    configure_stderr()
    try:
        col = Collector(argv[0], argv[1] if len(argv) == 2 else None)
    except HdemuError as exc:
        _log.error("cannot start: %s", exc)
        return 1
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)      # Ctrl-C is the supervisor's to handle
    _signal.signal(_signal.SIGTERM, lambda *_: col.ctl_hdr.__setitem__("stop", 1))
    return col.run()

