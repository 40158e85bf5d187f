"""The copy fence: async copies and fills held out of replay windows (rocprofiler-sdk
``kernel_replay/copy_fence``).

A replay window drains the agent's queues before it snapshots, but a copy issued *during* the window
(another thread's ``hipMemcpyAsync``, an SDMA fill) would land between ``snap()`` and a ``restore()``
and be reverted, or be read half-way through the passes. With the fence installed (``configure``,
``copy_fence=True``, the default) every SDMA copy and fill made through the command layer
(``VirtualGPU.copy``/``fill``, and so ``copy_to_host``/``copy_from_host``) counts itself in flight on
each agent it touches (the stream's agent and the owners of its source and destination) until its
packet has been consumed, and does not start while a window is open on any of them. A window opens
the fence on its agent before it snapshots: first it lets the copies the previous window held off
start, then it closes the door on new ones and waits, bounded by ``copy_fence_timeout_s``, for those
in flight; if they do not finish the dispatch is declined (``copy_fence_stuck``).

A copy made from inside a tool callback never waits (its thread may hold the window): it goes ahead
and marks the window of its agent as tainted (the outcome's ``reentrancy``), as a reentrant dispatch
does. A copy waits for a window at most ``hsa.Runtime.wait_timeout_s`` (then ``HostWaitTimeout``).
"""
from __future__ import annotations

import sys
import threading
import time

from shm_layout import layouts as L

from ..hsa import HostWaitTimeout
from . import _context, _diagnostics
from ._state import state

__all__ = ["CopyFence", "FENCE", "taint"]

_POLL_S = 1e-3


def taint(ag) -> bool:
    """Mark the window open on ``ag`` (an ``_state._Agent``) as tainted; warn once per process."""
    f = ag.frame
    if f is None:
        return False
    f.reentrancy_observed = True
    if _diagnostics.should_warn_replay_reentrancy():
        print(f"hdemu replay: warning: a tool callback submitted GPU work (a dispatch or a copy) on agent "
              f"{ag.index} inside its replay window; that window's counters are not trustworthy (its outcome "
              f"says reentrancy=1). This warning is given once.", file=sys.stderr, flush=True)
    return True


class _AgentFence:
    __slots__ = ("cv", "window", "waiting", "entered", "pending")

    def __init__(self):
        self.cv = threading.Condition(threading.Lock())
        self.window = False
        self.waiting = 0          # copies held off by the open window
        self.entered = 0          # copies past the fence, not yet submitted
        self.pending = []         # (queue, packet id) of submitted copies not yet seen consumed

    def in_flight(self) -> int:
        """Copies in flight (caller holds ``cv``); consumed ones are dropped."""
        keep = [(q, i) for q, i in self.pending
                if not q.destroyed and not q.status and q.load_read_index() <= i]
        self.pending = keep
        return self.entered + len(keep)


class CopyFence:
    """The fence (one per process, ``FENCE``); installed on the command layer as
    ``clr.set_copy_fence(FENCE)``, which calls it as ``fence(vgpu, submit, ptype, fields)``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._fences: dict[int, _AgentFence] = {}

    def _of(self, agent: int) -> _AgentFence:
        with self._lock:
            f = self._fences.get(agent)
            if f is None:
                f = self._fences[agent] = _AgentFence()
            return f

    @staticmethod
    def agents_of(v, src: int, dst: int) -> list[int]:
        """The agents one copy touches: the stream's and the owners of its device-memory ends."""
        n = len(v.rt.agents)
        out = {v.agent}
        for a in (src, dst):
            if a and L.DEVICE_BASE <= a < L.device_base(n):
                out.add((a - L.DEVICE_BASE) >> 40)
        return sorted(out)

    # -- the copy side -----------------------------------------------------------------------------
    def __call__(self, v, submit, ptype, fields: dict):
        agents = self.agents_of(v, fields.get("src", 0), fields.get("dst", 0))
        if _context.in_callback():
            st = state(v.rt)
            for a in agents:
                taint(st.agents[a])
            return submit(ptype, **fields)
        limit = v.rt.wait_timeout_s
        done = []
        try:
            for a in agents:
                f = self._of(a)
                with f.cv:
                    if f.window:
                        f.waiting += 1
                        try:
                            ok = f.cv.wait_for(lambda f=f: not f.window, limit)
                        finally:
                            f.waiting -= 1
                            f.cv.notify_all()
                        if not ok:
                            raise HostWaitTimeout(f"an async copy waited {limit} s (HDEMU_WAIT_TIMEOUT_S) for the "
                                                  f"replay window on agent {a} to close")
                    f.entered += 1
                done.append(f)
            with v.lock:
                s = submit(ptype, **fields)
                q = v.sdma
                idx = q.next_id - 1
        except BaseException:
            for f in done:
                with f.cv:
                    f.entered -= 1
                    f.cv.notify_all()
            raise
        for f in done:
            with f.cv:
                f.entered -= 1
                f.pending.append((q, idx))
        return s

    # -- the window side ---------------------------------------------------------------------------
    def open_window(self, agent: int, timeout_s: float) -> bool:
        """Let the copies the previous window held off start, then hold new copies on ``agent`` and
        wait for those in flight; False (and the fence open again) if they did not finish in time."""
        f = self._of(agent)
        deadline = time.monotonic() + timeout_s
        with f.cv:
            f.cv.wait_for(lambda: f.waiting == 0, max(0.0, deadline - time.monotonic()))
            f.window = True
            while f.in_flight():
                left = deadline - time.monotonic()
                if left <= 0:
                    f.window = False
                    f.cv.notify_all()
                    return False
                f.cv.wait(min(_POLL_S, left))
            return True

    def close_window(self, agent: int) -> None:
        f = self._of(agent)
        with f.cv:
            f.window = False
            f.cv.notify_all()

    def copies_in_flight(self, agent: int) -> int:
        f = self._of(agent)
        with f.cv:
            return f.in_flight()

    def copies_waiting(self, agent: int) -> int:
        f = self._of(agent)
        with f.cv:
            return f.waiting


FENCE = CopyFence()
