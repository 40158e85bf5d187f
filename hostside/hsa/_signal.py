"""hsa_signal_t: 64-byte slots of the platform's signal table, and the pool that claims them.

A signal's value changes by atomic add (several engines may decrement one signal); a slot's owner
word by cas. Waits spin ``WAIT_SPIN_S``, then sleep on the slot's wake word (``seq``), checking the
devices after each ``WAIT_SLICE_S`` slice.
"""
from __future__ import annotations

import itertools
import os
import threading

import numpy as np

from shm_layout import layouts as L
from shm_layout.sync import cas, fetch_add, notify, wait_until

from ._errors import HsaError

__all__ = ["Signal", "SignalPool", "HSA_SIGNAL_CONDITION_EQ", "HSA_SIGNAL_CONDITION_NE",
           "HSA_SIGNAL_CONDITION_LT", "HSA_SIGNAL_CONDITION_GTE", "CONDITIONS", "U64_MAX"]

U64_MAX = (1 << 64) - 1

# hsa_signal_condition_t
HSA_SIGNAL_CONDITION_EQ = 0
HSA_SIGNAL_CONDITION_NE = 1
HSA_SIGNAL_CONDITION_LT = 2
HSA_SIGNAL_CONDITION_GTE = 3
#: condition -> test(value, compare_value)
CONDITIONS = {
    HSA_SIGNAL_CONDITION_EQ: lambda v, x: v == x,
    HSA_SIGNAL_CONDITION_NE: lambda v, x: v != x,
    HSA_SIGNAL_CONDITION_LT: lambda v, x: v < x,
    HSA_SIGNAL_CONDITION_GTE: lambda v, x: v >= x,
}
# word indices in a u64 / u32 view of the signal table, derived from the declared layout
_W_VALUE = L.word_of(L.signal_slot, "value")
_W_START = L.word_of(L.signal_slot, "start_ts")
_W_END = L.word_of(L.signal_slot, "end_ts")
_SLOT_WORDS = L.signal_slot.itemsize // 8
_OFF_OWNER = L.offset_of(L.signal_slot, "owner")
#: Slots after the cursor a claim looks at before it scans the whole table.
_CLAIM_WINDOW = 64


def _free_slots(owners, c: int):
    """Candidate free slots of the signal table for a claim, lazily: the ones right after the cursor
    ``c`` first (the common case: a ring growing one signal at a time), then the whole table from the
    cursor on, twice (a slot seen free may be taken by another process before its cas)."""
    for j in np.flatnonzero(owners[c:c + _CLAIM_WINDOW] == 0):
        yield c + int(j)
    for _ in range(2):
        free = np.flatnonzero(owners == 0)
        if not len(free):
            return
        start = int(np.searchsorted(free, c))
        for j in itertools.chain(range(start, len(free)), range(0, start)):
            yield int(free[j])


_signed = L.signed64


# ------------------------------------------------------------------------------------------------
class Signal:
    """An hsa_signal_t: a 64-byte slot in the platform's signal table."""

    __slots__ = ("rt", "slot", "handle", "addr", "_i", "destroyed")

    def __init__(self, rt: "Runtime", slot: int):
        self.rt = rt
        self.slot = slot
        self.handle = L.SIGNAL_HANDLE_BASE + slot * L.SIGNAL_SLOT_BYTES
        self.addr = rt.pm.signal_addr(slot)
        self._i = slot * _SLOT_WORDS + _W_VALUE
        self.destroyed = False

    def load(self) -> int:
        return _signed(self.rt.s64[self._i])

    def store(self, value: int) -> None:
        self.rt.s64[self._i] = value & U64_MAX
        notify(self.addr + L.SIG_WAKE)

    def store_relaxed_nowake(self, value: int) -> None:
        """Store without waking anyone: for a signal nobody can be waiting on yet."""
        self.rt.s64[self._i] = value & U64_MAX

    def add(self, delta: int) -> int:
        old = fetch_add(self.addr, delta)
        notify(self.addr + L.SIG_WAKE)
        return _signed(old)

    def subtract(self, delta: int) -> int:
        return self.add(-delta)

    @property
    def start_ts(self) -> int:
        return self.rt.s64[self._i - _W_VALUE + _W_START]

    @property
    def end_ts(self) -> int:
        return self.rt.s64[self._i - _W_VALUE + _W_END]

    def wait(self, cond: int, value: int, timeout_s: float | None = None, *, check=None) -> int:
        """hsa_signal_wait_scacquire: returns the observed value (which may miss the condition on
        timeout). ``check`` raises to abort (device lost, queue error)."""
        test = CONDITIONS.get(cond)
        if test is None:
            raise HsaError(L.HSA_STATUS_ERROR_INVALID_ARGUMENT, f"signal condition must be 0-3, not {cond}")
        s64, i = self.rt.s64, self._i

        def ok():
            v = s64[i]
            v = _signed(v)
            return (v,) if test(v, value) else None
        r = wait_until(ok, self.addr + L.SIG_WAKE, timeout_s, check=check or self.rt.check_devices)
        return r[0] if r else self.load()

    def destroy(self) -> None:
        """Give the slot back to the pool (once: a second destroy, from any thread, does nothing)."""
        self.rt.signals.release(self)

    def __repr__(self):
        return f"<Signal {self.handle:#x} value={self.load()}>"


class SignalPool:
    """Claims signal slots by cas on their owner word; keeps released slots for reuse."""

    def __init__(self, rt: "Runtime"):
        self.rt = rt
        self.free: list[int] = []
        self.cursor = (os.getpid() * 97) % rt.pm.topo.n_signals
        self.lock = threading.Lock()
        self.owned = 0

    def create(self, initial: int = 0, kind: int = 0) -> Signal:
        with self.lock:
            slot = self.free.pop() if self.free else self._claim()
            self.owned += 1
        sig = Signal(self.rt, slot)
        self.rt.pm.signals[slot]["kind"] = kind
        sig.store_relaxed_nowake(initial)
        return sig

    def _claim(self) -> int:
        n = self.rt.pm.topo.n_signals
        me = L.own_word(os.getpid(), L.OWN_ALLOCATED)
        owners = self.rt.pm.signals["owner"]
        for slot in _free_slots(owners, self.cursor):
            if cas(self.rt.pm.signal_addr(slot) + _OFF_OWNER, 0, me):
                self.cursor = (slot + 1) % n
                return slot
        raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"all {n} signals of the platform are in use")

    def release(self, sig: Signal) -> None:
        with self.lock:
            if sig.destroyed:
                return
            sig.destroyed = True
            self.free.append(sig.slot)
            self.owned -= 1

