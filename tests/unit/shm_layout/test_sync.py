"""shm_layout.sync: the atomics (bound without argtypes), Notifier, Decrementer and the wait they wake."""
from __future__ import annotations

import threading

import numpy as np

from shm_layout import sync


def _words(n: int = 16) -> tuple[np.ndarray, int]:
    a = np.zeros(n, dtype=np.uint64)
    return a, sync.address_of(a)


def test_atomics_full_width_and_wraparound():
    a, addr = _words()
    assert sync.fetch_add(addr, 5) == 0
    assert sync.fetch_add(addr, -6) == 5
    assert int(a[0]) == (1 << 64) - 1                    # two's complement
    assert sync.fetch_add(addr, 1) == (1 << 64) - 1 and int(a[0]) == 0
    assert sync.exchange(addr + 8, (1 << 64) - 2) == 0 and sync.load_acquire(addr + 8) == (1 << 64) - 2
    assert not sync.cas(addr + 8, 3, 4) and int(a[1]) == (1 << 64) - 2
    assert sync.cas(addr + 8, (1 << 64) - 2, 1 << 63) and int(a[1]) == 1 << 63
    w32 = a.view(np.uint32)
    assert sync.fetch_add32(addr + 16, -1) == 0 and int(w32[4]) == 0xFFFFFFFF and int(w32[5]) == 0


def test_fetch_add_from_threads_loses_nothing():
    a, addr = _words()
    per, n = 5000, 4

    def work():
        for _ in range(per):
            sync.fetch_add(addr, 1)
    ts = [threading.Thread(target=work) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert int(a[0]) == per * n


def test_notifier_wakes_only_when_someone_waits_and_wakes_a_sleeper():
    a, addr = _words()
    w32 = a.view(np.uint32)
    note = sync.Notifier(addr)
    assert note() is False and int(w32[0]) == 0          # nobody waits: no bump, no syscall
    flag = []
    got = []
    t = threading.Thread(target=lambda: got.append(
        sync.wait_until(lambda: bool(flag), addr, 30.0, spin_s=0.0, slice_s=30.0)))
    t.start()
    # wait until the waiter has registered itself (waiters word), then publish and notify
    assert sync.wait_until(lambda: int(w32[1]) == 1, addr + 32, 30.0, spin_s=30.0)
    flag.append(1)
    assert note() is True and int(w32[0]) == 1
    t.join(30)
    assert got == [True] and int(w32[1]) == 0


def test_decrementer_entries_and_wake_word():
    a, addr = _words(8)                                   # two 32-byte entries: value @8, wake @16
    a[1] = 2
    a[5] = 7
    dec = sync.Decrementer(addr, 32, 8, 16)
    assert dec(0) == 2 and dec(0) == 1 and dec(1) == 7
    assert int(a[1]) == 0 and int(a[5]) == 6
    dec.wake(1)
    assert int(a.view(np.uint32)[12]) == 1                # entry 1's seq (byte 48) bumped
