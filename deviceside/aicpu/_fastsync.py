"""Pre-bound atomics for the per-packet hot paths of the device side (command processor, task rings).

``shm_layout.sync`` converts every argument of every call through ctypes ``argtypes`` (and drops the
GIL around it): on the machines hdemu runs on that is 0.7-1.5 us a call, more than the rest of a
packet's bookkeeping. The same libatomic functions are bound here once more, without ``argtypes`` and
through ``ctypes.PyDLL`` (an atomic never blocks, so there is no point in releasing the GIL, and not
releasing it spares a hand-over to another engine thread), and are called with ctypes objects built
once per address: about 0.3 us a call. The semantics are those of ``shm_layout.sync`` (sequentially
consistent, lock-prefixed on x86-64); the slow paths (a waiter to wake) go through it.

* ``Notifier(word_addr)()``: ``sync.notify`` of one wake word: a locked read of ``waiters`` (the full
  barrier that orders the caller's publish before the check), and the wake only when someone waits.
* ``Decrementer(base_addr)``: ``fetch_add(base_addr + off, -1)`` for words of a table whose entry
  addresses are cached (the completion signals of the command processor).
"""
from __future__ import annotations

import ctypes
import ctypes.util

from shm_layout.sync import futex_wake, notify

__all__ = ["Notifier", "Decrementer"]

_la = ctypes.PyDLL(ctypes.util.find_library("atomic") or "libatomic.so.1")
# no argtypes: every argument is passed as a ready-made ctypes object (or a small int: the memory order)
_fa4 = _la.__atomic_fetch_add_4
_fa4.restype = ctypes.c_uint32
_fa8 = _la.__atomic_fetch_add_8
_fa8.restype = ctypes.c_uint64
_SEQ_CST = 5
_ZERO32 = ctypes.c_uint32(0)
_ONE32 = ctypes.c_uint32(1)
_MINUS1_64 = ctypes.c_uint64((1 << 64) - 1)


class Notifier:
    """``shm_layout.sync.notify(word_addr)`` with the word's address bound once; returns True when a
    wake-up was sent."""

    __slots__ = ("addr", "_waiters")

    def __init__(self, word_addr: int):
        self.addr = word_addr
        self._waiters = ctypes.c_void_p(word_addr + 4)

    def __call__(self) -> bool:
        if _fa4(self._waiters, _ZERO32, _SEQ_CST) == 0:      # locked: the barrier before the check
            return False
        return notify(self.addr)


class Decrementer:
    """Atomic ``-1`` on the u64 at ``base_addr + i * stride + off`` (entries of one table), with each
    entry's ctypes pointer built on first use; ``wake(i)`` bumps the entry's wake word (u32 ``seq`` at
    ``wake_off``) and wakes its sleepers, as ``CommandProcessor.complete_signal`` does."""

    __slots__ = ("base", "stride", "off", "wake_off", "_ptrs", "_wakes")

    def __init__(self, base_addr: int, stride: int, off: int, wake_off: int):
        self.base, self.stride, self.off, self.wake_off = base_addr, stride, off, wake_off
        self._ptrs: dict[int, ctypes.c_void_p] = {}
        self._wakes: dict[int, ctypes.c_void_p] = {}

    def __call__(self, i: int) -> int:
        """Decrement entry ``i``'s word; returns the old value."""
        p = self._ptrs.get(i)
        if p is None:
            p = self._ptrs[i] = ctypes.c_void_p(self.base + i * self.stride + self.off)
        return _fa8(p, _MINUS1_64, _SEQ_CST)

    def wake(self, i: int) -> None:
        """Bump entry ``i``'s wake word and wake everyone sleeping on it."""
        p = self._wakes.get(i)
        if p is None:
            p = self._wakes[i] = ctypes.c_void_p(self.base + i * self.stride + self.wake_off)
        _fa4(p, _ONE32, _SEQ_CST)
        futex_wake(p.value)
