"""The command layer (ROCclr-like): a virtual GPU per stream turns commands into packets.

* ``VirtualGPU`` owns the stream's AQL queue (and, lazily, an SDMA queue on the same agent), a ring
  of completion signals, and the stream's position: the signal of the last command and the engine
  it went to.
* Commands: kernel (dispatch packet with the barrier bit: streams are in order), marker (a
  BARRIER_AND with up to 5 dependencies and a signal, used for events and cross-engine order),
  copy and fill (SDMA packets that name the previous command's signal as their dependency).
* Submission batches: every command between ``begin_batch()`` and ``end_batch()`` goes to the ring
  with its header stored, and the doorbell is rung once per queue per batch. Outside a batch each
  command is its own batch (direct dispatch). Multi-packet commands (a kernel behind a
  cross-engine barrier, a marker with more than 5 dependencies) are one batch.
* The interceptor hook: ``set_interceptor(fn)`` puts ``fn(vgpu, dispatch)`` on the kernel write
  path (kernel replay, ``hostside.replay``); ``dispatch`` is a frozen ``Dispatch`` record, built
  only while an interceptor is installed.

Pageable host memory (numpy arrays, bytes) is copied through staging buffers in fine-grained
system memory, as ROCclr does for unpinned memory.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L

from ..hsa import HSA_SIGNAL_CONDITION_EQ, HostWaitTimeout, HsaError, Queue, Runtime

__all__ = ["VirtualGPU", "Dispatch", "set_interceptor", "interceptor", "SIGNALS_PER_STREAM", "STAGING_BYTES",
           "KERNEL_HEADER", "MARKER_HEADER"]
_log = logging.getLogger("hdemu.clr")

#: Completion signals per stream: a command's signal is reused this many commands later, after it
#: has reached 0 (ROCclr keeps a similar ring of signals per virtual GPU).
SIGNALS_PER_STREAM = 256
#: Bytes of staging buffer per stream for pageable copies (copied in chunks of half of it).
STAGING_BYTES = 1 << 20

KERNEL_HEADER = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True)
MARKER_HEADER = A.make_header(A.HSA_PACKET_TYPE_BARRIER_AND, barrier=True)



@dataclass(frozen=True, slots=True)
class Dispatch:
    """One kernel dispatch as the command layer submits it: the kernel object handle, its
    ``shm_layout.kernels.Signature``, the argument values, grid and block (work-items), group
    segment bytes and dimensions."""
    kobj: int
    sig: object
    args: tuple
    grid: tuple
    block: tuple
    group_segment: int = 0
    dims: int = 3


#: The interceptor on the kernel write path (kernel replay: ``hostside.replay`` installs it through
#: ``set_interceptor`` when a tool configures the service). None in a process without replay, so
#: ``launch()`` pays one global load.
_intercept = None


def set_interceptor(fn) -> None:
    """Install ``fn(vgpu, dispatch) -> packet id`` on every stream's kernel write path, or remove it
    (``None``). ``fn`` submits the dispatch itself, through ``VirtualGPU.submit_dispatch`` (or
    ``write_dispatch_locked`` under the stream's lock, for its own completion signal and reserved2)."""
    global _intercept
    _intercept = fn


def interceptor():
    """The installed interceptor, or None."""
    return _intercept


class VirtualGPU:
    def __init__(self, rt: Runtime, agent: int, queue_size: int = 1024):
        self.rt = rt
        self.agent = agent
        self.queue: Queue = rt.queue_create(agent, min(queue_size, rt.pm.topo.qmax))
        self.sdma: Queue | None = None
        self.aux: list[Queue] = []     # extra AQL queues of the agent: graph branches run on them
        self.sigs = []
        self.sig_next = 0
        self.last_signal = None        # Signal of the last command, or None
        self.last_engine = "aql"
        self.lock = threading.RLock()
        self.batch_depth = 0
        self.pending = {}              # queue -> last index written but not yet rung
        self.staging = None
        self.commands = 0

    # -- signals -----------------------------------------------------------------------------------
    def _next_signal(self):
        """The next completion signal of the ring, set to 1; waits if it is still in flight."""
        i = self.sig_next
        self.sig_next = (i + 1) % SIGNALS_PER_STREAM
        if i < len(self.sigs):
            s = self.sigs[i]
            if self.rt.s64[s._i]:
                self.sync_signal(s)
        else:
            s = self.rt.signals.create(0, kind=1)
            self.sigs.append(s)
        s.store_relaxed_nowake(1)
        return s

    def check(self):
        self.queue.check()
        if self.sdma is not None:
            self.sdma.check()
        for q in self.aux:
            q.check()

    # -- batches -----------------------------------------------------------------------------------
    def begin_batch(self):
        self.lock.acquire()
        self.batch_depth += 1

    def flush(self):
        """FlushSubmissionBatch: ring each queue's doorbell once with its last packet id."""
        if self.pending:
            for q, idx in self.pending.items():
                q.ring_doorbell(idx)
            self.pending.clear()

    def end_batch(self):
        self.batch_depth -= 1
        if self.batch_depth == 0:
            self.flush()
        self.lock.release()

    def _publish(self, q: Queue, idx: int):
        if self.batch_depth:
            self.pending[q] = idx
        else:
            q.ring_doorbell(idx)

    # -- commands ----------------------------------------------------------------------------------
    def _cross_engine_dep(self, engine: str):
        """The signal a command on ``engine`` must wait for to keep stream order, or 0."""
        if self.last_signal is not None and self.last_engine != engine:
            return self.last_signal.handle
        return 0

    def launch(self, kobj: int, sig: "object", args, grid, block, group_segment: int = 0,
               dims: int = 3) -> int:
        """Submit a kernel dispatch; returns its packet id."""
        if _intercept is not None:          # kernel replay / counter collection (hostside.replay)
            return _intercept(self, Dispatch(kobj, sig, tuple(args), tuple(grid), tuple(block), group_segment, dims))
        return self.submit_dispatch(kobj, sig, args, grid, block, group_segment, dims)

    def submit_dispatch(self, kobj: int, sig, args, grid, block, group_segment: int = 0, dims: int = 3) -> int:
        """The dispatch behind ``launch()``, past the interceptor."""
        with self.lock:
            dep = self._cross_engine_dep("aql")
            if not dep:
                return self._dispatch_locked(kobj, sig, args, grid, block, group_segment, dims)
            self.begin_batch()              # the cross-engine barrier and the kernel: one doorbell
            try:
                self._marker_locked([dep], signal=False)
                return self._dispatch_locked(kobj, sig, args, grid, block, group_segment, dims)
            finally:
                self.end_batch()

    def _dispatch_locked(self, kobj, sig, args, grid, block, group_segment, dims) -> int:
        q = self.queue
        s = self._next_signal()
        idx = q.add_write_index(1)
        q.wait_for_space(idx)
        koff, kaddr = q.kernarg_slot(idx)
        if sig.size:
            sig.pack_into(q.buf, koff, args)
        q.write_dispatch(idx, KERNEL_HEADER, dims, block, grid, kobj, kaddr, s.handle, group_segment)
        tr = self.rt.trace
        if tr is not None:
            tr.record(L.EV_LAUNCH, q.slot, L.dispatch_id(self.agent, q.slot, idx), kobj)
        self.last_signal = s
        self.last_engine = "aql"
        self.commands += 1
        self._publish(q, idx)
        return idx

    def write_dispatch_locked(self, d: Dispatch, completion: int, reserved2: int = 0) -> tuple[Queue, int]:
        """Write ``d`` as a dispatch packet on the stream's queue with an explicit completion signal
        handle (0: none) and ``reserved2`` word (a counter-request block address, 0: none); the caller
        holds ``self.lock``. Nothing is rung or published: the caller rings (or publishes) the returned
        index, which also covers the cross-engine barrier put first when the stream's last command
        went to SDMA. The stream's last signal is the caller's to set. Returns (queue, packet id).
        (The interceptor's path; ``launch()`` without an interceptor goes through ``_dispatch_locked``.)"""
        q = self.queue
        dep = self._cross_engine_dep("aql")
        if dep:
            j = q.add_write_index(1)
            q.wait_for_space(j)
            q.write_barrier(j, MARKER_HEADER, [dep], 0)
        self.last_engine = "aql"
        idx = q.add_write_index(1)
        q.wait_for_space(idx)
        koff, kaddr = q.kernarg_slot(idx)
        if d.sig.size:
            d.sig.pack_into(q.buf, koff, d.args)
        q.write_dispatch(idx, KERNEL_HEADER, d.dims, d.block, d.grid, d.kobj, kaddr, completion, d.group_segment,
                         reserved2=reserved2)
        tr = self.rt.trace
        if tr is not None:
            tr.record(L.EV_LAUNCH, q.slot, L.dispatch_id(self.agent, q.slot, idx), d.kobj)
        self.commands += 1
        return q, idx

    def _marker_locked(self, deps, signal=True):
        """``signal``: True = the next ring signal, False = none, or a Signal to use (set to 1 here)."""
        q = self.queue
        if signal is True:
            s = self._next_signal()
        elif signal:
            s = signal
            s.store_relaxed_nowake(1)
        else:
            s = None
        idx = q.add_write_index(1)
        q.wait_for_space(idx)
        q.write_barrier(idx, MARKER_HEADER, deps, s.handle if s else 0)
        self._publish(q, idx)
        if s is not None:
            self.last_signal = s
            self.last_engine = "aql"
        return s

    def marker(self, deps=(), signal=True):
        """A BARRIER_AND after everything before it on this stream; returns its completion signal
        (the next ring signal, or ``signal`` when one is given: an event's own signal)."""
        with self.lock:
            deps = list(deps)
            dep = self._cross_engine_dep("aql")
            if dep:
                deps.append(dep)
            if len(deps) <= 5:
                s = self._marker_locked(deps, signal)
            else:
                self.begin_batch()          # a chain of barriers: one doorbell
                try:
                    while len(deps) > 5:
                        self._marker_locked(deps[:5], signal=False)
                        deps = deps[5:]
                    s = self._marker_locked(deps, signal)
                finally:
                    self.end_batch()
            self.commands += 1
            return s

    def aux_queue(self, i: int) -> Queue:
        """The stream's i-th auxiliary AQL queue (created on first use, destroyed with the stream).
        Work on it is ordered with the stream only through signals (hostside.graph_exec)."""
        while len(self.aux) <= i:
            busy = {self.queue.engine} | {q.engine for q in self.aux}      # spread the branches
            self.aux.append(self.rt.queue_create(self.agent, self.queue.size, avoid_engines=busy))
        return self.aux[i]

    def _sdma_queue(self) -> Queue:
        if self.sdma is None:
            self.sdma = self.rt.queue_create(self.agent, 256, kind=L.QKIND_SDMA)
        return self.sdma

    def _sdma_submit(self, ptype, *, src=0, dst=0, size=0, fill_value=0, fill_width=0):
        with self.lock:
            q = self._sdma_queue()
            dep = self._cross_engine_dep("sdma")
            s = self._next_signal()
            idx = q.add_write_index(1)
            q.wait_for_space(idx)
            q.write_sdma(idx, ptype, dep=dep, src=src, dst=dst, size=size, signal=s.handle,
                         fill_value=fill_value, fill_width=fill_width)
            tr = self.rt.trace
            if tr is not None:
                tr.record(L.EV_COPY_SUBMIT, q.slot, L.dispatch_id(self.agent, q.slot, idx), size)
            self.last_signal = s
            self.last_engine = "sdma"
            self.commands += 1
            self._publish(q, idx)
            return s

    def copy(self, dst: int, src: int, size: int):
        """Device-address to device-address copy on the SDMA engine (either side may be pinned host)."""
        return self._sdma_submit(L.SDMA_TYPE_COPY, src=src, dst=dst, size=size)

    def fill(self, dst: int, value: int, count: int, width: int = 1):
        return self._sdma_submit(L.SDMA_TYPE_FILL, dst=dst, size=count * width,
                                 fill_value=value, fill_width=width)

    # -- pageable copies through staging -----------------------------------------------------------
    def _staging(self):
        if self.staging is None:
            self.staging = self.rt.allocate(None, STAGING_BYTES, L.ALLOC_STAGING)
        return self.staging

    def copy_from_host(self, dst: int, data: np.ndarray) -> None:
        """Pageable host -> device (synchronous for the host buffer, like hipMemcpy H2D)."""
        src = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        stage = self._staging()
        half = STAGING_BYTES // 2
        pos, k = 0, 0
        last = [None, None]
        while pos < len(src):
            n = min(half, len(src) - pos)
            buf = stage + (k & 1) * half
            if last[k & 1] is not None:          # the half is reused: its previous copy must be done
                self.sync_signal(last[k & 1])
            self.rt.host_view(buf, n)[:] = src[pos:pos + n]
            last[k & 1] = self.copy(dst + pos, buf, n)
            pos += n
            k += 1
        if self.last_signal is not None:
            self.sync_signal(self.last_signal)

    def copy_to_host(self, out: np.ndarray, src: int) -> None:
        """Device -> pageable host; ``out`` is a writable contiguous array."""
        dst = out.reshape(-1).view(np.uint8)
        stage = self._staging()
        half = STAGING_BYTES // 2
        pos = 0
        while pos < len(dst):
            n = min(half, len(dst) - pos)
            s = self.copy(stage, src + pos, n)
            self.sync_signal(s)
            dst[pos:pos + n] = self.rt.host_view(stage, n)
            pos += n

    # -- waits -------------------------------------------------------------------------------------
    def sync_signal(self, s) -> None:
        """Wait until ``s`` reaches 0: bounded by the runtime's ``wait_timeout_s``, aborted by a queue
        error or a dead device (checked every wait slice)."""
        self.flush()
        limit = self.rt.wait_timeout_s
        if s.wait(HSA_SIGNAL_CONDITION_EQ, 0, limit, check=self.check) != 0:
            raise HostWaitTimeout(f"stream wait on signal {s.handle:#x} ran out after {limit} s "
                                  f"(HDEMU_WAIT_TIMEOUT_S); AQL queue: {self.queue.describe()}"
                                  + (f"; SDMA queue: {self.sdma.describe()}" if self.sdma else ""))

    def synchronize(self) -> None:
        with self.lock:
            self.flush()
            s = self.last_signal
        if s is not None:
            self.sync_signal(s)
        else:
            self.check()

    def query(self) -> bool:
        """True when every command so far has completed (raises if the stream failed)."""
        with self.lock:
            self.flush()
            s = self.last_signal
        if s is not None and s.load() != 0:
            self.check()
            return False
        self.check()
        return True

    def destroy(self) -> None:
        try:
            self.synchronize()
        except HsaError as exc:     # the stream failed: its error was (or will be) reported at a sync
            _log.debug("destroying a failed stream of agent %d: %s", self.agent, exc)
        self.queue.destroy()
        if self.sdma is not None:
            self.sdma.destroy()
        for q in self.aux:
            q.destroy()
        for s in self.sigs:
            s.destroy()
        if self.staging is not None:
            try:
                self.rt.free(self.staging)
            except HsaError as exc:
                _log.warning("freeing the staging buffer of a stream of agent %d: %s", self.agent, exc)
