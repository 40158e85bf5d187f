"""AICPU writer lanes: ``python -m deviceside.aicpu BOOT_NAME LANE``.

Each lane is a process with ``threads_per_lane`` AICPU threads. Thread ``t`` owns ready queue ``t``
and, per subsystem kind, a pool (active buffer + free queue). It writes records into its active
buffer; at a buffer switch it follows the device order of the DFX backpressure design:

    publish the full buffer:  entry -> clear the active head -> wmb -> advance queue_tails[t]
                              (the PUSH gate runs before any of it)
    claim a replacement:      rmb -> buffer_ptrs[head % SLOT] -> active head -> head + 1  (POP gate)

(The design document clears the current buffer after the tail advance; here the active head lets
go first, because the collector counts each lane's holdings from it: see hostside.collector.top_up.)

The push gate blocks while the ready queue is full ((tail + 1) % N == head); the pop gate while the
free queue is empty (head == tail). Each gate takes ONE budget before its loop, counted in emulated
system-counter cycles at the arch's frequency (a2a3 50 MHz, a5 1 GHz): 30 s by default
(``backpressure_timeout_s``), 0 under policy ``drop``, ``block_timeout_s`` under ``block_timeout``.
A gate fails only while ownership is on the device, so the affected records are counted dropped.
Under ``common_mode`` a thread that stalls raises the shared stall flag and every thread parks at
its next record until the host has drained everything (one aligned gap). Every stall is logged in
the thread's stall log (thread, kind, gate, start, end, outcome).

After a backstop expires the thread checks the collector's pid: if the host is gone it drops from
then on without waiting, and the lane exits or idles (``on_host_gone``).

Sources: by default the command processor hands every executed packet to a lane through a
device-local task ring (one per CP engine); ``mode = "synthetic"`` generates a configured load.
"""
from __future__ import annotations

import os
import signal as _signal
import struct
import sys
import threading
import time

import numpy as np

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.coherence import data_written, publish, rmb, wmb
from shm_layout.sync import fetch_add32, notify, pid_alive, wait_until
from shm_layout.topology import PlatformMap

#: Longest single sleep inside a gate or an idle task wait (liveness and stop checks run this often).
GATE_SLICE_S = 0.05
#: Spin before sleeping at a gate / on an empty task ring.
GATE_SPIN_S = 50e-6
#: Longest sleep of a thread on empty task rings (the command processor's push wakes it at once).
TASK_IDLE_SLICE_S = 0.25

_ENTRY = struct.Struct("<IIQII")
_EV = struct.Struct("<QQQQQQIIIHH64s")


class Pool:
    """Device-side state of one (thread, kind) pool; the shared fields live in the DFX header."""

    __slots__ = ("t", "k", "off", "cap", "rsize", "dtype", "cur", "count", "seq", "total", "dropped",
                 "budget", "policy", "slots", "view")

    def __init__(self, g: D.DfxGeometry, t: int, k: int):
        self.t, self.k = t, k
        self.off = g.pool_off(t, k)
        self.cap = g.per_buf[k]
        self.dtype = g.rec_dtype[k]
        self.rsize = self.dtype.itemsize
        self.cur = 0
        self.count = 0
        self.seq = 0
        self.total = 0
        self.dropped = 0
        self.budget = g.budget_cycles(k)
        self.policy = g.policy[k]
        self.slots = g.slots[k]
        self.view = None


class AicpuThread:
    def __init__(self, lane: "Lane", t: int):
        self.lane = lane
        self.g = lane.g
        self.t = t
        g = self.g
        self.h32 = lane.h32
        self.h64 = lane.h64
        self.hbuf = lane.hdr.buf
        self.pools = {k: Pool(g, t, k) for k in g.kinds}
        self.wake = lane.ctl.addr + g.wake_off + t * 64
        self.col_wake = lane.ctl.addr + 128
        self.i_head = g.head_off(t) // 4
        self.i_tail = g.tail_off(t) // 4
        self.tail = self.h32[self.i_tail]
        self.host_gone = False
        self.status = lane.status
        self.stall_i = (g.stall_off + t * g.stall_bytes) // 8
        self.stall_base = g.stall_off + t * g.stall_bytes + 64
        self.arena_i = g.arena_off(t) // 8
        self.arena_data = g.arena_data(t)
        self.rings = [r for r in range(g.n_rings) if g.thread_of_ring(r) == t]
        self.records = 0
        self.tasks = 0

    # -- clocks -------------------------------------------------------------------------------------
    def cycles(self) -> int:
        return time.monotonic_ns() * self.g.freq_hz // 1_000_000_000

    # -- the two gates --------------------------------------------------------------------------------
    def _gate(self, pool: Pool, gate: int, ready) -> bool:
        """Block until ``ready()`` or the pool's budget runs out; True when ready."""
        if ready():
            return True
        if pool.budget == 0 or self.host_gone:
            return False
        start_ns = time.monotonic_ns()
        deadline = self.cycles() + pool.budget      # one budget, taken once, before the loop
        ctl = self.lane.ctl_hdr
        common = pool.policy == "common_mode"
        if common:
            fetch_add32(self.lane.ctl.addr + 64, 1)
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
                fetch_add32(self.lane.ctl.addr + 64, -1)
                notify(self.lane.ctl.addr + 68)
        end_ns = time.monotonic_ns()
        release = self.h64[(pool.off + D.PB_REFILL) // 8] if gate == D.GATE_POP else 0
        if pool.k != D.K_STALL:          # waits of the stall records' own pool are not stalls of a row
            self._log_stall(pool.k, gate, start_ns, end_ns, ok, release)
        if not ok:
            self.h64_ctl_backstop()
            if not self.lane.collector_alive():
                self.host_gone = True
        return ok

    def h64_ctl_backstop(self):
        self.lane.c64[self.lane.status_off // 8 + 6] += 1

    def _log_stall(self, k, gate, start, end, ok, release=0):
        n = self.lane.c64[self.stall_i]
        off = self.stall_base + (n % D.STALL_LOG) * D.stall_record.itemsize
        struct.pack_into("<IIIIQQQ", self.lane.ctl.buf, off, self.t, k, gate,
                         D.STALL_RECOVERED if ok else D.STALL_EXPIRED, start, end, release)
        self.lane.c64[self.stall_i] = n + 1
        st = self.status
        st["stalls"] += 1
        st["stall_ns"] += end - start
        if k != D.K_STALL and D.K_STALL in self.pools:     # the in-band copy, in the data stream
            r = np.zeros(1, D.stall_record)
            r[0] = (self.t, k, gate, D.STALL_RECOVERED if ok else D.STALL_EXPIRED, start, end, release)
            self.write(D.K_STALL, r, park=False)

    def _common_park(self):
        """Under common_mode: wait at this thread's next record while any thread holds the stall."""
        c32 = self.lane.c32
        if not c32[16]:
            return
        start = time.monotonic_ns()
        while c32[16] and not self.host_gone and not int(self.lane.ctl_hdr["stop"][0]):
            wait_until(lambda: not c32[16], self.lane.ctl.addr + 68, GATE_SLICE_S, spin_s=GATE_SPIN_S)
            if not self.lane.collector_alive():
                break
        self._log_stall(0, D.GATE_COMMON, start, time.monotonic_ns(), True)

    def _push(self, pool: Pool) -> bool:
        """Publish the full current buffer on the ready queue (the push gate guards it)."""
        N = self.g.N
        h32, i_head = self.h32, self.i_head
        if not self._gate(pool, D.GATE_PUSH, lambda: (self.tail + 1) % N != h32[i_head]):
            return False
        bh = pool.cur - D.DFX_BUF_BASE
        struct.pack_into("<IIII", self.lane.buf.buf, bh, pool.count, pool.k, pool.seq, self.t)
        _ENTRY.pack_into(self.hbuf, self.g.entry_off(self.t, self.tail), self.t, pool.k, pool.cur, pool.seq, 0)
        # the active head lets go of the buffer before the tail hands it over: the host counts a
        # lane's holdings (free entries + current buffer) and must never see a published buffer
        # still named current (it would under-fill a starving lane and leave it parked)
        self.h64[pool.off // 8] = 0
        data_written()
        wmb()
        publish("queue_tails")
        self.tail = (self.tail + 1) % N
        h32[self.i_tail] = self.tail
        notify(self.col_wake)
        return True

    def _pop(self, pool: Pool) -> bool:
        """Claim a replacement buffer from the free queue (the pop gate guards it)."""
        h32 = self.h32
        i_head = (pool.off + D.PB_HEAD) // 4
        i_tail = (pool.off + D.PB_TAIL) // 4
        if not self._gate(pool, D.GATE_POP, lambda: h32[i_head] != h32[i_tail]):
            return False
        rmb()
        head = h32[i_head]
        ptr = self.h64[(pool.off + D.PB_PTRS) // 8 + head % pool.slots]
        try:
            self.g.check_buffer_kind(pool.k, ptr)
        except ValueError as exc:
            h32[i_head] = (head + 1) & 0xFFFFFFFF
            print(f"hdemu aicpu thread {self.t}: free queue of {D.KIND_NAMES[pool.k]} gave a bad pointer: {exc}",
                  file=sys.stderr, flush=True)
            return False
        pool.cur = ptr
        pool.count = 0
        pool.seq += 1
        off = ptr - D.DFX_BUF_BASE + 64
        pool.view = np.frombuffer(self.lane.buf.buf, dtype=pool.dtype, count=pool.cap, offset=off)
        # the active head names the buffer BEFORE the head advances: a host that counts this lane's
        # holdings (free entries + current buffer) may over-count for a moment, never under-count
        self.h64[pool.off // 8] = ptr
        h32[pool.off // 4 + 2] = pool.seq
        h32[i_head] = (head + 1) & 0xFFFFFFFF
        return True

    def _switch(self, pool: Pool, replace: bool = True) -> None:
        if pool.count:
            if not self._push(pool):
                pool.dropped += pool.count     # never published: ownership is still ours
                pool.count = 0
                self._store_counts(pool)
                return
            pool.cur = 0                       # the published buffer now belongs to the host
            pool.count = 0
            pool.view = None
        if replace:
            self._pop(pool)

    def _store_counts(self, pool: Pool) -> None:
        i = pool.off // 8
        self.h64[i + 2] = pool.total
        self.h64[i + 3] = pool.dropped
        self.h32[pool.off // 4 + 3] = pool.count

    # -- writing records -------------------------------------------------------------------------------
    def write(self, k: int, recs: np.ndarray, park: bool = True) -> None:
        pool = self.pools.get(k)
        if pool is None:
            return
        if park and self.lane.c32[16]:
            self._common_park()
        n = len(recs)
        pool.total += n
        i = 0
        while i < n:
            if not pool.cur:
                if self.host_gone or not self._pop(pool):
                    pool.dropped += n - i
                    break
            m = min(pool.cap - pool.count, n - i)
            pool.view[pool.count:pool.count + m] = recs[i:i + m]
            pool.count += m
            i += m
            if pool.count == pool.cap:
                self._switch(pool)
        self._store_counts(pool)
        self.records += n

    def flush(self) -> None:
        """Publish every partial buffer (end of run); no replacement is claimed."""
        for pool in self.pools.values():
            self._switch(pool, replace=False)
            self._store_counts(pool)

    # -- ArgsDump payload arena -----------------------------------------------------------------------------
    def write_payload(self, payload: bytes):
        """(offset, len) of ``payload`` in this thread's arena; waits for host acks at each lap."""
        pool = self.pools.get(D.K_ARGS_DUMP)
        a = self.arena_i
        h64 = self.h64
        off = h64[a]
        n = len(payload)
        phys = off % D.ARENA_BYTES
        if phys + n > D.ARENA_BYTES:           # would straddle the wrap: skip to the next lap
            off += D.ARENA_BYTES - phys
            phys = 0
        if phys == 0 and off:                  # a new lap overwrites the previous one: wait for acks
            self._switch(pool, replace=True)   # seal and publish the in-flight meta buffer
            published = h64[a + 1]
            ok = self._gate(pool, D.GATE_POP, lambda: h64[a + 8] >= published)
            if not ok:
                return None
        base = self.arena_data + phys
        self.lane.buf.u8[base:base + n] = np.frombuffer(payload, np.uint8)
        h64[a] = off + n
        h64[a + 1] += 1
        return off, n

    # -- sources ------------------------------------------------------------------------------------------
    def on_task(self, ev) -> None:
        did, kobj, start, end, fetch, prev, gx, gy, gz, klen, ptype, karg = ev
        g = self.g
        now = time.monotonic_ns()
        t = self.t
        if ptype == 2:   # kernel dispatch
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
                r[0] = (did, kobj, loc[0], loc[1], t, payload[:96])
                self.write(D.K_ARGS_DUMP, r)
            if D.K_SCOPE_STATS in self.pools:
                r = np.zeros(1, D.scope_stats)
                r[0] = (kobj, 1, t, end - start, end - start)
                self.write(D.K_SCOPE_STATS, r)
        if D.K_DEPGEN in self.pools and prev:
            r = np.zeros(1, D.depgen)
            r[0] = (prev, did, D.EDGE_STREAM if ptype == 2 else D.EDGE_BARRIER, t)
            self.write(D.K_DEPGEN, r)
        self.tasks += 1

    def poll_tasks(self) -> int:
        """Consume task events from this thread's rings; returns how many."""
        lane = self.lane
        n = 0
        for r in self.rings:
            base = lane.g.rings_off + r * lane.g.ring_bytes
            hi = base // 8
            head, tail = lane.c64[hi], lane.c64[hi + 8]
            while head < tail:
                ev = _EV.unpack_from(lane.ctl.buf, base + 128 + (head % D.TASK_RING) * 128)
                self.on_task(ev)
                head += 1
                lane.c64[hi] = head
                n += 1
        return n

    def has_tasks(self) -> bool:
        lane = self.lane
        for r in self.rings:
            hi = (lane.g.rings_off + r * lane.g.ring_bytes) // 8
            if lane.c64[hi] < lane.c64[hi + 8]:
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
        t0 = time.monotonic()
        seq = 0
        kinds = sorted(self.pools)
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
        except Exception:  # noqa: BLE001 - a crashed thread must be loud
            import traceback
            traceback.print_exc()
            os._exit(71)


class Lane:
    def __init__(self, boot_name: str, lane: int):
        self.pm = PlatformMap.attach(boot_name)
        g = self.pm.topo.dfx
        if g is None:
            raise SystemExit("profiling is not enabled on this platform")
        if not 0 <= lane < g.prof["lanes"]:
            raise SystemExit(f"lane must be in [0, {g.prof['lanes']}), not {lane}")
        self.g = g
        self.prof = g.prof
        self.index = lane
        self.hdr = self.pm.segs["dfxhdr"]
        self.buf = self.pm.segs["dfxbuf"]
        self.ctl = self.pm.segs["dfxctl"]
        self.h32 = memoryview(self.hdr.buf).cast("I")
        self.h64 = memoryview(self.hdr.buf).cast("Q")
        self.c32 = memoryview(self.ctl.buf).cast("I")
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.ctl_hdr = self.ctl.view(D.ctl_header, 0, 1)
        self.status_off = g.lane_off + lane * 64
        self.status = self.ctl.view(D.lane_status, self.status_off, 1)
        tpl = self.prof["threads_per_lane"]
        self.first_thread = lane * tpl
        self.threads = [AicpuThread(self, t) for t in range(self.first_thread, self.first_thread + tpl)]
        self._col_pid = 0

    def collector_alive(self) -> bool:
        pid = int(self.ctl_hdr["collector_pid"][0])
        return pid != 0 and pid_alive(pid) and int(self.ctl_hdr["collector_state"][0]) != D.COL_DONE

    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        st = self.status
        st["pid"] = os.getpid()
        st["state"] = D.LANE_RUNNING
        role = self._role()
        if role is not None:
            role["started_ns"] = time.monotonic_ns()
            role["state"] = L.ROLE_READY
        ts = [threading.Thread(target=th.main, name=f"aicpu{th.t}", daemon=True) for th in self.threads]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        st["records"] = sum(th.records for th in self.threads)
        st["tasks"] = sum(th.tasks for th in self.threads)
        st["drops"] = sum(p.dropped for th in self.threads for p in th.pools.values())
        host_gone = any(th.host_gone for th in self.threads)
        st["state"] = D.LANE_IDLE_HOST_GONE if host_gone else D.LANE_FLUSHED
        notify(self.ctl.addr + 128)
        if host_gone and self.prof["on_host_gone"] == "idle":
            while not int(self.ctl_hdr["stop"][0]) and pid_alive(int(self.pm.boot_hdr["supervisor_pid"][0])):
                time.sleep(0.2)
        elif not host_gone:
            while not int(self.ctl_hdr["stop"][0]) and pid_alive(int(self.pm.boot_hdr["supervisor_pid"][0])):
                time.sleep(0.2)
        if st["state"][0] == D.LANE_FLUSHED:
            st["state"] = D.LANE_EXITED
        if role is not None:
            role["state"] = L.ROLE_EXITED
        return 0

    def _role(self):
        for i in range(L.BOOT_MAX_ROLES):
            r = self.pm.roles[i]
            if int(r["kind"]) == L.ROLE_LANE and int(r["agent"]) == self.index:
                return self.pm.roles[i:i + 1]
        return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m deviceside.aicpu BOOT_NAME LANE", file=sys.stderr)
        return 2
    lane = Lane(argv[0], int(argv[1]))
    _signal.signal(_signal.SIGTERM, lambda *_: lane.ctl_hdr.__setitem__("stop", 1))
    return lane.run()


if __name__ == "__main__":
    sys.exit(main())
