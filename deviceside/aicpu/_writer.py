"""An AICPU writer thread: turns executed work (or a synthetic load) into DFX records.

Sources: in mode ``real`` (the default) the thread consumes the device-local task rings ``r`` with
``r % T == t`` (``_taskring``: the command processor publishes every executed packet there) and
writes, per task, the records of every enabled subsystem (``on_task``); in mode ``synthetic`` it
generates a configured load (``run_synthetic``). Records go into the active buffer of their kind's
pool through the gates of ``_gates``; ArgsDump payloads go into the thread's arena, whose laps wait
for the host's acknowledgements (``write_payload``). At the end every partial buffer is published
(``flush``), unless the host is gone: then what is held is counted dropped.
"""
from __future__ import annotations

import os
import time

import numpy as np

from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.sync import pid_alive, wait_until

from . import _taskring as R
from ._gates import COMMON_STALL_WORD, GATE_SPIN_S, GatedThread

__all__ = ["AicpuThread", "TASK_IDLE_SLICE_S", "THREAD_CRASH_EXIT"]

#: Longest sleep of a thread on empty task rings (the command processor's notify wakes it: at once
#: after a packet that ends a millisecond after its last notify, else when the engine runs out of
#: work, ``TaskRings.wake``).
TASK_IDLE_SLICE_S = 0.25
#: While tasks flow, a thread that has emptied its rings sleeps this long (without asking to be woken)
#: before it looks again, so that it takes the next tasks as one batch instead of being woken, at the
#: price of a syscall in the command processor, for each of them. The longer the nap, the larger the
#: batch and the less numpy work per event (``on_tasks`` costs some tens of array operations per batch,
#: whatever its size: about 1.9 us per task at 400 tasks a batch, 1.6 at 1,000). The rings hold
#: ``TASK_RING`` events: at 500,000 packets a second on one engine (more than an engine dispatches) a
#: ring fills in 16 ms, three naps. (With 4,096 and no catch-up, ``TASK_CATCH_UP``, a profiled
#: benchmark round at 300,000 dispatches a second once dropped 1,296 events: a lane descheduled
#: past one nap on two busy cores.) (10 ms was tried: beside two CPU-bound processes the
#: backpressure study's one-buffer lane then showed no stall in 1 run of 5, 0 of 6 at 5 ms, and its runs
#: took half as long again.)
TASK_BATCH_S = 5e-3
#: A poll that found this many events on one ring (the thread is a good part of a ring behind: it was
#: descheduled, or held at a gate) skips the nap and polls again at once, so that it catches up before
#: the ring fills and the command processor drops events (``TASK_RING`` / 2: a steady stream at the
#: highest dispatch rates measured here fills about a quarter of a ring in one nap).
TASK_CATCH_UP = D.TASK_RING // 2
#: From this many events on, a poll turns them into records with whole-array operations (``on_tasks``);
#: fewer go one by one (``on_task``).
TASK_BATCH_MIN = 4
#: Exit status of a lane whose AICPU thread crashed.
THREAD_CRASH_EXIT = 71

# arena_block fields, as indices into a u64 view relative to the block
_AR_WRITE = L.word_of(D.arena_block, "arena_write_offset")
_AR_PUBLISHED = L.word_of(D.arena_block, "published_payload_count")
_AR_COMPLETED = L.word_of(D.arena_block, "completed_payload_count")
#: The payload bytes an ArgsDump record carries inline (its ``inline`` field).
_ARGS_INLINE = D.args_dump.fields["inline"][0].itemsize
_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH
#: where a task event's kernarg bytes are (raw: a numpy ``S`` field would drop trailing NULs)
_KARG_OFF = D.task_event.fields["karg"][1]
_KARG_BYTES = D.task_event.fields["karg"][0].itemsize
_U32_MAX = 0xFFFFFFFF
_U64 = np.uint64
_NS = 10**9


def _ns_to_cycles(ns: np.ndarray, freq: int, cap: int | None = None) -> np.ndarray:
    """``ns * freq // 10**9`` of uint64 nanoseconds as Python ints would compute it (then at most ``cap``),
    without overflowing uint64 on the way."""
    if cap is not None:
        # from this many ns on, the result is at least cap: clamp first, then the product fits
        ns = np.minimum(ns, _U64(cap * _NS // freq + 1))
        return np.minimum(ns * _U64(freq) // _U64(_NS), _U64(cap))
    if len(ns) and int(ns.max()) < (1 << 64) // freq:    # the product fits (durations of any real run)
        return ns * _U64(freq) // _U64(_NS)
    return ns // _U64(_NS) * _U64(freq) + ns % _U64(_NS) * _U64(freq) // _U64(_NS)


class AicpuThread(GatedThread):
    """AICPU thread ``t`` of a lane: its sources, its record writer and the ArgsDump arena."""

    def __init__(self, lane, t: int):
        super().__init__(lane, t)
        g = self.g
        self.arena_i = g.arena_off(t) // 8
        self.arena_data = g.arena_data(t)
        # (events offset, header's u64 index) of each task ring this thread consumes
        self.rings = [(g.task_ring_off(r) + R.EVENTS_OFF, g.task_ring_off(r) // 8)
                      for r in range(g.n_rings) if g.thread_of_ring(r) == t]
        #: the events of each of those rings, as one array (batched polls)
        self.ring_events = [np.frombuffer(lane.ctl.buf, D.task_event, count=D.TASK_RING, offset=ev)
                            for ev, _hi in self.rings]
        #: the same events as bytes, and one poll's events copied out of a ring (``poll_tasks``)
        self.ring_bytes = [v.view(np.uint8) for v in self.ring_events]
        self.batch = np.zeros(D.TASK_RING, D.task_event)
        self.batch_u8 = self.batch.view(np.uint8)
        #: per record kind, a scratch array of records that ``on_tasks`` fills and ``write`` copies out
        #: (allocated once: a fresh array of 100+ KiB a poll is an mmap, page faults and an munmap)
        self.scratch = {k: np.zeros(D.TASK_RING, g.rec_dtype[k]) for k in self.pools}
        self.pmu_counters = g.rec_dtype[D.K_PMU]["counters"].shape[0]
        self.records = 0
        self.tasks = 0
        self.poll_peak = 0      # the most events the last poll found on one ring (run_real's catch-up)

    # -- writing records -------------------------------------------------------------------------------
    def write(self, k: int, recs: np.ndarray, park: bool = True) -> None:
        """Append ``recs`` to the pool of kind ``k`` (parking first under a common-mode stall); records
        that find no buffer are counted dropped."""
        pool = self.pools.get(k)
        if pool is None:
            return
        if park and self.lane.c32[COMMON_STALL_WORD]:
            self._common_park()
        n = len(recs)
        i = 0
        # records of the pool's own dtype are copied as bytes (a structured assignment goes field by
        # field: ten times slower); others (a test's own dtype) are converted field by field
        raw = recs.view(np.uint8) if recs.dtype == pool.dtype and recs.flags.c_contiguous else None
        rs = pool.rsize
        # ``total`` counts each record once it is in the buffer (or dropped), so that the device
        # counters a gate leaves behind (a switch stores them before it publishes) add up:
        # total == dropped + current_count + published while this thread waits at either gate
        while i < n:
            if not pool.cur:
                if self.host_gone or not self._pop(pool):
                    break
            m = min(pool.cap - pool.count, n - i)
            if raw is not None:
                pool.u8[pool.count * rs:(pool.count + m) * rs] = raw[i * rs:(i + m) * rs]
            else:
                pool.view[pool.count:pool.count + m] = recs[i:i + m]
            pool.count += m
            pool.total += m
            i += m
            if pool.count == pool.cap:
                self._switch(pool)
        if i < n:                              # no buffer: the rest is dropped
            pool.total += n - i
            pool.dropped += n - i
        self._store_counts(pool)
        self.records += n
        if self.stall_backlog and k != D.K_STALL:
            self.flush_stalls()                # the stalls of this call, in-band (see _gates)

    def write_one(self, k: int, *fields) -> None:
        """``write`` of one record of kind ``k`` given as its field values (in ``struct_of`` order),
        packed straight into the active buffer."""
        pool = self.pools.get(k)
        if pool is None:
            return
        if self.lane.c32[COMMON_STALL_WORD]:
            self._common_park()
        pool.total += 1
        if pool.cur or (not self.host_gone and self._pop(pool)):
            pool.rec.pack_into(self.lane.buf.buf, pool.base + pool.count * pool.rsize, *fields)
            pool.count += 1
            if pool.count == pool.cap:
                self._switch(pool)
        else:                                  # no buffer: dropped
            pool.dropped += 1
        self._store_counts(pool)
        self.records += 1
        if self.stall_backlog:
            self.flush_stalls()                # (k is never the stall kind here: those go through write)

    def flush(self) -> None:
        """Publish every partial buffer (end of run); no replacement is claimed."""
        # the stall pool last: the stalls of the other pools' last publishes go into it first
        for pool in sorted(self.pools.values(), key=lambda p: p.k == D.K_STALL):
            if pool.k == D.K_STALL:
                self.flush_stalls()
            self._switch(pool, replace=False)
            self._store_counts(pool)
        self.wake_collector()

    # -- ArgsDump payload arena -----------------------------------------------------------------------------
    def write_payload(self, payload: bytes):
        """(offset, len) of ``payload`` in this thread's arena, or None when the host did not
        acknowledge the previous lap in time; waits for host acks at each lap."""
        pool = self.pools.get(D.K_ARGS_DUMP)
        a = self.arena_i
        h64 = self.h64
        off = h64[a + _AR_WRITE]
        n = len(payload)
        phys = off % D.ARENA_BYTES
        if phys + n > D.ARENA_BYTES:           # would straddle the wrap: skip to the next lap
            off += D.ARENA_BYTES - phys
            phys = 0
        if phys == 0 and off:                  # a new lap overwrites the previous one: wait for acks
            self._switch(pool, replace=True)   # seal and publish the in-flight meta buffer
            published = h64[a + _AR_PUBLISHED]
            ok = self._gate(pool, D.GATE_POP, lambda: h64[a + _AR_COMPLETED] >= published, self.arena_ack_i)
            if not ok:
                return None
        base = self.arena_data + phys
        self.lane.buf.u8[base:base + n] = np.frombuffer(payload, np.uint8)
        h64[a + _AR_WRITE] = off + n
        h64[a + _AR_PUBLISHED] += 1
        return off, n

    # -- sources ------------------------------------------------------------------------------------------
    def on_task(self, ev) -> None:
        """The records of one executed packet (a task event, unpacked)."""
        did, kobj, start, end, fetch, prev, gx, gy, gz, klen, ptype, karg = ev
        g = self.g
        pools = self.pools
        t = self.t
        write = self.write_one
        if ptype == _DISPATCH:
            if D.K_AICPU_TASK in pools:
                write(D.K_AICPU_TASK, fetch, time.monotonic_ns(), did, t)
            if D.K_AICORE_TASK in pools:
                write(D.K_AICORE_TASK, start, end, did, kobj & _U32_MAX,
                      min(max(start - fetch, 0) * g.freq_hz // _NS, _U32_MAX))
            if D.K_PMU in pools:
                items = gx * gy * gz
                dur = max(end - start, 0)
                cyc = dur * g.freq_hz // _NS
                c = (items, -(-items // 64), klen, dur, cyc, 1, items * 4, items * 4, 0, 0)[:self.pmu_counters]
                write(D.K_PMU, did, (kobj >> 4) & 0xFFFFF, 0, cyc, *c)
            if D.K_ARGS_DUMP in pools:
                payload = bytes(karg[:klen])
                loc = self.write_payload(payload) if klen else (0, 0)
                if loc is None:
                    loc = (0, 0)
                write(D.K_ARGS_DUMP, did, kobj, loc[0], loc[1], t, payload[:_ARGS_INLINE])
            if D.K_SCOPE_STATS in pools:
                write(D.K_SCOPE_STATS, kobj, 1, t, max(end - start, 0), max(end - start, 0))
        if D.K_DEPGEN in pools and prev != D.NO_PREV_DID:
            write(D.K_DEPGEN, prev, did, D.EDGE_STREAM if ptype == _DISPATCH else D.EDGE_BARRIER, t)
        self.tasks += 1

    def _records(self, k: int, m: int) -> np.ndarray:
        """``m`` zeroed records of kind ``k`` in its scratch array (``m`` <= ``TASK_RING``)."""
        r = self.scratch[k][:m]
        r.view(np.uint8)[:] = 0
        return r

    def on_tasks(self, ev: np.ndarray) -> None:
        """``on_task`` for every event of ``ev`` (a ``task_event`` array), with whole-array operations:
        the same records, but kind by kind (each kind has its pool: the order within a pool is the
        events' order), and one clock reading for the batch."""
        n = len(ev)
        g = self.g
        pools = self.pools
        t = self.t
        disp = ev["ptype"] == _DISPATCH
        d = ev if disp.all() else ev[disp]
        m = len(d)
        if m:
            did, kobj, start, end, fetch = d["did"], d["kobj"], d["start"], d["end"], d["fetch"]
            dur = np.where(end >= start, end - start, _U64(0))
            if D.K_AICPU_TASK in pools:
                r = self._records(D.K_AICPU_TASK, m)
                r["dispatch_time"] = fetch
                r["finish_time"] = time.monotonic_ns()
                r["reg_task_id"] = did
                r["thread"] = t
                self.write(D.K_AICPU_TASK, r)
            if D.K_AICORE_TASK in pools:
                r = self._records(D.K_AICORE_TASK, m)
                r["start_time"] = start
                r["end_time"] = end
                r["reg_task_id"] = did
                r["task_token"] = kobj & _U64(_U32_MAX)
                r["receive_to_start_cycles"] = _ns_to_cycles(np.where(start >= fetch, start - fetch, _U64(0)),
                                                             g.freq_hz, _U32_MAX)
                self.write(D.K_AICORE_TASK, r)
            if D.K_PMU in pools:
                r = self._records(D.K_PMU, m)
                items = d["grid"].astype(_U64).prod(axis=1)
                cyc = _ns_to_cycles(dur, g.freq_hz)
                r["task_id"] = did
                r["func_id"] = (kobj >> _U64(4)) & _U64(0xFFFFF)
                r["total_cycles"] = cyc
                cols = (items, (items + _U64(63)) // _U64(64), d["karg_len"], dur, cyc, 1, items * _U64(4),
                        items * _U64(4))
                c = r["counters"]
                for j in range(min(self.pmu_counters, len(cols))):    # the last two counters stay 0
                    c[:, j] = cols[j]
                self.write(D.K_PMU, r)
            if D.K_ARGS_DUMP in pools:
                klen = d["karg_len"]
                if not klen.any():                 # no payloads: no arena, whole records at once
                    r = self._records(D.K_ARGS_DUMP, m)
                    r["task_id"] = did
                    r["kernel_object"] = kobj
                    r["thread"] = t
                    self.write(D.K_ARGS_DUMP, r)
                else:                              # payloads go into the arena in order, record by record
                    raw = d.view(np.uint8).reshape(m, R.EVENT_BYTES)
                    for i in range(m):
                        kl = int(klen[i])
                        payload = raw[i, _KARG_OFF:_KARG_OFF + min(kl, _KARG_BYTES)].tobytes()
                        loc = self.write_payload(payload) if kl else (0, 0)
                        if loc is None:
                            loc = (0, 0)
                        self.write_one(D.K_ARGS_DUMP, int(did[i]), int(kobj[i]), loc[0], loc[1], t,
                                       payload[:_ARGS_INLINE])
            if D.K_SCOPE_STATS in pools:
                r = self._records(D.K_SCOPE_STATS, m)
                r["scope_id"] = kobj
                r["count"] = 1
                r["thread"] = t
                r["total_ns"] = dur
                r["max_ns"] = dur
                self.write(D.K_SCOPE_STATS, r)
        if D.K_DEPGEN in pools:
            prev = ev["prev_did"]
            edge = prev != _U64(D.NO_PREV_DID)
            every = edge.all()
            ne = n if every else int(edge.sum())
            if ne:
                r = self._records(D.K_DEPGEN, ne)
                r["src_task"] = prev if every else prev[edge]
                r["dst_task"] = ev["did"] if every else ev["did"][edge]
                r["edge_kind"] = np.where((ev["ptype"] if every else ev["ptype"][edge]) == _DISPATCH,
                                          D.EDGE_STREAM, D.EDGE_BARRIER)
                r["thread"] = t
                self.write(D.K_DEPGEN, r)
        self.tasks += n

    def poll_tasks(self) -> int:
        """Consume task events from this thread's rings (at most ``TASK_RING`` per ring and call: a
        tail further ahead than that is not the producer's); returns how many."""
        c64 = self.lane.c64
        buf = self.lane.ctl.buf
        n = peak = 0
        eb = R.EVENT_BYTES
        for (events, hi), raw in zip(self.rings, self.ring_bytes):
            head, tail = c64[hi + R.HEAD], c64[hi + R.TAIL]
            if head >= tail:
                continue
            k = min(tail - head, D.TASK_RING)
            if k > peak:
                peak = k
            if k < TASK_BATCH_MIN:
                for _ in range(k):
                    self.on_task(R.EVENT.unpack_from(buf, events + (head % D.TASK_RING) * R.EVENT_BYTES))
                    head += 1
                    c64[hi + R.HEAD] = head
            else:
                # copied out of the ring as bytes into the thread's batch array (no allocation)
                i = head % D.TASK_RING
                first = min(k, D.TASK_RING - i)
                out = self.batch_u8
                out[:first * eb] = raw[i * eb:(i + first) * eb]
                if first < k:
                    out[first * eb:k * eb] = raw[:(k - first) * eb]
                self.on_tasks(self.batch[:k])
                head += k
                c64[hi + R.HEAD] = head
            n += k
        if n:
            self.lane.publish_progress()      # `hdemu status` shows the tasks as the lane goes
        self.poll_peak = peak
        return n

    def has_tasks(self) -> bool:
        c64 = self.lane.c64
        for _events, hi in self.rings:
            if c64[hi + R.HEAD] < c64[hi + R.TAIL]:
                return True
        return False

    def run_real(self) -> None:
        ctl = self.lane.ctl_hdr
        sup = int(self.lane.pm.boot_hdr["supervisor_pid"][0])
        while True:
            n = self.poll_tasks()
            if int(ctl["stop"][0]):
                self.poll_tasks()
                break
            if self.host_gone and self.lane.prof["on_host_gone"] == "exit":
                break
            if n:
                self.wake_collector_due()
                if self.poll_peak < TASK_CATCH_UP:
                    time.sleep(TASK_BATCH_S)  # tasks flow: take the next ones as a batch (TASK_BATCH_S)
                continue
            self.wake_collector()             # idle: the collector takes what was published
            if not wait_until(lambda: self.has_tasks() or int(ctl["stop"][0]), self.wake, TASK_IDLE_SLICE_S,
                              spin_s=GATE_SPIN_S, slice_s=TASK_IDLE_SLICE_S) and not pid_alive(sup):
                break          # the supervisor died without a stop: nobody will ever stop this lane

    def run_synthetic(self) -> None:
        prof = self.lane.prof
        rate = prof["synthetic_records_per_s"]
        count = prof["synthetic_records"]
        duration = prof["synthetic_duration_s"]
        batch = max(1, int(prof["synthetic_batch"]))
        seq = 0
        kinds = sorted(k for k in self.pools if k != D.K_STALL)   # the stall pool carries stalls only
        templates = {k: np.zeros(batch, self.g.rec_dtype[k]) for k in kinds}
        ids = np.arange(batch, dtype=np.uint64)
        ctl = self.lane.ctl_hdr
        while prof["synthetic_wait_go"] and not int(ctl["go"][0]) and not int(ctl["stop"][0]):
            time.sleep(0.001)
        t0 = time.monotonic()
        while not int(ctl["stop"][0]):
            if count and seq >= count:
                break
            if not count and time.monotonic() - t0 >= duration:
                break
            m = batch if not count else min(batch, count - seq)
            base = (self.t << 40) | seq
            for k in kinds:
                r = templates[k][:m]
                name = r.dtype.names[0] if k not in (D.K_AICPU_TASK, D.K_AICORE_TASK) else "reg_task_id"
                r[name] = base + ids[:m]
                self.write(k, r)
            seq += m
            if self.host_gone and prof["on_host_gone"] == "exit":
                break
            if rate:
                ahead = seq * len(kinds) / rate - (time.monotonic() - t0)
                if ahead > 0:
                    self.wake_collector_due()
                    time.sleep(ahead)

    def main(self) -> None:
        try:
            if self.lane.prof["mode"] == "synthetic":
                self.run_synthetic()
            else:
                self.run_real()
            if not self.host_gone:
                self.flush()
            else:
                for pool in self.pools.values():   # nobody will ever take these: account them
                    pool.dropped += pool.count
                    pool.count = 0
                    self._store_counts(pool)
        except Exception:  # noqa: BLE001 - a crashed thread must be loud, then end the lane
            self.log.exception("AICPU thread %d crashed", self.t)
            os._exit(THREAD_CRASH_EXIT)
