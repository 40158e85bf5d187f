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

#: Longest sleep of a thread on empty task rings (the command processor's push wakes it at once).
TASK_IDLE_SLICE_S = 0.25
#: Exit status of a lane whose AICPU thread crashed.
THREAD_CRASH_EXIT = 71

# arena_block fields, as indices into a u64 view relative to the block
_AR_WRITE = L.word_of(D.arena_block, "arena_write_offset")
_AR_PUBLISHED = L.word_of(D.arena_block, "published_payload_count")
_AR_COMPLETED = L.word_of(D.arena_block, "completed_payload_count")
#: The payload bytes an ArgsDump record carries inline (its ``inline`` field).
_ARGS_INLINE = D.args_dump.fields["inline"][0].itemsize
_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH


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
        self.records = 0
        self.tasks = 0

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
        # ``total`` counts each record once it is in the buffer (or dropped), so that the device
        # counters a gate leaves behind (a switch stores them before it publishes) add up:
        # total == dropped + current_count + published while this thread waits at either gate
        while i < n:
            if not pool.cur:
                if self.host_gone or not self._pop(pool):
                    break
            m = min(pool.cap - pool.count, n - i)
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

    def flush(self) -> None:
        """Publish every partial buffer (end of run); no replacement is claimed."""
        for pool in self.pools.values():
            self._switch(pool, replace=False)
            self._store_counts(pool)

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
        now = time.monotonic_ns()
        t = self.t
        if ptype == _DISPATCH:
            if D.K_AICPU_TASK in self.pools:
                r = np.zeros(1, D.aicpu_task)
                r[0] = (fetch, now, did, t)
                self.write(D.K_AICPU_TASK, r)
            if D.K_AICORE_TASK in self.pools:
                r = np.zeros(1, D.aicore_task)
                r[0] = (start, end, did, kobj & 0xFFFFFFFF, min((start - fetch) * g.freq_hz // 10**9, 0xFFFFFFFF))
                self.write(D.K_AICORE_TASK, r)
            if D.K_PMU in self.pools:
                r = np.zeros(1, g.rec_dtype[D.K_PMU])
                items = gx * gy * gz
                dur = max(end - start, 0)
                n_c = g.rec_dtype[D.K_PMU]["counters"].shape[0]
                c = [items, -(-items // 64), klen, dur, dur * g.freq_hz // 10**9, 1, items * 4, items * 4, 0, 0][:n_c]
                r[0]["task_id"] = did
                r[0]["func_id"] = (kobj >> 4) & 0xFFFFF
                r[0]["total_cycles"] = dur * g.freq_hz // 10**9
                r[0]["counters"] = c
                self.write(D.K_PMU, r)
            if D.K_ARGS_DUMP in self.pools:
                payload = bytes(karg[:klen])
                loc = self.write_payload(payload) if klen else (0, 0)
                r = np.zeros(1, D.args_dump)
                if loc is None:
                    loc = (0, 0)
                r[0] = (did, kobj, loc[0], loc[1], t, payload[:_ARGS_INLINE])
                self.write(D.K_ARGS_DUMP, r)
            if D.K_SCOPE_STATS in self.pools:
                r = np.zeros(1, D.scope_stats)
                r[0] = (kobj, 1, t, end - start, end - start)
                self.write(D.K_SCOPE_STATS, r)
        if D.K_DEPGEN in self.pools and prev != D.NO_PREV_DID:
            r = np.zeros(1, D.depgen)
            r[0] = (prev, did, D.EDGE_STREAM if ptype == _DISPATCH else D.EDGE_BARRIER, t)
            self.write(D.K_DEPGEN, r)
        self.tasks += 1

    def poll_tasks(self) -> int:
        """Consume task events from this thread's rings; returns how many."""
        c64 = self.lane.c64
        buf = self.lane.ctl.buf
        n = 0
        for events, hi in self.rings:
            head, tail = c64[hi + R.HEAD], c64[hi + R.TAIL]
            while head < tail:
                ev = R.EVENT.unpack_from(buf, events + (head % D.TASK_RING) * R.EVENT_BYTES)
                self.on_task(ev)
                head += 1
                c64[hi + R.HEAD] = head
                n += 1
        if n:
            self.lane.publish_progress()      # `hdemu status` shows the tasks as the lane goes
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
            self.poll_tasks()
            if int(ctl["stop"][0]):
                self.poll_tasks()
                break
            if self.host_gone and self.lane.prof["on_host_gone"] == "exit":
                break
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
