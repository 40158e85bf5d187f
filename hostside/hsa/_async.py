"""The async-handler thread (``hsa_amd_signal_async_handler`` and queue error callbacks)."""
from __future__ import annotations

import threading

from shm_layout import layouts as L

from ._errors import HsaError
from ._signal import CONDITIONS

__all__ = ["AsyncHandler"]


class AsyncHandler:
    """The async-handler thread: calls ``handler(value, arg)`` when a signal meets a condition
    (``hsa_amd_signal_async_handler``; the handler returns True to stay armed) and queue error
    callbacks. It polls its registrations with a backing-off sleep (100 us .. 2 ms) while it has any
    and blocks on a condition variable while it has none."""

    POLL_MIN_S = 100e-6
    POLL_MAX_S = 2e-3

    def __init__(self, rt):
        self.rt = rt
        self.cv = threading.Condition()
        self.regs: list = []        # [signal, cond, value, handler, arg]
        self.queues: list = []
        self.thread = None
        self.stopping = False
        self.in_flight = 0          # handlers currently running
        self.calls = 0
        self.kicked = False

    def kick(self) -> None:
        """Poll the registrations now instead of after the back-off sleep (a waiter that has seen
        its signal change and now waits for the handler: kernel replay's per-pass drain)."""
        with self.cv:
            self.kicked = True
            self.cv.notify()

    def _ensure(self):
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="hsa-async-handler", daemon=True)
            self.thread.start()

    def register(self, signal, cond: int, value: int, handler, arg=None) -> None:
        if cond not in CONDITIONS:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"signal condition must be 0-3, not {cond}")
        with self.cv:
            self.regs.append([signal, cond, value, handler, arg])
            self._ensure()
            self.cv.notify()

    def watch_queue(self, q) -> None:
        with self.cv:
            self.queues.append(q)
            self._ensure()
            self.cv.notify()

    def pending(self) -> int:
        with self.cv:
            return len(self.regs) + self.in_flight

    def _run(self):
        sleep = self.POLL_MIN_S
        while True:
            with self.cv:
                while not self.stopping and not self.regs and not self.queues:
                    self.cv.wait()
                if self.stopping:
                    return
                regs = list(self.regs)
                queues = list(self.queues)
            fired = False
            for reg in regs:
                sig, cond, value, handler, arg = reg
                v = sig.load()
                if CONDITIONS[cond](v, value):
                    with self.cv:
                        self.in_flight += 1
                    try:
                        keep = handler(v, arg)
                    finally:
                        with self.cv:
                            self.in_flight -= 1
                            self.calls += 1
                            if not keep and reg in self.regs:
                                self.regs.remove(reg)
                    fired = True
            for q in queues:
                if q.status and not q.error_reported:
                    q.error_reported = True
                    q.callback(q.status, q, q.data)
                    fired = True
                if q.destroyed:
                    with self.cv:
                        if q in self.queues:
                            self.queues.remove(q)
            if fired:
                sleep = self.POLL_MIN_S
                continue
            with self.cv:       # kick() (kernel replay's pass drain) ends the back-off sleep at once
                if not self.kicked and not self.stopping:
                    self.cv.wait(sleep)
                self.kicked = False
            sleep = min(sleep * 2, self.POLL_MAX_S)

    def stop(self):
        with self.cv:
            self.stopping = True
            self.cv.notify_all()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(2.0)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()
_default_config: dict | None = None
