"""Cross-stream order points: a marker recorded on one stream that packets of other streams wait on,
and the rule for when its signal may be re-armed. Events use these primitives (``_stream``); so does
the legacy null stream (``_context``): work on a device's null stream waits for the blocking streams'
order points, and a blocking stream's next command waits for the null stream's.

A signal that a packet names is re-armed only once nobody can still wait on it: it reads 0, every
packet listed as waiting on it has been passed by the device, and it is not the last signal of the
stream it was recorded on (that stream's next SDMA command would name it). Signals that may still be
waited on when their owner goes away are *buried* and released by ``sweep_buried`` once reusable.
"""
from __future__ import annotations

import threading

__all__ = ["add_waiter", "pending", "reusable", "fresh_signal", "sweep_buried", "bury", "has_buried", "OrderPoint"]


def add_waiter(ws: list, q, idx: int) -> None:
    """Note that packet ``idx`` of ``q`` waits on the signal ``ws`` belongs to (pruned in place: the
    command layer may hold this very list as its stream's ``last_waiters``)."""
    if len(ws) > 32:
        ws[:] = [(wq, i) for wq, i in ws if not wq.destroyed and wq.load_read_index() <= i]
    ws.append((q, idx))


def pending(ws) -> bool:
    """A packet listed in ``ws`` has not been passed by the device yet."""
    return any(not q.destroyed and q.load_read_index() <= i for q, i in ws)


def reusable(sig, ws, v) -> bool:
    """Nobody can wait on ``sig`` any more: it is 0, every packet that named it has been passed, and
    it is not the last signal of ``v`` (the stream it was recorded on: its next SDMA command would
    name it)."""
    return (sig.load() == 0 and not pending(ws)
            and (v is None or v.queue.destroyed or v.last_signal is not sig))


#: Signals whose owner is gone but that a packet or a stream may still name (sig, waiters, stream):
#: released by ``sweep_buried`` once ``reusable``.
_buried: list = []
_buried_lock = threading.Lock()


def sweep_buried(more=()) -> None:
    with _buried_lock:
        _buried.extend(more)
        keep = []
        for sig, ws, v in _buried:
            if sig.rt.closed or sig.destroyed:
                continue
            if reusable(sig, ws, v):
                sig.destroy()
            else:
                keep.append((sig, ws, v))
        _buried[:] = keep


def bury(items) -> None:
    """Add (sig, waiters, stream) entries for a later sweep, releasing nothing now (safe from the
    async-handler thread, inside the handler of one of those very signals)."""
    with _buried_lock:
        _buried.extend(items)


def fresh_signal(retired: list, rt):
    """A signal for a new record: the first of ``retired`` (sig, waiters, stream) that nobody can wait
    on any more (taken out of the list), or a new one."""
    for j, (sig, ws, rv) in enumerate(retired):
        if reusable(sig, ws, rv):
            return retired.pop(j)[0]
    return rt.signals.create(0, kind=2)


def has_buried() -> bool:
    return bool(_buried)


class OrderPoint:
    """The latest point of stream ``v`` that other streams can be made to wait for: a marker with a
    signal of its own, recorded lazily (only when a waiter needs it and ``v`` has work that is not
    done yet). ``lock`` keeps a record and the waits on it together (lock order: order point, then
    stream)."""

    __slots__ = ("v", "rt", "signal", "waiters", "retired", "mark", "lock", "idle_at", "released")

    def __init__(self, v):
        self.v = v
        self.rt = v.rt
        self.signal = None          # the signal of the last record
        self.waiters: list = []     # (queue, packet id) of packets waiting on it
        self.retired: list = []     # (signal, waiters, stream) of earlier records still waited on
        self.mark = None            # (commands, last signal) of v at the last record
        self.lock = threading.Lock()
        #: ``v.commands`` when ``v`` was last seen with all its work done: while it has taken no
        #: command since, there is nothing to wait for (no lock taken: the legacy null stream checks
        #: every blocking stream at each of its launches)
        self.idle_at = -1
        self.released = False       # its stream was destroyed (after a sync): nothing to wait for

    def wait_from(self, w) -> bool:
        """Make the next command of stream ``w`` (a VirtualGPU, not ``v``) wait for everything
        submitted to ``v`` so far. Nothing is added when that work is done already; raises the
        HsaError of ``v`` when ``v`` failed (it would never get there). True if a wait was added."""
        v = self.v
        if v.commands == self.idle_at:
            return False                    # nothing submitted to v since it was seen idle
        with self.lock:
            if self.released:               # destroyed by another thread since the caller looked it up
                return False
            with v.lock:
                last = v.last_signal
                if last is None or last.load() == 0:
                    self.idle_at = v.commands
                    return False            # v is idle: nothing to wait for
                v.check()                   # a failed stream runs nothing more: HsaError, no wait
                if self.mark != (v.commands, last):
                    self._record()
            sig = self.signal
            with w.lock:
                w.marker([sig.handle])
                add_waiter(self.waiters, w.queue, w.queue.next_id - 1)
                w.depend_on(sig, v)
            return True

    def _record(self) -> None:
        """A marker on ``v`` (its lock held) with this point's signal, re-armed or fresh."""
        v = self.v
        sig = self.signal
        if sig is None or not reusable(sig, self.waiters, None):
            fresh = fresh_signal(self.retired, self.rt)
            if sig is not None:
                self.retired.append((sig, self.waiters, v))
            self.signal = sig = fresh
        self.waiters = []
        v.marker(signal=sig, waiters=self.waiters)
        self.mark = (v.commands, v.last_signal)

    def release(self) -> None:
        """The stream goes away: its signals are released once nobody can wait on them."""
        with self.lock:
            self.released = True
            dead = list(self.retired)
            if self.signal is not None:
                dead.append((self.signal, self.waiters, self.v))
            self.signal, self.retired = None, []
        if dead:
            sweep_buried(dead)
