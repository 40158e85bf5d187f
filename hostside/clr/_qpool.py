"""Hardware queues for streams: each stream its own queue while the agent has slots, shared after.

An agent has ``max_queues`` queue slots for every process on the platform (16 by default), while a
program may create any number of streams, as on a real GPU: ROCclr hands out at most
``GPU_MAX_HW_QUEUES`` hardware queues per device and lets further streams share them. Here a stream
gets a queue of its own while the agent has free slots and the process holds fewer than half of them
(other processes on the platform need queues too), and shares the least-used queue of its kind that
this process already has after that, an idle one (nothing in flight) before a busy one
(``QueuePool.acquire``). One slot is kept free for the process's
first SDMA queue on the agent, so a stream that copies can always get one.

A shared queue is correct because every writer of a queue takes its lock (an RLock) for the whole
*check before you reserve* window (``hostside.clr._vgpu``) and for every reservation
(``Queue.add_write_index``), and the doorbell only moves forward (``Queue.ring_doorbell``). Each
stream keeps its own order (its packets are in order on the queue, all with the barrier bit); what
sharing adds is false dependencies between the streams of one queue: a stream's packet that waits
(a kernel that runs long, a barrier on an event) holds up the others behind it, as on a real GPU
once streams outnumber hardware queues. A queue's error fails every stream on it.

Graph branches (``VirtualGPU.aux_queue``) never share: they take a free slot under the same reserve
(``create_exclusive``) or the graph runs on one lane.

Staging buffers for pageable copies are the process's too (``StagingPool``), as ROCclr keeps its
transfer buffers per device: a synchronous pageable copy holds one only while it runs (it returns once
its last chunk has landed), so a program needs as many as it runs such copies at once, not one per
stream. An asynchronous host-to-device copy that fits one buffer (hipMemcpyAsync, and the pitched
hipMemcpy2DAsync / hipMemcpy3DAsync: ``_staging``) returns once the host data is in the buffer (as
CLR's staged copies): the buffer stays lent until the copy's completion signal reads 0
(``release_after``), and at most ``max_buffers`` exist, so a pipeline that never synchronises runs at
most that many such copies ahead of the device (the next one waits for the oldest to land, bounded by
the runtime's wait timeout: behind a stream wait that only the calling thread would release, it runs
out, where CLR's per-stream staging chunks wait without a bound).
"""
from __future__ import annotations

import threading
import time

from shm_layout import layouts as L

from ..hsa import HSA_SIGNAL_CONDITION_EQ, HostWaitTimeout, HsaError, Queue

__all__ = ["QueuePool", "StagingPool", "pool_of", "staging_of"]


class QueuePool:
    """The queues this process's streams use, with how many streams use each (see the module doc)."""

    def __init__(self, rt):
        self.rt = rt
        self.lock = threading.Lock()
        self.refs: dict[Queue, int] = {}
        self.kind_of: dict[Queue, tuple[int, int]] = {}

    def _free_slots(self, agent: int) -> int:
        owners = self.rt.pm.agents[agent].qdesc["owner"]
        return int((L.owner_state(owners) == L.Q_FREE).sum())

    def _has(self, agent: int, kind: int) -> bool:
        return any(k == (agent, kind) and not q.destroyed for q, k in self.kind_of.items())

    def _may_create(self, agent: int, kind: int) -> bool:
        """A new queue of ``kind`` may be made: the process holds fewer than half of the agent's slots
        (other processes on the platform need queues too) and leaves room for its first SDMA queue."""
        mine = sum(1 for k in self.kind_of.values() if k[0] == agent)
        cap = max(2, self.rt.pm.topo.max_queues // 2)
        free = self._free_slots(agent)
        has_sdma = self._has(agent, L.QKIND_SDMA)
        if kind == L.QKIND_SDMA:
            return free >= 1 and (not has_sdma or mine < cap)    # the first one may always take a slot
        reserve = 0 if has_sdma else 1
        return mine < cap - reserve and free >= 1 + reserve

    def acquire(self, agent: int, kind: int, size: int) -> Queue:
        """A queue of ``kind`` on ``agent`` for one more stream: a new one while slots remain, else
        the least-used healthy one of this process, an idle one (nothing in flight) first (HsaError
        OUT_OF_RESOURCES when it has none)."""
        with self.lock:
            if self._may_create(agent, kind):
                try:
                    q = self.rt.queue_create(agent, size, kind=kind)
                except HsaError as exc:
                    if exc.status != L.HSA_STATUS_ERROR_OUT_OF_RESOURCES:
                        raise
                else:
                    self.refs[q] = 1
                    self.kind_of[q] = (agent, kind)
                    return q
            mine = [q for q, k in self.kind_of.items() if k == (agent, kind) and not q.destroyed and not q.status]
            if not mine:
                what = "SDMA" if kind == L.QKIND_SDMA else "AQL"
                raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES,
                               f"agent {agent} has no queue slot for this process (max_queues="
                               f"{self.rt.pm.topo.max_queues}, {self._free_slots(agent)} free, a process takes at "
                               f"most half) and the process has no healthy {what} queue on it to share")
            # the least-used one, an idle one first: a stream that shares a busy queue waits behind its
            # work (a long kernel, a parked barrier, a kernel gated by the host), an idle one costs nothing
            q = min(mine, key=lambda c: (c.a64[c.i_read] < c.next_id, self.refs[c]))
            self.refs[q] += 1
            return q

    def create_exclusive(self, agent: int, size: int, avoid_engines=()) -> Queue:
        """A new AQL queue of one user (a graph branch), under the same reserve; OUT_OF_RESOURCES when
        the agent has no slot to spare."""
        with self.lock:
            if not self._may_create(agent, L.QKIND_AQL):
                raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"agent {agent} has no queue slot to spare")
            q = self.rt.queue_create(agent, size, avoid_engines=avoid_engines)
            self.refs[q] = 1
            self.kind_of[q] = (agent, L.QKIND_AQL)
            return q

    def sharers(self, q: Queue) -> int:
        """How many streams use ``q`` (0: not one of the pool's)."""
        return self.refs.get(q, 0)

    def release(self, q: Queue) -> None:
        """One stream less on ``q``; the last one destroys it."""
        with self.lock:
            n = self.refs.get(q, 0) - 1
            if n > 0:
                self.refs[q] = n
                return
            self.refs.pop(q, None)
            self.kind_of.pop(q, None)
        q.destroy()


_pools_lock = threading.Lock()


def pool_of(rt) -> QueuePool:
    """The runtime's queue pool (made on first use)."""
    p = getattr(rt, "_clr_queue_pool", None)
    if p is None:
        with _pools_lock:
            p = getattr(rt, "_clr_queue_pool", None)
            if p is None:
                p = rt._clr_queue_pool = QueuePool(rt)
    return p


class StagingPool:
    """Staging buffers of ``nbytes`` (less, halving down to ``min_bytes``, when the host pool is
    short) lent to one pageable copy at a time (see the module doc)."""

    def __init__(self, rt, nbytes: int, min_bytes: int, max_buffers: int = 8):
        self.rt, self.nbytes, self.min_bytes, self.max_buffers = rt, nbytes, min_bytes, max_buffers
        self.free: list[tuple[int, int]] = []          # (address, bytes)
        #: buffers of asynchronous copies in flight: (buffer, completion signal), oldest first
        self.pending: list[tuple[tuple[int, int], object]] = []
        self.lent = 0
        self.made = 0                                   # buffers allocated (and never discarded)
        self.cond = threading.Condition()

    def _reclaim(self) -> None:
        """Buffers of asynchronous copies whose signal reads 0 go back to ``free`` (cond held). A
        signal that reads 1 again was re-armed for a later command of its stream, which completes after
        the copy: the buffer then comes back later than it could, never too early."""
        keep = []
        for buf, sig in self.pending:
            if sig.load() == 0:
                self.free.append(buf)
                self.lent -= 1
            else:
                keep.append((buf, sig))
        self.pending = keep

    def _allocate(self):
        n = self.nbytes
        while True:
            try:
                return self.rt.allocate(None, n, L.ALLOC_STAGING), n
            except HsaError as exc:
                if exc.status != L.HSA_STATUS_ERROR_OUT_OF_RESOURCES or n <= self.min_bytes:
                    if self.lent:
                        return None                   # wait for a lent one
                    raise
                n //= 2

    def acquire(self) -> tuple[int, int]:
        """(address, bytes) of a staging buffer for one copy; ``release`` it when the copy is done."""
        deadline = time.monotonic() + self.rt.wait_timeout_s
        with self.cond:
            while True:
                if self.pending:
                    self._reclaim()
                if self.free:
                    buf = self.free.pop()
                else:
                    buf = self._allocate() if self.made < self.max_buffers else None
                    if buf is not None:
                        self.made += 1
                if buf is not None:
                    self.lent += 1
                    return buf
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HostWaitTimeout(f"no staging buffer came back in {self.rt.wait_timeout_s} s "
                                          f"(HDEMU_WAIT_TIMEOUT_S): {self.lent} lent ({len(self.pending)} "
                                          f"by copies in flight), {self.made} made")
                if self.pending:                # the oldest copy in flight: sleep on its signal
                    sig = self.pending[0][1]
                    self.cond.release()
                    try:
                        sig.wait(HSA_SIGNAL_CONDITION_EQ, 0, min(left, 0.05))
                    finally:
                        self.cond.acquire()
                else:
                    self.cond.wait(min(left, 0.05))

    def release(self, buf: tuple[int, int]) -> None:
        with self.cond:
            self.lent -= 1
            self.free.append(buf)
            self.cond.notify()

    def release_after(self, buf: tuple[int, int], signal) -> None:
        """``buf`` carries an asynchronous copy whose completion signal is ``signal``: it is lent again
        once the signal reads 0."""
        with self.cond:
            self.pending.append((buf, signal))

    def discard(self, buf: tuple[int, int]) -> None:
        """A copy through ``buf`` failed and may still be in flight: it is never lent again (nor
        freed: the device may still write it; the process's allocations go with it)."""
        with self.cond:
            self.lent -= 1
            self.made -= 1                  # not counted against max_buffers: the copy failed
            self.cond.notify()


def staging_of(rt, nbytes: int, min_bytes: int) -> StagingPool:
    """The runtime's staging pool (made on first use)."""
    p = getattr(rt, "_clr_staging_pool", None)
    if p is None:
        with _pools_lock:
            p = getattr(rt, "_clr_staging_pool", None)
            if p is None:
                p = rt._clr_staging_pool = StagingPool(rt, nbytes, min_bytes)
    return p
