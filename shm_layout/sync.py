"""Cross-process atomics, futexes and the spin-then-block wait.

Rationale
---------
Plain numpy stores are fine for single-writer fields (aligned 8-byte stores never tear on x86-64),
but three things need more than a store:

* read-modify-write by several writers (a signal decremented by the command processor while the
  host also subtracts from it, slot ownership claimed by several processes) -> ``fetch_add`` and
  ``cas`` from libatomic through ctypes (lock-prefixed instructions; ~0.5 us a call, ~0.3 us through
  the pre-bound ``Notifier`` and ``Decrementer`` of the per-packet paths);
* the sleep/wake handshake ("I am going to sleep" vs "I published work") -> needs a full barrier
  on both sides, which numpy cannot issue; a locked RMW is one, so the waiter *increments* a
  waiter count and the notifier *reads it with a locked RMW* (``fetch_add(addr, 0)``);
* blocking without burning a core -> ``futex(FUTEX_WAIT)`` on a 32-bit word in the shared
  mapping (not FUTEX_PRIVATE: the word is shared between processes). ctypes releases the GIL
  during the call, so other threads of the process keep running.

A *wake word* is 8 bytes: ``seq`` (u32, the futex word) then ``waiters`` (u32). Waiters:
spin on the condition for ``spin_s``; then ``waiters += 1`` (locked), re-check, ``futex_wait(seq,
seen)`` with a bounded slice, ``waiters -= 1``. Notifiers: make the condition true, then
``notify(word)`` which bumps ``seq`` and wakes only if someone is waiting. Either the waiter sees
the condition on its re-check or the notifier sees the waiter: no lost wake-up.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from functools import partial as _partial
import platform as _platform
import os
import time

from .errors import PlatformError

__all__ = [
    "address_of", "fetch_add", "fetch_add32", "cas", "exchange", "load_acquire", "futex_wait",
    "futex_wake", "notify", "wait_until", "WAIT_SPIN_S", "WAIT_SLICE_S", "Notifier", "Decrementer",
]

#: How long a waiter spins before it blocks (ROCR spins ~200 us before sleeping).
WAIT_SPIN_S = 200e-6
#: Longest single futex sleep; every blocking wait re-checks its liveness predicate this often.
WAIT_SLICE_S = 0.05

_libatomic_name = ctypes.util.find_library("atomic") or "libatomic.so.1"
try:
    _pla = ctypes.PyDLL(_libatomic_name)
except OSError as exc:  # pragma: no cover - the image ships libatomic1
    raise ImportError(
        f"hdemu needs libatomic (Debian package libatomic1) for cross-process atomics: {exc}"
    ) from exc

_SEQ_CST = 5
# The atomics are bound through ``ctypes.PyDLL`` without ``argtypes``: every argument is handed over
# as a ready-made ctypes object (the memory order as a small int), so ctypes converts nothing, and
# the GIL is kept across the call (an atomic never blocks: releasing the GIL would only invite a
# hand-over to another thread). About 0.5 us a call where ``argtypes`` through ``CDLL`` costs
# 1.2-1.6 us; ``Notifier`` and ``Decrementer`` below also build their pointers once (~0.3-0.45 us).
# Same instructions either way (sequentially consistent, lock-prefixed on x86-64).
_fa8 = _pla.__atomic_fetch_add_8
_fa8.restype = ctypes.c_uint64
_fa4 = _pla.__atomic_fetch_add_4
_fa4.restype = ctypes.c_uint32
_xc8 = _pla.__atomic_exchange_8
_xc8.restype = ctypes.c_uint64
_cas8 = _pla.__atomic_compare_exchange_8
_cas8.restype = ctypes.c_bool
_ld8 = _pla.__atomic_load_8
_ld8.restype = ctypes.c_uint64
_VP = ctypes.c_void_p
_U64 = ctypes.c_uint64
_U32 = ctypes.c_uint32
_ZERO32 = _U32(0)
_ONE32 = _U32(1)
_MINUS1_32 = _U32(0xFFFFFFFF)
_MINUS1_64 = _U64((1 << 64) - 1)

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
#: futex(2) syscall number per machine (``platform.machine()``), from each arch's unistd.h
#: (asm/unistd_64.h on x86-64; the generic table on arm64 and riscv64; powerpc64's and s390x's own).
FUTEX_SYSCALL = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98,
                 "ppc64le": 221, "ppc64": 221, "s390x": 238}
_MACHINE = _platform.machine().lower()
try:
    _SYS_futex = FUTEX_SYSCALL[_MACHINE]
except KeyError:
    raise PlatformError(f"no futex syscall number known for machine {_MACHINE!r} "
                  f"(known: {sorted(FUTEX_SYSCALL)}); add it to shm_layout.sync.FUTEX_SYSCALL") from None
_FUTEX_WAIT = 0
_FUTEX_WAKE = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_MASK64 = (1 << 64) - 1


def address_of(buf) -> int:
    """Virtual address of the first byte of a numpy array (or anything with ``.ctypes.data``)."""
    return buf.ctypes.data


def fetch_add(addr: int, delta: int) -> int:
    """Atomic 64-bit fetch-and-add (two's complement for negative ``delta``); returns the old value."""
    return _fa8(_VP(addr), _U64(delta & _MASK64), _SEQ_CST)


def fetch_add32(addr: int, delta: int) -> int:
    return _fa4(_VP(addr), _U32(delta & 0xFFFFFFFF), _SEQ_CST)


def exchange(addr: int, value: int) -> int:
    return _xc8(_VP(addr), _U64(value & _MASK64), _SEQ_CST)


def cas(addr: int, expected: int, desired: int) -> bool:
    """Atomic 64-bit compare-and-swap; True when ``*addr`` was ``expected`` and is now ``desired``."""
    exp = _U64(expected & _MASK64)
    return bool(_cas8(_VP(addr), ctypes.byref(exp), _U64(desired & _MASK64), _SEQ_CST, _SEQ_CST))


def load_acquire(addr: int) -> int:
    return _ld8(_VP(addr), _SEQ_CST)


def futex_wait(addr: int, expected: int, timeout_s: float) -> None:
    """Sleep while the u32 at ``addr`` equals ``expected``, at most ``timeout_s``. Spurious returns are fine."""
    if timeout_s <= 0:
        return
    sec = int(timeout_s)
    ts = _Timespec(sec, int((timeout_s - sec) * 1e9))
    _syscall(_SYS_futex, ctypes.c_void_p(addr), _FUTEX_WAIT, ctypes.c_uint32(expected & 0xFFFFFFFF),
             ctypes.byref(ts), None, 0)


def futex_wake(addr: int, count: int = 0x7FFFFFFF) -> None:
    _syscall(_SYS_futex, ctypes.c_void_p(addr), _FUTEX_WAKE, count, None, None, 0)


def notify(word_addr: int) -> bool:
    """Wake everyone sleeping on the wake word at ``word_addr`` (seq u32 @0, waiters u32 @4).

    The locked read of ``waiters`` is the full barrier that orders the caller's earlier publish
    before the check. Returns True when a wake-up was sent."""
    if _fa4(_VP(word_addr + 4), _ZERO32, _SEQ_CST) == 0:
        return False
    _fa4(_VP(word_addr), _ONE32, _SEQ_CST)
    futex_wake(word_addr)
    return True


class Notifier:
    """``notify(word_addr)`` with the wake word's address bound once (the per-packet and per-launch
    paths: the doorbell's wake of an engine, a task ring's wake of its lane); calling it returns True
    when a wake-up was sent. Same protocol: the locked read of ``waiters`` is the full barrier that
    orders the caller's publish before the check; the wake happens only when someone sleeps."""

    __slots__ = ("addr", "fn")

    def __init__(self, word_addr: int):
        self.addr = word_addr
        seq, waiters = _VP(word_addr), _VP(word_addr + 4)

        def notify_bound() -> bool:
            if _fa4(waiters, _ZERO32, _SEQ_CST) == 0:       # locked: the barrier before the check
                return False
            _fa4(seq, _ONE32, _SEQ_CST)
            futex_wake(word_addr)
            return True

        #: the same call as a plain function (what the per-launch and per-packet paths bind: a
        #: closure call costs less than an instance's ``__call__``)
        self.fn = notify_bound

    def __call__(self) -> bool:
        return self.fn()


class Decrementer:
    """Atomic ``-1`` on the u64 at ``base_addr + i * stride + off`` (the entries of one table: the
    command processor's completion signals), each entry's operation built on first use; ``wake(i)``
    bumps entry ``i``'s wake word (u32 ``seq`` at ``wake_off``) and wakes everyone sleeping on it.

    ``op(i)`` is entry ``i``'s decrement as a zero-argument callable (a ``functools.partial`` of the
    atomic with its pointer bound: calling it costs the atomic alone, no Python frame); ``ops`` is the
    dict of those built so far, for a hot path to look up (``ops.get(i) or op(i)``)."""

    __slots__ = ("base", "stride", "off", "wake_off", "ops", "_wakes")

    def __init__(self, base_addr: int, stride: int, off: int, wake_off: int):
        self.base, self.stride, self.off, self.wake_off = base_addr, stride, off, wake_off
        self.ops: dict[int, object] = {}
        self._wakes: dict[int, ctypes.c_void_p] = {}

    def op(self, i: int):
        """Entry ``i``'s decrement (returns the old value), built once."""
        f = self.ops.get(i)
        if f is None:
            f = self.ops[i] = _partial(_fa8, _VP(self.base + i * self.stride + self.off), _MINUS1_64, _SEQ_CST)
        return f

    def __call__(self, i: int) -> int:
        """Decrement entry ``i``'s word; returns the old value."""
        return (self.ops.get(i) or self.op(i))()

    def wake(self, i: int) -> None:
        """Bump entry ``i``'s wake word and wake everyone sleeping on it."""
        p = self._wakes.get(i)
        if p is None:
            p = self._wakes[i] = _VP(self.base + i * self.stride + self.wake_off)
        _fa4(p, _ONE32, _SEQ_CST)
        futex_wake(p.value)


_u32_at = ctypes.c_uint32.from_address


def wait_until(cond, word_addr: int, timeout_s: float | None, *, spin_s: float = WAIT_SPIN_S,
               slice_s: float = WAIT_SLICE_S, check=None):
    """Spin, then block on the wake word until ``cond()`` returns a true value.

    ``check()`` is called after every sleep slice (and once the spin ends); it raises to abort the
    wait (a dead peer, an error state). Returns cond()'s value, or None when ``timeout_s`` ran out.
    ``timeout_s=None`` waits without a deadline, but never without ``check``.
    """
    r = cond()
    if r:
        return r
    now = time.monotonic()
    deadline = None if timeout_s is None else now + timeout_s
    spin_end = now + spin_s
    if deadline is not None and deadline < spin_end:
        spin_end = deadline
    while True:
        for _ in range(32):
            r = cond()
            if r:
                return r
        if time.monotonic() >= spin_end:
            break
    if check is not None:
        check()
    seq = _u32_at(word_addr)
    waiters = _VP(word_addr + 4)
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return cond() or None
        seen = seq.value
        _fa4(waiters, _ONE32, _SEQ_CST)
        try:
            r = cond()
            if r:
                return r
            slice_ = slice_s if deadline is None else min(slice_s, deadline - now)
            futex_wait(word_addr, seen, slice_)
        finally:
            _fa4(waiters, _MINUS1_32, _SEQ_CST)
        r = cond()
        if r:
            return r
        if check is not None:
            check()


def pid_alive(pid: int) -> bool:
    """True when ``pid`` runs and is not a zombie (a SIGKILLed child its parent has not reaped yet)."""
    if not 0 < pid < 1 << 31:          # pids come from shared memory: never a valid pid outside this
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        state = stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3]
        return state not in (b"Z", b"X")
    except (OSError, ValueError):
        return False
