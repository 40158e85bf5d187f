"""A kernel object is only run while its code object is loaded, in the generation it names, by the
queue's owner: the CP's kernel cache is re-validated against the code-object table on every dispatch.
A stale packet is a queue error (INVALID_CODE_OBJECT), never a run."""
from __future__ import annotations

import numpy as np
import pytest

from shm_layout import layouts as L
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (Bystander, RawQueue, alloc, cp_alive, load_code, new_signal, platform,
                                            signal_value, unload_code)

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
ADD10 = '''
from shm_layout.kernels import kernel

@kernel("i32* x, u32 n")
def inc(ctx, x, n):
    x[:n] += 10
'''


@pytest.fixture
def plat(tmp_path):
    with platform(CFG, tmp_path / "roles.stderr") as p:
        yield p


def _inc(q, co, addr, signal=0):
    k, sig = co.kernels["inc"]
    return q.dispatch(k, sig, (addr, 4), signal=signal)


def test_kernel_after_unload_is_a_queue_error_not_a_run(plat):
    co = load_code(plat, BASIC, "basic")
    addr, view = alloc(plat, 16)
    x = view.view(np.int32)
    x[:] = 0
    q = RawQueue(plat)
    q.wait_done(_inc(q, co, addr))             # loaded and cached by the CP
    assert list(x) == [1, 1, 1, 1]
    unload_code(plat, co)
    done = new_signal(plat, 1)
    idx = _inc(q, co, addr, done)
    assert q.wait_error() == L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT
    assert int(q.desc["error_packet_id"][0]) == idx
    assert "not loaded" in q.error_msg, q.error_msg
    assert list(x) == [1, 1, 1, 1]             # the stale kernel did not run
    assert signal_value(plat, done) == 1       # and its signal was not completed
    assert cp_alive(plat)


def test_old_kernel_object_of_a_reloaded_slot_is_refused_and_the_new_one_runs(plat):
    co = load_code(plat, BASIC, "basic")
    addr, view = alloc(plat, 16)
    x = view.view(np.int32)
    x[:] = 0
    q = RawQueue(plat)
    q.wait_done(_inc(q, co, addr))
    unload_code(plat, co)
    co2 = load_code(plat, ADD10, "add10")
    assert co2.slot == co.slot and co2.gen != co.gen      # the same slot, a new generation
    q2 = RawQueue(plat)
    q2.wait_done(_inc(q2, co2, addr))
    assert list(x) == [11] * 4
    _inc(q, co, addr)
    assert q.wait_error() == L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT
    assert list(x) == [11] * 4


def test_kernel_of_another_process_code_object_is_refused_even_when_cached(plat):
    other = Bystander()
    try:
        co = load_code(plat, BASIC, "theirs", owner=other.pid)
        addr_o, view_o = alloc(plat, 16, owner=other.pid)
        theirs = RawQueue(plat, owner=other.pid)
        theirs.wait_done(_inc(theirs, co, addr_o))          # their queue runs it: the CP caches it
        assert list(view_o.view(np.int32)) == [1] * 4
        addr, view = alloc(plat, 16)
        q = RawQueue(plat)
        _inc(q, co, addr)
        assert q.wait_error() == L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT
        assert f"process {other.pid}" in q.error_msg, q.error_msg
        assert list(view.view(np.int32)) == [0] * 4
        theirs.wait_done(_inc(theirs, co, addr_o))          # still theirs to run
        assert list(view_o.view(np.int32)) == [2] * 4
    finally:
        other.close()
