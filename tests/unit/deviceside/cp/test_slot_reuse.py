"""A queue slot is re-created (by its owner after a destroy, or by another process once the slot is
free) while the command processor still holds the old queue's state: nothing of the old queue is ever
applied to the new one, so the new queue's first packet is neither skipped nor judged by the old
owner's rights."""
from __future__ import annotations

import numpy as np
import pytest

from shm_layout.sync import cas
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (Bystander, RawQueue, alloc, cp_alive, load_code, new_signal, platform,
                                            signal_value, wait_for)

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
HOLD = '''
import time

from shm_layout.kernels import kernel


@kernel("i32* flag")
def hold(ctx, flag):
    """Say it runs (flag[0] = 1), then run until the test says so (flag[1] == 1), at most 20 s."""
    flag[0] = 1
    deadline = time.monotonic() + 20
    while flag[1] != 1 and time.monotonic() < deadline:
        time.sleep(0.0005)
'''


@pytest.fixture
def plat(tmp_path):
    with platform(CFG, tmp_path / "roles.stderr") as p:
        yield p


@pytest.fixture
def other():
    b = Bystander()
    yield b
    b.close()


def _housekept(plat, rounds):
    hdr = plat.pm.agents[0].hdr
    for _ in range(rounds):
        seen = int(hdr["heartbeat_ns"][0])
        wait_for(plat, lambda: int(hdr["heartbeat_ns"][0]) != seen, "a housekeeping pass")


def _their_inc(plat, other, q):
    co = load_code(plat, BASIC, "theirs", owner=other.pid)
    addr, view = alloc(plat, 16, owner=other.pid)
    x = view.view(np.int32)
    x[:] = 0
    k, sig = co.kernels["inc"]
    done = new_signal(plat, 1, owner=other.pid)
    return q.dispatch(k, sig, (addr, 4), signal=done), x, done


def test_slot_freed_while_its_kernel_runs_and_taken_by_another_process_keeps_its_first_packet(plat, other):
    co = load_code(plat, HOLD, "hold")
    faddr, fview = alloc(plat, 16)
    flag = fview.view(np.int32)
    flag[:] = 0
    q1 = RawQueue(plat, engine=0)
    k, sig = co.kernels["hold"]
    mine = new_signal(plat, 1)
    q1.dispatch(k, sig, (faddr,), signal=mine)
    wait_for(plat, lambda: flag[0] == 1, "the kernel to run")
    assert cas(q1.am.qd_addr(q1.q), int(q1.desc["owner"][0]), 0)      # freed under the running kernel
    q2 = RawQueue(plat, engine=0, owner=other.pid)                      # another process takes the slot
    assert q2.q == q1.q
    idx, x, done = _their_inc(plat, other, q2)
    flag[1] = 1                                                         # the old kernel ends now
    wait_for(plat, lambda: signal_value(plat, mine) == 0, "the old kernel's completion")
    q2.wait_done(idx)
    assert list(x) == [1] * 4 and signal_value(plat, done) == 0
    assert cp_alive(plat)


def test_destroy_acknowledged_by_housekeeping_then_slot_taken_by_another_process(plat, other):
    """The engine acknowledged a destroy in its housekeeping; another process re-creates the slot before
    any engine rescanned the table (its announcement comes late): the new queue is served as its own."""
    co = load_code(plat, BASIC, "basic")
    q1 = RawQueue(plat, engine=0)
    addr1, _v = alloc(plat, 16)
    k1, s1 = co.kernels["inc"]
    q1.wait_done(q1.dispatch(k1, s1, (addr1, 4)))       # the engine's own read index is 1 now
    q1.desc["destroy_req"] = 1                          # no table bump: housekeeping acknowledges it
    wait_for(plat, lambda: not int(q1.desc["active"][0]), "the housekeeping to acknowledge the destroy")
    assert cas(q1.am.qd_addr(q1.q), int(q1.desc["owner"][0]), 0)
    q2 = RawQueue(plat, engine=0, owner=other.pid, announce=False)
    assert q2.q == q1.q
    idx, x, done = _their_inc(plat, other, q2)          # rings engine 0 before any rescan
    _housekept(plat, 3)                                 # engine 0 went round its queues meanwhile
    assert q2.status == 0, q2.error_msg
    q2.bump_table()                                     # the creation's announcement, late
    q2.wait_done(idx)
    assert list(x) == [1] * 4 and signal_value(plat, done) == 0
    assert cp_alive(plat)
