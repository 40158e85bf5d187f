"""Cross-process atomics, futexes and the spin-then-block wait.

Rationale
---------
Plain numpy stores are fine for single-writer fields (aligned 8-byte stores never tear on x86-64),
but three things need more than a store:

* read-modify-write by several writers (a signal decremented by the command processor while the
  host also subtracts from it, slot ownership claimed by several processes) -> ``fetch_add`` and
  ``cas`` from libatomic through ctypes (lock-prefixed instructions, ~0.3-0.9 us a call);
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
import platform as _platform
import os
import time

from .errors import PlatformError

__all__ = [
    "address_of", "fetch_add", "fetch_add32", "cas", "exchange", "load_acquire", "futex_wait",
    "futex_wake", "notify", "wait_until", "WAIT_SPIN_S", "WAIT_SLICE_S",
]

#: How long a waiter spins before it blocks (ROCR spins ~200 us before sleeping).
WAIT_SPIN_S = 200e-6
#: Longest single futex sleep; every blocking wait re-checks its liveness predicate this often.
WAIT_SLICE_S = 0.05

_libatomic_name = ctypes.util.find_library("atomic") or "libatomic.so.1"
try:
    _la = ctypes.CDLL(_libatomic_name)
except OSError as exc:  # pragma: no cover - the image ships libatomic1
    raise ImportError(
        f"hdemu needs libatomic (Debian package libatomic1) for cross-process atomics: {exc}"
    ) from exc

_SEQ_CST = 5
_fa8 = _la.__atomic_fetch_add_8
_fa8.restype = ctypes.c_uint64
_fa8.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int]
_fa4 = _la.__atomic_fetch_add_4
_fa4.restype = ctypes.c_uint32
_fa4.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
_xc8 = _la.__atomic_exchange_8
_xc8.restype = ctypes.c_uint64
_xc8.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int]
_cas8 = _la.__atomic_compare_exchange_8
_cas8.restype = ctypes.c_bool
_cas8.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
_ld8 = _la.__atomic_load_8
_ld8.restype = ctypes.c_uint64
_ld8.argtypes = [ctypes.c_void_p, ctypes.c_int]

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
    return _fa8(addr, delta & _MASK64, _SEQ_CST)


def fetch_add32(addr: int, delta: int) -> int:
    return _fa4(addr, delta & 0xFFFFFFFF, _SEQ_CST)


def exchange(addr: int, value: int) -> int:
    return _xc8(addr, value & _MASK64, _SEQ_CST)


def cas(addr: int, expected: int, desired: int) -> bool:
    """Atomic 64-bit compare-and-swap; True when ``*addr`` was ``expected`` and is now ``desired``."""
    exp = ctypes.c_uint64(expected & _MASK64)
    return bool(_cas8(addr, ctypes.byref(exp), desired & _MASK64, _SEQ_CST, _SEQ_CST))


def load_acquire(addr: int) -> int:
    return _ld8(addr, _SEQ_CST)


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
    if _fa4(word_addr + 4, 0, _SEQ_CST) == 0:
        return False
    _fa4(word_addr, 1, _SEQ_CST)
    futex_wake(word_addr)
    return True


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
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return cond() or None
        seen = seq.value
        _fa4(word_addr + 4, 1, _SEQ_CST)
        try:
            r = cond()
            if r:
                return r
            slice_ = slice_s if deadline is None else min(slice_s, deadline - now)
            futex_wait(word_addr, seen, slice_)
        finally:
            _fa4(word_addr + 4, 0xFFFFFFFF, _SEQ_CST)
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
