"""The host DFX collector process: ``python -m hostside.dfx BOOT_NAME [OUT_DIR]``.

Threads:
* drain shards ``s = 0 .. S-1``: shard ``s`` serves ready queues ``q = s, s + S, ...`` (start,
  stride) and is the only runtime writer of those threads' free queues. ``process_entry`` resolves
  and validates the buffer, reads it from the device (non-SVM), tops up the free queue the entry came
  from out of the shard's own recycled lane, and hands the records to the subsystem's collector
  (appended to ``<kind>.bin``). A top-up that runs dry records a *short site*; the short-site list is
  retried after every sweep, so a starved lane recovers even while the shard is busy elsewhere.
* the replenish thread: moves done buffers into recycled lanes, routed by ``select_recycled_shard``
  (largest deficit; the origin shard wins ties), tops lanes up to their watermark (allocating
  buffers when short), and runs ``publish_arena_acks`` (ArgsDump's completed_payload_count).
* startup ``proactive_replenish`` fills every free queue before any shard exists; it is the only
  place that may allocate for every shard.

Coherence: every host read of a device-written field goes through ``read_range_from_device`` and
every host write through ``write_range_to_device``, each of exactly the bytes it touches (no-ops
under SVM). Every index and pointer read from the device is validated; a bad one marks that thread
*corrupt* (reported, no longer drained) and the other threads keep flowing.

Shutdown handshake: the supervisor sets ``stop``; lanes publish their partial buffers and report
FLUSHED (or exit); the collector drains until every lane is flushed or gone and every ready queue is
empty, writes the outputs, and reports DONE. ``quiesce_req = g`` makes it drain everything queued
and answer ``quiesce_ack = g`` without retiring any thread.
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

from ._readers import accounting, read_stalls
from ._swimlane import write_swimlane

_log = role_logger("collector")

#: Longest sleep of an idle drain shard (a lane's publish wakes it at once through collector_wake).
SHARD_SLICE_S = 0.25
#: Replenish thread period: REPLENISH_MIN_S while buffers flow, doubling up to REPLENISH_PERIOD_S
#: while idle (a short site, or a batch of done buffers, wakes it at once).
REPLENISH_PERIOD_S = 0.25
REPLENISH_MIN_S = 0.002
#: Period of the collector's main thread (quiesce requests, the stop handshake).
CONTROL_PERIOD_S = 0.05
#: After ``stop``, the longest wait for lanes to flush before the collector gives up on them.
FLUSH_TIMEOUT_S = 60.0

# Everything read or written by hand below is derived from the declared layouts, once, here.
_ENTRY = struct_of(D.ready_entry)
_ENTRY_BYTES = D.ready_entry.itemsize
_BUF_HDR = struct_of(D.buffer_header)            # record_count, kind, seq, thread
_BUF_RECORDS = D.buffer_header.itemsize          # a buffer's records follow its header
_PB_CUR_PTR = offset_of(D.pool_block, "current_buf_ptr")
_PB_PTR_BYTES = D.pool_block.fields["buffer_ptrs"][0].base.itemsize   # one free-queue slot
_AB_COMPLETED = offset_of(D.arena_block, "completed_payload_count")
_CTL_COLLECTOR_WAKE = offset_of(D.ctl_header, "collector_wake")
_PAYLOAD_HDR = struct_of(D.payload_file_header)  # task_id, thread, length (args_payload.bin)


class CorruptLane(Exception):
    pass


class Collector:
    def __init__(self, boot_name: str, out_dir: str | None = None):
        self.pm = PlatformMap.attach(boot_name)
        g = self.pm.topo.dfx
        if g is None:
            raise PlatformError(f"profiling is not enabled on platform {boot_name}")
        self.g = g
        self.boot_name = boot_name
        self.out_dir = out_dir or g.prof["output_dir"] or f"hdemu-dfx-{boot_name}"
        hdr_seg, buf_seg, self.ctl = self.pm.segs["dfxhdr"], self.pm.segs["dfxbuf"], self.pm.segs["dfxctl"]
        dev_hdr = hdr_seg.u8[:g.hdr_bytes]
        dev_buf = buf_seg.u8[:g.buf_region_bytes]
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
        self.heads = [0] * g.T                       # host-owned queue_heads (cached)
        self.free_tails = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        self.allocated = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        self.recycled = {(k, s): collections.deque() for k in g.kinds for s in range(self.S)}
        self.done = collections.deque()
        self.done_event = threading.Event()
        self.short_count: dict = {}                  # (kind, shard) -> short sites now recorded
        self.alloc_lock = threading.Lock()
        self.out_lock = threading.Lock()
        self.corrupt: dict[int, str] = {}
        self.collected = {(t, k): 0 for t in range(g.T) for k in g.kinds}
        self.completed_payloads = [0] * g.T
        self.stats = {"entries": 0, "buffers_bytes": 0, "short_sites": 0, "retries_ok": 0, "sweeps": 0}
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

    def wake_thread(self, t: int) -> None:
        notify(self.wake_addrs[t])

    # -- outputs --------------------------------------------------------------------------------------
    def _open_outputs(self):
        os.makedirs(self.out_dir, exist_ok=True)
        for k in self.g.kinds:
            self.files[k] = open(os.path.join(self.out_dir, f"{D.KIND_NAMES[k]}.bin"), "wb")
        self.files["payload"] = open(os.path.join(self.out_dir, "args_payload.bin"), "wb")
        fmt = {D.KIND_NAMES[k]: self.g.rec_dtype[k].descr for k in self.g.kinds}
        with open(os.path.join(self.out_dir, "format.json"), "w") as f:
            json.dump({"kinds": fmt, "arch": self.g.arch}, f)

    def publish_collected(self, t, k, n):
        self.collected[(t, k)] += n
        self.c64[self.collected_w[(t, k)]] = self.collected[(t, k)]

    # -- buffers ----------------------------------------------------------------------------------------
    def allocate(self, t: int, k: int):
        """A never-used buffer of pool (t, k), or None when its pool is exhausted."""
        with self.alloc_lock:
            i = self.allocated[(t, k)]
            if i >= self.g.slab[(t, k)][1]:
                return None
            self.allocated[(t, k)] = i + 1
        return self.g.buffer_addr(t, k, i)

    def shard_of(self, t: int) -> int:
        return t % self.S

    def push_free(self, t: int, k: int, addr: int) -> None:
        po = self.g.pool_off(t, k)
        tail = self.free_tails[(t, k)]
        slot_off = po + D.PB_PTRS + (tail % self.g.slots[k]) * _PB_PTR_BYTES
        self.h64[slot_off // 8] = addr
        self.hdr.write_range_to_device(slot_off, _PB_PTR_BYTES)
        data_written()
        wmb()
        publish("free_queue.tail")
        tail = (tail + 1) & 0xFFFFFFFF
        self.free_tails[(t, k)] = tail
        self.host_put_u32(po + D.PB_TAIL, tail, t=t)
        self.h64[(po + D.PB_REFILL) // 8] = time.monotonic_ns()
        self.hdr.write_range_to_device(po + D.PB_REFILL, 8)

    def top_up(self, s: int, t: int, k: int) -> bool:
        """Fill the free queue of (t, k) from shard s's recycled lane; False when the lane ran dry."""
        po = self.g.pool_off(t, k)
        head = self.dev_u32(po + D.PB_HEAD)
        holding = 1 if self.dev_u64(po + _PB_CUR_PTR) else 0   # the lane's current buffer (read after the head)
        lane = self.recycled[(k, s)]
        pushed = False
        ok = True
        # a lane never holds more than its own pool (free entries + current buffer): buffers that
        # circulate through a shard cannot pile up on one thread while a sibling starves
        target = min(self.g.slots[k], self.g.slab[(t, k)][1] - holding)
        while (self.free_tails[(t, k)] - head) & 0xFFFFFFFF < target:
            try:
                b = lane.popleft()
            except IndexError:
                ok = False
                break
            self.push_free(t, k, b)
            pushed = True
        if pushed:
            self.wake_thread(t)
        return ok

    def proactive_replenish(self) -> None:
        """Startup only, before any shard runs: fill every free queue (may allocate for every shard)."""
        for t in range(self.g.T):
            for k in self.g.kinds:
                for _ in range(min(self.g.slots[k], self.g.slab[(t, k)][1])):
                    b = self.allocate(t, k)
                    if b is None:
                        break
                    self.push_free(t, k, b)

    # -- drain shards ------------------------------------------------------------------------------------
    def process_entry(self, s: int, t: int, entry, short: list) -> None:
        core, k, ptr, seq, _pad = entry
        if core != t:
            raise CorruptLane(f"ready entry names core {core}, not thread {t}")
        if k not in self.g.kinds:
            raise CorruptLane(f"ready entry kind {k} is not an enabled subsystem kind")
        try:
            self.g.check_buffer_kind(k, ptr)
        except ValueError as exc:
            raise CorruptLane(str(exc)) from None
        off = ptr - D.DFX_BUF_BASE
        self.buf.read_range_from_device(off, _BUF_HDR.size)
        count, bk, bseq, bthread = _BUF_HDR.unpack_from(self.buf.host, off)
        cap = self.g.per_buf[k]
        if count > cap or bk != k or bseq != seq:
            raise CorruptLane(f"buffer {ptr:#x} header (count {count}, kind {bk}, seq {bseq}) does not "
                              f"match its entry (kind {k}, seq {seq}, capacity {cap})")
        dt = self.g.rec_dtype[k]
        nbytes = count * dt.itemsize
        rec0 = off + _BUF_RECORDS
        self.buf.read_range_from_device(rec0, nbytes)
        recs = self.buf.host[rec0:rec0 + nbytes].view(dt)
        # top up the free queue this entry came from, out of this shard's recycled lane
        if not self.top_up(s, t, k):
            short.append((t, k))
            self.stats["short_sites"] += 1
        # hand the records to the subsystem's collector (durably appended), then the buffer is done
        with self.out_lock:
            self.files[k].write(memoryview(recs).cast("B"))
            if k == D.K_ARGS_DUMP and count:
                self._collect_payloads(t, recs)
        self.publish_collected(t, k, count)
        self.stats["buffers_bytes"] += nbytes
        self.done.append((ptr, k, t, s))
        if short or len(self.done) >= self.S * len(self.g.kinds):
            self.done_event.set()        # a starved lane, or enough done to be worth a round

    def _collect_payloads(self, t, recs):
        base = self.g.arena_data(t)
        for r in recs:
            n = int(r["payload_len"])
            if n:
                phys = base + int(r["payload_offset"]) % D.ARENA_BYTES
                self.buf.read_range_from_device(phys, n)
                self.files["payload"].write(_PAYLOAD_HDR.pack(int(r["task_id"]), t, n))
                self.files["payload"].write(self.buf.host[phys:phys + n].tobytes())
            self.completed_payloads[t] += 1

    def drain_queue(self, s: int, t: int, short: list) -> int:
        g = self.g
        tail = self.dev_u32(g.tail_off(t))
        if tail >= g.N:
            raise CorruptLane(f"queue_tails[{t}] = {tail} is outside [0, {g.N})")
        head = self.heads[t]
        n = 0
        while head != tail:
            eo = g.entry_off(t, head)
            self.hdr.read_range_from_device(eo, _ENTRY_BYTES)
            rmb()
            self.process_entry(s, t, _ENTRY.unpack_from(self.hdr.host, eo), short)
            head = (head + 1) % g.N
            self.heads[t] = head
            wmb()
            self.host_put_u32(g.head_off(t), head)
            n += 1
        if n:
            self.stats["entries"] += n
            self.wake_thread(t)
        return n

    def mark_corrupt(self, t: int, why: str) -> None:
        if t not in self.corrupt:
            self.corrupt[t] = why
            self.c64[self.g.corrupt_word(t)] = 1
            _log.error("AICPU thread %d is corrupt and no longer drained: %s", t, why)

    def sweep(self, s: int, queues, short: list) -> int:
        did = 0
        for t in queues:
            if t in self.corrupt:
                continue
            try:
                did += self.drain_queue(s, t, short)
            except CorruptLane as exc:
                self.mark_corrupt(t, str(exc))
        # retry the short sites after every sweep (not only idle ones)
        if short:
            still = []
            for site in short:
                if site[0] in self.corrupt or site in still:
                    continue
                if self.top_up(s, *site):
                    self.stats["retries_ok"] += 1
                else:
                    still.append(site)
            short[:] = still
            counts: dict = {}
            for _t, k in still:
                counts[k] = counts.get(k, 0) + 1
            for k in self.g.kinds:
                self.short_count[(k, s)] = counts.get(k, 0)
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
            if self.sweep(s, queues, short):
                continue
            self.stats["sweeps"] += 1
            wait_until(lambda: not self.running or self.pending(queues), wake,
                       SHARD_SLICE_S if not short else 0.0005, spin_s=50e-6, slice_s=SHARD_SLICE_S)
        self.sweep(s, queues, short)

    # -- replenish thread -------------------------------------------------------------------------------
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
                    lane.append(b)
                    want -= 1

    def publish_arena_acks(self) -> None:
        if D.K_ARGS_DUMP not in self.g.kinds:
            return
        for t in range(self.g.T):
            off = self.g.arena_off(t) + _AB_COMPLETED
            if int(self.h64[off // 8]) != self.completed_payloads[t]:
                self.h64[off // 8] = self.completed_payloads[t]
                self.hdr.write_range_to_device(off, 8)
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

    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        self._open_outputs()
        self.proactive_replenish()
        self.ctl_hdr["collector_pid"] = os.getpid()
        self.ctl_hdr["collector_state"] = D.COL_RUNNING
        ts = [threading.Thread(target=self.shard_main, args=(s,), name=f"drain{s}", daemon=True)
              for s in range(self.S)]
        ts.append(threading.Thread(target=self.replenish_main, name="replenish", daemon=True))
        for t in ts:
            t.start()
        sup = int(self.pm.boot_hdr["supervisor_pid"][0])
        stop_seen = None
        tick = 0
        while True:
            time.sleep(CONTROL_PERIOD_S)
            tick += 1
            q = int(self.ctl_hdr["quiesce_req"][0])
            if q != self.quiesce_seen:
                while not self.all_drained():
                    time.sleep(0.002)
                self.quiesce_seen = q
                self.ctl_hdr["quiesce_ack"] = q
            if int(self.ctl_hdr["stop"][0]) or (tick % 10 == 0 and not pid_alive(sup)):
                stop_seen = stop_seen or time.monotonic()
                self.ctl_hdr["collector_state"] = D.COL_DRAINING
                if (self.lanes_finished() and self.all_drained()) or time.monotonic() - stop_seen > FLUSH_TIMEOUT_S:
                    break
        self.running = False
        notify(self.collector_wake)
        for t in ts:
            t.join(10)
        self.write_outputs()
        self.ctl_hdr["collector_state"] = D.COL_DONE
        return 0

    def write_outputs(self) -> None:
        for f in self.files.values():
            f.close()
        summary = accounting(self.pm)
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
    _signal.signal(_signal.SIGTERM, lambda *_: col.ctl_hdr.__setitem__("stop", 1))
    return col.run()

