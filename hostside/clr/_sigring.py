"""The stream's ring of completion signals (``VirtualGPU``'s base): which signal the next command
takes, when a slot may be re-armed (the signal-reuse rule: ``hostside.clr._vgpu``'s docstring), and
the backpressure wait of a host a ring ahead of its device."""
from __future__ import annotations

import logging
import time

from shm_layout import layouts as L

from ..hsa import HsaError

__all__ = ["SignalRing", "SIGNALS_PER_STREAM", "BACKPRESSURE_WAIT_S", "BACKPRESSURE_NAP_S"]
_log = logging.getLogger("hdemu.clr")

#: Completion signals per stream: a command's signal is reused this many commands later, once it and
#: the signal after it have reached 0 (the signal-reuse rule of ``_vgpu``; ROCclr keeps a similar ring).
SIGNALS_PER_STREAM = 256
#: A ring stops growing before SIGNALS_PER_STREAM when its process holds half of the platform's
#: signals, but never below this many slots (``_peek_signal``).
_RING_MIN = 16
#: Backpressure (``_drain_wait``): at most this long, in naps of this long; rings below the minimum skip it.
BACKPRESSURE_WAIT_S = 2e-3
BACKPRESSURE_NAP_S = 100e-6
_BACKPRESSURE_MIN = 16


class SignalRing:
    """The signal ring of a stream; the stream (``VirtualGPU``) has ``rt``, ``agent``, ``sigs``,
    ``sig_next``, ``ring_cap``, ``_s64`` and the methods ``flush``, ``check`` and ``sync_signal``."""

    def _peek_signal(self):
        """The ring signal the next command takes (created on first use); nothing is taken."""
        i = self.sig_next
        sigs = self.sigs
        if i < len(sigs):
            return sigs[i]
        pool = self.rt.signals
        try:
            if i >= _RING_MIN and pool.owned * 2 > self.rt.pm.topo.n_signals:
                raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, "half of the platform's signals are ours")
            s = pool.create(0, kind=1)
        except HsaError as exc:
            if exc.status != L.HSA_STATUS_ERROR_OUT_OF_RESOURCES or len(sigs) < 2:
                raise
            # the process holds half of the platform's signals (many streams, each a ring deep), or
            # there is none left: this ring stops growing and wraps here, so that events and other
            # processes still get signals. The signal-reuse rule holds for any ring of two or more.
            _log.info("agent %d: a stream's completion-signal ring stops at %d (%s)", self.agent, len(sigs), exc)
            self.ring_cap = len(sigs)
            self.sig_next = 0
            return sigs[0]
        sigs.append(s)
        return s

    def _take_signal(self, s):
        """Take ``s`` (what ``_peek_signal`` returned) for a command: wait until the signal-reuse rule
        allows it (this slot and the next one at 0), set it to 1 and advance the ring."""
        sigs = self.sigs
        i = self.sig_next
        j = i + 1 if i + 1 < self.ring_cap else 0
        s64 = self.rt.s64
        n = sigs[j] if j < len(sigs) else None
        if s64[s._i] or (n is not None and s64[n._i]):
            if self.ring_cap == len(sigs) >= _BACKPRESSURE_MIN:
                self._drain_wait(sigs[(i + self.ring_cap // 4) % self.ring_cap])
            if s64[s._i]:
                self.sync_signal(s)
            if n is not None and s64[n._i]:
                self.sync_signal(n)
        self.sig_next = j
        s.store_relaxed_nowake(1)
        return s

    def _drain_wait(self, far) -> None:
        """Backpressure (the host is a ring ahead): nap until ``far``, the signal a quarter ring on (a
        later command), reads 0, for at most ``BACKPRESSURE_WAIT_S``, instead of spinning for one
        command after another; the bound keeps a command only the host can let through (a gate it
        opens later) from holding it up. The caller then waits for the slot itself.

        The naps are plain sleeps, not a futex wait on ``far``: a host that sleeps as a waiter makes
        the command processor pay a futex wake (a system call, and a sleeping process woken) on the
        packet that completes ``far``, once per quarter ring, on the engine thread that is the
        pipeline's bottleneck here. A quarter ring is far more device work than one nap, so napping
        costs the device nothing: the ring stays ahead of it."""
        self.flush()
        s64, i = self._s64, far._i
        if not s64[i]:
            return
        deadline = time.monotonic() + BACKPRESSURE_WAIT_S
        while s64[i] and time.monotonic() < deadline:
            time.sleep(BACKPRESSURE_NAP_S)
        self.check()

    def _next_signal(self):
        """The next completion signal of the ring, set to 1 (waits while the rule forbids reusing it)."""
        return self._take_signal(self._peek_signal())
