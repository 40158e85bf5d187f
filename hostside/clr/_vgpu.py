"""The command layer (ROCclr-like): a virtual GPU per stream turns commands into packets.

* ``VirtualGPU`` has the stream's AQL queue (and, lazily, an SDMA queue on the same agent), a ring
  of completion signals, and the stream's position: the signal of the last command and the engine
  it went to. The queues come from the process's pool (``_qpool``): the stream's own while the agent
  has slots, shared with other streams after that; every write to a queue holds its lock.
* Commands: kernel (dispatch packet with the barrier bit: streams are in order), marker (a
  BARRIER_AND with up to 5 dependencies and a signal, used for events and cross-engine order),
  copy and fill (SDMA packets that name the previous command's signal as their dependency).
* Submission batches: every command between ``begin_batch()`` and ``end_batch()`` goes to the ring
  with its header stored, and the doorbell is rung once per queue per batch. Outside a batch each
  command is its own batch (direct dispatch). Multi-packet commands (a kernel behind a
  cross-engine barrier, a marker with more than 5 dependencies) ring once.
* The interceptor hook: ``set_interceptor(fn)`` puts ``fn(vgpu, dispatch)`` on the kernel write
  path (kernel replay, ``hostside.replay``); ``dispatch`` is a frozen ``Dispatch`` record, built
  only while an interceptor is installed (and checked first: see *Check before you reserve*).

**The stream lock.** ``VirtualGPU.lock`` (re-entrant) is held for a whole command: taking a signal,
reserving packet ids, writing, publishing; and for a whole pageable copy (its chunks are commands of
the stream, so two threads copying through one stream, the null stream included, take turns).
``flush()`` from a thread that does not hold it rings nothing: packets wait to be rung only inside a
batch, whose owner rings them when it ends.

**Completion signals and when one is reused (the signal-reuse rule).** Each command takes the next
signal of the stream's ring of ``SIGNALS_PER_STREAM`` (``_next_signal``; a kernel, a copy or fill, a
marker without a signal of its own, a graph launch's tail, a replayed dispatch) and becomes the
stream's ``last_signal``. A signal is also *waited on*: the next command, when it goes to the other
engine, names it (the BARRIER_AND in front of a kernel after SDMA work, an SDMA packet's
``dep_signal`` after AQL work, a graph launch's or kernel replay's drain marker). So a ring signal
that reads 0 is not free yet: its waiter may not have looked at it, and re-arming it (1) would make
the waiter wait for a command queued behind itself: a deadlock once the host is a ring ahead.
Rule: **slot i is re-armed only once slot i and slot i+1 both read 0.** Every packet that may wait
on slot i belongs to a command after slot i's and no later than slot i+1's (it is written while slot
i is the last signal), and a stream completes its commands in order (a queue runs one packet at a
time; across engines each command waits for the one before), so slot i+1 at 0 means each of them
has passed. The host runs at most ``SIGNALS_PER_STREAM - 2`` commands ahead of the device.
A completion signal that is not the ring's (an event's: ``marker(signal=s, waiters=ws)``) is its
owner's to re-arm: the SDMA command that names it as its dependency appends ``(queue, packet id)``
to ``ws`` (only an SDMA command can: an AQL command depends across engines on an SDMA command's
signal, always the ring's), and the owner re-arms it only once the device has passed every packet
listed there (``hostside.hip._stream._event_rearm``).

**Check before you reserve.** A command reserves nothing until nothing can fail: the next packet id
is read (``Queue.next_id``, under the queue's lock, held for the whole window), space is waited for, the
kernargs are packed into that packet's kernarg slot and the body into its ring slot with the header
still INVALID (a bad argument or dimension raises here), and only then is the signal taken, the id
reserved and the header published. A rejected command leaves the stream exactly as it was.

Pageable host memory (numpy arrays, bytes) is copied through staging buffers in fine-grained
system memory, as ROCclr does for unpinned memory (``_staging.StagedCopies``, a base of ``VirtualGPU``).
"""
from __future__ import annotations

import logging
import threading
from time import monotonic_ns as _now

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.trace import EV_LAUNCH_RUNG

from ..hsa import HSA_SIGNAL_CONDITION_EQ, HostWaitTimeout, HsaError, Queue, Runtime
from ._dispatch import Dispatch, check_dispatch
from ._qpool import pool_of, staging_of
from ._sigring import SIGNALS_PER_STREAM, SignalRing
from ._staging import StagedCopies

__all__ = ["VirtualGPU", "Dispatch", "set_interceptor", "interceptor", "set_copy_fence", "copy_fence",
           "SIGNALS_PER_STREAM", "STAGING_BYTES", "KERNEL_HEADER", "MARKER_HEADER"]
_log = logging.getLogger("hdemu.clr")

#: Bytes of a staging buffer for pageable copies (copied in chunks of half of it; the process's
#: buffers are lent per copy, ``_qpool.StagingPool``); less, down to _STAGING_MIN, when the pool is short
STAGING_BYTES = 1 << 20
_STAGING_MIN = 1 << 14
#: ``synchronize()`` polls the last signal this many times (some tens of microseconds: about what a
#: short kernel takes to come back) before it sets up the bounded wait (``sync_signal``: spin, then
#: futex, with the liveness checks)
_SYNC_POLLS = 1024
#: Cross-stream waits a stream notes (``depend_on``) before it forgets those that are over.
_UPSTREAM_PRUNE = 32

KERNEL_HEADER = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True)
MARKER_HEADER = A.make_header(A.HSA_PACKET_TYPE_BARRIER_AND, barrier=True)
VENDOR_HEADER = A.make_header(A.HSA_PACKET_TYPE_VENDOR_SPECIFIC, barrier=True)

_U64_LIMIT = 1 << 64
#: the dispatch body from ``setup`` on (the header, bytes 0-1, is stored last, on its own)
_PKT_BODY = L.struct_of(A.kernel_dispatch_packet, "setup")
_BODY_OFF = L.offset_of(A.kernel_dispatch_packet, "setup")
_PKT_BYTES = A.kernel_dispatch_packet.itemsize
_KARG_BYTES = L.KERNARG_SLOT_BYTES
_DID_INDEX = L.dispatch_id(0, 0, -1)      # the packet-index bits of a dispatch id


#: The interceptor on the kernel write path (kernel replay: ``hostside.replay`` installs it through
#: ``set_interceptor`` when a tool configures the service). None in a process without replay, so
#: ``launch()`` pays nothing for it: ``VirtualGPU.launch`` is ``submit_dispatch`` itself while no
#: interceptor is installed and ``_launch_intercepted`` while one is (``set_interceptor`` rebinds it).
_intercept = None


def set_interceptor(fn) -> None:
    """Install ``fn(vgpu, dispatch) -> packet id`` on every stream's kernel write path, or remove it
    (``None``). ``fn`` submits the dispatch itself, through ``VirtualGPU.submit_dispatch`` (or
    ``write_dispatch_locked`` under the stream's lock, for its own completion signal and reserved2).
    A dispatch reaches ``fn`` only once ``check_dispatch`` passed."""
    global _intercept
    _intercept = fn
    VirtualGPU.launch = VirtualGPU.submit_dispatch if fn is None else VirtualGPU._launch_intercepted


def interceptor():
    """The installed interceptor, or None."""
    return _intercept


#: The copy fence (kernel replay's: ``hostside.replay`` installs it through ``set_copy_fence``): SDMA
#: copies and fills call ``fence(vgpu, submit, ptype, fields)``, which may hold them while a replay
#: window is open and submits them through ``submit(ptype, **fields)``. None: copies are not fenced.
_copy_fence = None


def set_copy_fence(fence) -> None:
    """Install (or remove, ``None``) the fence every SDMA copy and fill passes through."""
    global _copy_fence
    _copy_fence = fence


def copy_fence():
    """The installed copy fence, or None."""
    return _copy_fence


class VirtualGPU(SignalRing, StagedCopies):
    def __init__(self, rt: Runtime, agent: int, queue_size: int = 1024):
        self.rt = rt
        self.agent = agent
        self.pool = pool_of(rt)
        self.queue: Queue = self.pool.acquire(agent, L.QKIND_AQL, min(queue_size, rt.pm.topo.qmax))
        self.sdma: Queue | None = None
        self.aux: list[Queue] = []     # extra AQL queues of the agent: graph branches run on them
        self.sigs = []                 # the ring of completion signals (grows to SIGNALS_PER_STREAM)
        self.sig_next = 0              # the slot the next command takes
        self.ring_cap = SIGNALS_PER_STREAM   # smaller once the platform ran out of signals (_peek_signal)
        self.last_signal = None        # Signal of the last command, or None
        self.last_waiters = None       # when last_signal is not the ring's: its owner's waiter list
        self.last_engine = "aql"
        self.lock = threading.RLock()
        self.batch_depth = 0
        self.pending = {}              # queue -> last index written but not yet rung (inside a batch)
        self.staging = staging_of(rt, STAGING_BYTES, _STAGING_MIN)   # the process's, lent per copy
        self.commands = 0
        #: (signal, stream, queue, packet id): packet id of queue waits on a signal that a command of
        #: another stream completes (``depend_on``); while it waits, that stream's failure is ours
        self.upstream: list = []
        self._upstream_prune = _UPSTREAM_PRUNE
        self.failure: HsaError | None = None   # the error a failed stream had when it was destroyed
        q = self.queue
        self._s64 = rt.s64
        #: the stream queue's constants, for the direct-dispatch fast path (``submit_dispatch``)
        self._qc = (q.buf, q.ring_off, q.mask, q.kernarg_off, q.kernarg_base, q.a16, q.a64, q.i_read,
                    q.i_write, q.i_doorbell, q.i_rung, q.size, q.notify_engine, q.slot,
                    L.dispatch_id(agent, q.slot, 0), q.lock)

    def check(self, alive: bool = True):
        """Raise if this stream failed, or waits on a stream that failed, or (``alive``) its device
        is gone (``check_own``)."""
        self.check_own(alive)
        for sig, up, q, idx in self.upstream:
            if q.load_read_index() <= idx and sig.load() != 0:
                try:
                    up.check_own(alive)
                except HsaError as exc:     # its command never completes: nor does the packet waiting on it
                    if type(exc) is not HsaError:
                        raise               # a lost device, a timeout: as they are
                    raise HsaError(exc.status, f"this stream waits on another stream that failed: {exc}") from exc

    def check_own(self, alive: bool = True):
        """Raise if one of this stream's own queues failed (or failed before the stream was destroyed),
        or (``alive``) its device is gone."""
        if self.failure is not None:
            raise self.failure
        for q in (self.queue, self.sdma, *self.aux):
            if q is not None and not q.destroyed:
                q.check() if alive else q.check_status()

    def depend_on(self, sig, up) -> None:
        """The packet just written to this stream's queue (its lock held) waits on ``sig``, which a
        command of stream ``up`` completes: if ``up`` fails first, a wait on this stream raises its
        error (``check``) instead of running out the wait bound."""
        if up is None or up is self:
            return
        ups = self.upstream
        if len(ups) >= self._upstream_prune:    # forget the waits that are over (amortised: the limit
            ups[:] = [u for u in ups if u[2].load_read_index() <= u[3] and u[0].load() != 0]
            self._upstream_prune = max(_UPSTREAM_PRUNE, 2 * len(ups))   # doubles past still-pending waits)
        q = self.queue
        ups.append((sig, up, q, q.next_id - 1))

    # -- batches -----------------------------------------------------------------------------------
    def begin_batch(self):
        self.lock.acquire()
        self.batch_depth += 1

    def flush(self):
        """FlushSubmissionBatch: ring each queue's doorbell once with its last packet id. From a
        thread that does not hold the stream lock it rings nothing: then the holder is inside a batch
        and rings it when the batch ends."""
        if self.pending and self.lock.acquire(blocking=False):
            try:
                for q, idx in self.pending.items():
                    q.ring_doorbell(idx)
                self.pending.clear()
            finally:
                self.lock.release()

    def end_batch(self):
        try:
            self.batch_depth -= 1
            if self.batch_depth == 0:
                self.flush()
        finally:
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

    def _launch_intercepted(self, kobj: int, sig: "object", args, grid, block, group_segment: int = 0,
                            dims: int = 3) -> int:
        """``launch()`` while an interceptor is installed: the dispatch goes to it, checked first."""
        fn = _intercept
        if fn is None:                      # removed meanwhile
            return self.submit_dispatch(kobj, sig, args, grid, block, group_segment, dims)
        d = Dispatch(kobj, sig, tuple(args), tuple(grid), tuple(block), group_segment, dims)
        check_dispatch(d)                   # before the interceptor takes a signal of the stream
        return fn(self, d)

    def submit_dispatch(self, kobj: int, sig, args, grid, block, group_segment: int = 0, dims: int = 3) -> int:
        """The dispatch behind ``launch()``, past the interceptor: after SDMA work a BARRIER_AND on
        its signal goes first (one doorbell for both). Checked before anything is reserved.

        The common case (the stream's last command went to this queue) is written out here with the
        queue's constants bound once per stream (``_qc``); every step is the one of the general path
        (``_submit_dispatch_general``), in the same order."""
        lock = self.lock
        lock.acquire()      # acquire/try/release, not ``with``: ``with`` costs twice as much (CPython 3.11)
        try:
            if self.last_engine != "aql" and self.last_signal is not None:
                return self._submit_dispatch_general(kobj, sig, args, grid, block, group_segment, dims)
            q = self.queue
            (buf, ring_off, mask, karg_off, karg_base, a16, a64, i_read, i_write, i_doorbell, i_rung, size,
             wake, qslot, did_base, qlock) = self._qc
            qlock.acquire()                                 # the window: the queue may be shared
            try:
                idx = q.next_id
                if idx - a64[i_read] >= size:
                    q.wait_for_space(idx)
                k = (idx & mask) * _KARG_BYTES
                if sig.size:
                    sig.pack_into(buf, karg_off + k, args)      # a bad argument raises: nothing reserved
                sigs = self.sigs
                s = sigs[self.sig_next] if self.sig_next < len(sigs) else self._peek_signal()
                i = self.sig_next                           # (0 if the ring just stopped growing)
                off = ring_off + (idx & mask) * _PKT_BYTES
                _PKT_BODY.pack_into(buf, off + _BODY_OFF, dims, block[0], block[1], block[2], 0, grid[0],
                                    grid[1], grid[2], 0, group_segment, kobj, karg_base + k, 0, s.handle)
                # take the signal (the signal-reuse rule: this slot and the next one at 0, else wait)
                j = i + 1 if i + 1 < self.ring_cap else 0
                s64 = self._s64
                if s64[s._i] or (j < len(sigs) and s64[sigs[j]._i]):
                    self._take_signal(s)
                else:
                    self.sig_next = j
                    s64[s._i] = 1
                q.next_id = idx + 1                         # Queue.add_write_index(1)
                a64[i_write] = idx + 1
                a16[off >> 1] = KERNEL_HEADER               # the publish
                self.last_signal = s
                self.last_waiters = None
                self.commands += 1
                tr = self.rt.trace
                if self.batch_depth:
                    self.pending[q] = idx
                    if tr is not None:
                        tr.record(L.EV_LAUNCH, qslot, did_base | idx & _DID_INDEX, kobj)
                else:
                    ts = _now() if tr is not None else 0     # EV_LAUNCH_RUNG: stamped now, written after
                    a64[i_doorbell] = idx                   # Queue.ring_doorbell(idx): the newest id
                    a64[i_rung] += 1
                    wake()                                  # notify(the engine's wake word), pre-bound
                    if tr is not None:
                        tr.record(EV_LAUNCH_RUNG, qslot, did_base | idx & _DID_INDEX, kobj, ts)
                return idx
            finally:
                qlock.release()
        finally:
            lock.release()

    #: Submit a kernel dispatch; returns its packet id (``submit_dispatch``, or the interceptor's path
    #: while one is installed: ``set_interceptor``).
    launch = submit_dispatch

    def _submit_dispatch_general(self, kobj: int, sig, args, grid, block, group_segment: int = 0,
                                 dims: int = 3) -> int:
        """``submit_dispatch`` in general (after SDMA work: a BARRIER_AND on its signal goes first)."""
        with self.lock:
            q = self.queue
            with q.lock:                       # the window: the queue may be shared
                last = self.last_signal
                dep = last.handle if last is not None and self.last_engine != "aql" else 0
                first = q.next_id
                idx = first + 1 if dep else first
                q.wait_for_space(idx)
                koff, kaddr = q.kernarg_slot(idx)
                if sig.size:
                    sig.pack_into(q.buf, koff, args)            # a bad argument raises: nothing reserved
                i = self.sig_next
                s = self.sigs[i] if i < len(self.sigs) else self._peek_signal()
                q.write_dispatch_body(idx, dims, block, grid, kobj, kaddr, s.handle, group_segment)   # bad geometry
                self._take_signal(s)
                q.add_write_index(idx + 1 - first)
                if dep:
                    q.write_barrier(first, MARKER_HEADER, (dep,), 0)
                q.publish(idx, KERNEL_HEADER)
                tr = self.rt.trace
                if tr is not None:
                    tr.record(L.EV_LAUNCH, q.slot, L.dispatch_id(self.agent, q.slot, idx), kobj)
                self.last_signal = s
                self.last_waiters = None
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
        Checked before anything is reserved, like ``submit_dispatch``.
        (The interceptor's path; ``launch()`` without an interceptor goes through ``submit_dispatch``.)"""
        q = self.queue
        with q.lock:                       # the window: the queue may be shared
            dep = self._cross_engine_dep("aql")
            first = q.next_id
            idx = first + 1 if dep else first
            q.wait_for_space(idx)
            koff, kaddr = q.kernarg_slot(idx)
            if d.sig.size:
                d.sig.pack_into(q.buf, koff, d.args)
            q.write_dispatch_body(idx, d.dims, d.block, d.grid, d.kobj, kaddr, completion, d.group_segment,
                                  reserved2=reserved2)
            q.add_write_index(idx + 1 - first)
            if dep:
                q.write_barrier(first, MARKER_HEADER, (dep,), 0)
            q.publish(idx, KERNEL_HEADER)
            self.last_engine = "aql"
            tr = self.rt.trace
            if tr is not None:
                tr.record(L.EV_LAUNCH, q.slot, L.dispatch_id(self.agent, q.slot, idx), d.kobj)
            self.commands += 1
            return q, idx

    def _marker_locked(self, deps, signal=True, waiters=None):
        """One BARRIER_AND on the stream's queue. ``signal``: True = the next ring signal, False =
        none, or a Signal of its own (set to 1 here: an event's, whose ``waiters`` list later packets
        that wait on it go into). Returns the completion signal (None for none)."""
        return self._one_packet_locked(lambda q, idx, h: q.write_barrier_body(idx, deps, h), MARKER_HEADER,
                                       signal, waiters)

    def _one_packet_locked(self, write_body, header: int, signal=True, waiters=None):
        """One AQL packet, not a dispatch, on the stream's queue: ``write_body(queue, index, signal
        handle)`` writes its body, ``header`` publishes it; ``signal`` and ``waiters`` as for
        ``_marker_locked``. Returns the completion signal (None for none)."""
        q = self.queue
        with q.lock:                       # the window: the queue may be shared
            idx = q.next_id
            q.wait_for_space(idx)
            s = self._peek_signal() if signal is True else (signal or None)
            write_body(q, idx, s.handle if s is not None else 0)
            if signal is True:
                self._take_signal(s)
            elif s is not None:
                s.store_relaxed_nowake(1)
            q.add_write_index(1)
            q.publish(idx, header)
            self._publish(q, idx)
            if s is not None:
                self.last_signal = s
                self.last_waiters = None if signal is True else waiters
                self.last_engine = "aql"
            return s

    def marker(self, deps=(), signal=True, waiters=None):
        """A BARRIER_AND after everything before it on this stream; returns its completion signal
        (the next ring signal, or ``signal`` when one is given: an event's own signal; then ``waiters``
        is the list that later packets of this stream waiting on it are appended to)."""
        deps = list(deps)
        for d in deps:
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 0 <= d < _U64_LIMIT:
                raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"a dependency must be a signal handle, not {d!r}")
        with self.lock:
            dep = self._cross_engine_dep("aql")
            if dep:
                deps.append(dep)
            if len(deps) <= 5:
                s = self._marker_locked(deps, signal, waiters)
            else:
                self.begin_batch()          # a chain of barriers: one doorbell
                try:
                    while len(deps) > 5:
                        self._marker_locked(deps[:5], signal=False)
                        deps = deps[5:]
                    s = self._marker_locked(deps, signal, waiters)
                finally:
                    self.end_batch()
            self.commands += 1
            return s

    def value_packet(self, fmt: int, width: int, addr: int, value: int, mask: int = 0, cond: int = 0):
        """A vendor value packet (``amd_barrier_value_packet``: hipStreamWaitValue's barrier-value wait,
        hipStreamWriteValue's write) after everything before it on this stream; returns its signal."""
        with self.lock:
            dep = self._cross_engine_dep("aql")
            if dep:
                self._marker_locked([dep], signal=False)
            s = self._one_packet_locked(
                lambda q, idx, h: q.write_value_body(idx, fmt, width, addr, value, mask, cond, h), VENDOR_HEADER)
            self.commands += 1
            return s

    def aux_queue(self, i: int) -> Queue:
        """The stream's i-th auxiliary AQL queue (created on first use, destroyed with the stream).
        Work on it is ordered with the stream only through signals (hostside.graph_exec)."""
        while len(self.aux) <= i:
            busy = {self.queue.engine} | {q.engine for q in self.aux}      # spread the branches
            self.aux.append(self.pool.create_exclusive(self.agent, self.queue.size, avoid_engines=busy))
        return self.aux[i]

    def _sdma_queue(self) -> Queue:
        if self.sdma is None:
            self.sdma = self.pool.acquire(self.agent, L.QKIND_SDMA, 256)
        return self.sdma

    def _sdma_submit(self, ptype, *, src=0, dst=0, size=0, fill_value=0, fill_width=0, rect=None):
        """One SDMA packet; ``rect`` = (width, rows, src_pitch, dst_pitch) makes it a rectangular one
        (``size`` is then its bytes, for the trace)."""
        with self.lock:
            q = self._sdma_queue()
            with q.lock:                       # the window: the queue may be shared
                last = self.last_signal
                dep = last.handle if last is not None and self.last_engine != "sdma" else 0
                idx = q.next_id
                q.wait_for_space(idx)
                s = self._peek_signal()
                if rect is None:               # a bad field raises here, before anything is taken
                    q.write_sdma_body(idx, dep=dep, src=src, dst=dst, size=size, signal=s.handle,
                                      fill_value=fill_value, fill_width=fill_width)
                else:
                    q.write_sdma_rect_body(idx, dep=dep, src=src, dst=dst, width=rect[0], rows=rect[1],
                                           src_pitch=rect[2], dst_pitch=rect[3], signal=s.handle,
                                           fill_value=fill_value, fill_width=fill_width)
                self._take_signal(s)
                q.add_write_index(1)
                if dep and self.last_waiters is not None:
                    self.last_waiters.append((q, idx))
                q.publish(idx, ptype)
                tr = self.rt.trace
                if tr is not None:
                    tr.record(L.EV_COPY_SUBMIT, q.slot, L.dispatch_id(self.agent, q.slot, idx), size)
                self.last_signal = s
                self.last_waiters = None
                self.last_engine = "sdma"
                self.commands += 1
            self._publish(q, idx)
            return s

    def _sdma(self, ptype, fields: dict):
        """One SDMA command of ``fields`` (``_sdma_submit``'s keywords), through the copy fence when
        kernel replay installed one."""
        if _copy_fence is not None:
            return _copy_fence(self, self._sdma_submit, ptype, fields)
        return self._sdma_submit(ptype, **fields)

    def copy(self, dst: int, src: int, size: int):
        """Device-address to device-address copy on the SDMA engine (either side may be pinned host)."""
        return self._sdma(L.SDMA_TYPE_COPY, {"src": src, "dst": dst, "size": size})

    def fill(self, dst: int, value: int, count: int, width: int = 1):
        return self._sdma(L.SDMA_TYPE_FILL, {"dst": dst, "size": count * width, "fill_value": value,
                                             "fill_width": width})

    def copy_rect(self, dst: int, dst_pitch: int, src: int, src_pitch: int, width: int, rows: int):
        """``rows`` rows of ``width`` bytes, row r from ``src + r * src_pitch`` to ``dst + r *
        dst_pitch``: one SDMA packet (a pitched region of any height never waits for ring space)."""
        return self._sdma(L.SDMA_TYPE_COPY_RECT, {"src": src, "dst": dst, "size": width * rows,
                                                  "rect": (width, rows, src_pitch, dst_pitch)})

    def fill_rect(self, dst: int, pitch: int, value: int, width: int, rows: int, elem: int = 1):
        """``rows`` rows of ``width`` bytes ``pitch`` apart filled with ``value`` (``elem``-byte
        elements): one SDMA packet."""
        return self._sdma(L.SDMA_TYPE_FILL_RECT, {"dst": dst, "size": width * rows, "fill_value": value,
                                                  "fill_width": elem, "rect": (width, rows, 0, pitch)})

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
        lock = self.lock
        lock.acquire()                      # not ``with``: see submit_dispatch
        try:
            if self.pending:
                self.flush()
            s = self.last_signal
        finally:
            lock.release()
        if s is not None:
            s64, i = self._s64, s._i
            for _ in range(_SYNC_POLLS):    # done already, or about to be: no wait set up (sync_signal)
                if not s64[i]:
                    return
            self.sync_signal(s)
        else:
            # nothing submitted: nothing to wait for. A failed queue still raises; the device's
            # liveness is not looked at (a /proc read per queue, tens of us: a hipDeviceSynchronize
            # or a legacy null-stream sync paid it for every idle stream), as a stream whose work is
            # all done returns above without it
            self.check_own(alive=False)

    def query(self) -> bool:
        """True when every command so far has completed (raises if the stream failed; a stream
        still busy also if its device is gone: a polling loop must not spin on a dead device)."""
        with self.lock:
            self.flush()
            s = self.last_signal
        if s is not None and s.load() != 0:
            self.check()
            return False
        self.check_own(alive=False)
        return True

    def destroy(self) -> None:
        drained = True
        try:
            self.synchronize()
        except HsaError as exc:     # the stream failed: its error was (or will be) reported at a sync
            _log.debug("destroying a failed stream of agent %d: %s", self.agent, exc)
            drained = not isinstance(exc, HostWaitTimeout)
            if drained:
                self.failure = exc          # for the streams still waiting on it (check)
        self.pool.release(self.queue)          # the last stream of a shared queue destroys it
        if self.sdma is not None:
            self.pool.release(self.sdma)
        for q in self.aux:
            self.pool.release(q)
        if not drained:
            # a packet still waits (a wait the sync timed out on): on a queue that other streams share
            # it may complete later, so its signals are never handed out again (left to process exit)
            return
        for s in self.sigs:
            s.destroy()
