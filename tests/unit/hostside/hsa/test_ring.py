"""Ring protocol, barriers and bad packets, driven packet by packet through the HSA runtime."""
import time

import numpy as np
import pytest

from hostside.hsa import HSA_SIGNAL_CONDITION_EQ, HsaError, Runtime
from shm_layout import aql as A
from shm_layout import layouts as L

from tests.rawq import BARRIER_OR, INVALID, KERNEL_SRC, barrier, dispatch, header_at, wait_zero

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def rt():
    r = Runtime(config={"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "queue_size_max": 256,
                        "engines": 2})
    r.co = r.load_code_object(KERNEL_SRC, "basic.py")
    yield r
    r.shutdown()


def test_queue_size_must_be_power_of_two(rt):
    with pytest.raises(HsaError, match="power of two") as ei:
        rt.queue_create(0, 100)
    assert ei.value.status == L.HSA_STATUS_ERROR_INVALID_ARGUMENT
    with pytest.raises(HsaError, match="at most 256"):
        rt.queue_create(0, 512)


def test_invalid_header_is_never_consumed(rt):
    q = rt.queue_create(0, 16)
    try:
        s = rt.signals.create(1)
        k, sig = rt.co.kernels["empty"]
        idx = q.add_write_index(1)
        # body complete, header still INVALID, doorbell rung: the CP must not consume it
        off = q.slot_offset(idx)
        q.write_dispatch(idx, INVALID, 1, (1, 1, 1), (1, 1, 1), k, q.kernarg_slot(idx)[1], s.handle)
        q.ring_doorbell(idx)
        time.sleep(0.3)
        assert q.load_read_index() == 0
        assert s.load() == 1
        assert q.a64[q.i_doorbell] == idx
        # publishing the header makes it run
        q.a16[off >> 1] = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True)
        q.ring_doorbell(idx)
        assert wait_zero(s) == 0
        deadline = time.monotonic() + 5
        while q.load_read_index() != 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert q.load_read_index() == 1
        assert header_at(q, idx) == INVALID
    finally:
        q.destroy()


def test_consumed_slots_read_invalid_and_doorbell_holds_last_id(rt):
    q = rt.queue_create(0, 16)
    try:
        s = rt.signals.create(5)
        ids = [dispatch(q, rt.co, "empty", signal=s.handle, ring=False) for _ in range(5)]
        q.ring_doorbell(ids[-1])
        assert q.a64[q.i_doorbell] == 4
        assert wait_zero(s) == 0
        deadline = time.monotonic() + 5
        while q.load_read_index() != 5 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert q.load_read_index() == 5 == q.load_write_index()
        assert all(header_at(q, i) == INVALID for i in range(16))
        assert q.statistics().doorbells_rung == 1
    finally:
        q.destroy()


def test_full_queue_makes_submitter_wait_and_wraps(rt):
    size = 8
    q = rt.queue_create(0, size)
    gate = rt.signals.create(1)
    t = None
    try:
        x = rt.allocate(0, 4, L.ALLOC_DEVICE)
        barrier(q, [gate.handle])           # holds the queue until the gate opens
        n = 3 * size + 5
        done = rt.signals.create(n)
        submitted = []
        import threading

        def submit():
            for _ in range(n):
                submitted.append(dispatch(q, rt.co, "inc", (x, 1), signal=done.handle))
        t = threading.Thread(target=submit)
        t.start()
        # the ring holds `size` packets (the barrier and size - 1 dispatches): the submitter gets that
        # far, then blocks on the full queue (a short negative check: it stays there, still alive)
        deadline = time.monotonic() + 30
        while len(submitted) < size - 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert len(submitted) == size - 1
        stay = time.monotonic() + 0.2
        while time.monotonic() < stay:
            assert len(submitted) == size - 1 and t.is_alive(), "the submitter went past a full queue"
            time.sleep(0.005)
        assert q.load_read_index() == 0  # nothing consumed while the gate is shut
        gate.store(0)
        t.join(30)
        assert not t.is_alive()
        assert wait_zero(done) == 0
        assert q.load_write_index() == n + 1 > 3 * size
        out = np.zeros(1, np.int32)
        # read the result back through the device memory segment
        seg, off, _r = rt.pm.resolve(x, 4)
        out[:] = np.frombuffer(seg.buf, np.int32, 1, off)
        assert out[0] == n
        rt.free(x)
    finally:
        gate.store(0)                       # a failed check never leaves the submitter blocked
        if t is not None:
            t.join(30)
        q.destroy()


def test_barrier_and_with_five_mixed_dependencies(rt):
    q = rt.queue_create(0, 16)
    try:
        deps = [rt.signals.create(1) for _ in range(3)]
        done = rt.signals.create(1)
        handles = [deps[0].handle, 0, deps[1].handle, 0, deps[2].handle]
        barrier(q, handles, signal=done.handle)
        for i, d in enumerate(deps):
            time.sleep(0.05)
            assert done.load() == 1, f"barrier completed with {len(deps) - i} live dependencies left"
            d.store(0)
        assert wait_zero(done) == 0
        time.sleep(0.1)
        assert done.load() == 0  # decremented exactly once (twice would read -1)
    finally:
        q.destroy()


def test_barrier_or_completes_on_any(rt):
    q = rt.queue_create(0, 16)
    try:
        a, b = rt.signals.create(1), rt.signals.create(1)
        done = rt.signals.create(1)
        barrier(q, [a.handle, b.handle], signal=done.handle, header=BARRIER_OR)
        time.sleep(0.1)
        assert done.load() == 1
        b.store(0)
        assert wait_zero(done) == 0
        assert a.load() == 1
    finally:
        q.destroy()


def test_barrier_bit_orders_packets(rt):
    q = rt.queue_create(0, 16)
    try:
        out = rt.allocate(0, 16, L.ALLOC_DEVICE)
        gate = rt.signals.create(1)
        done = rt.signals.create(1)
        barrier(q, [gate.handle])
        dispatch(q, rt.co, "stamp", (out, 0), signal=done.handle)
        time.sleep(0.2)
        t_open = time.monotonic_ns()
        assert done.load() == 1   # the kernel behind the barrier has not run
        gate.store(0)
        assert wait_zero(done) == 0
        seg, off, _r = rt.pm.resolve(out, 8)
        assert int(np.frombuffer(seg.buf, np.uint64, 1, off)[0]) >= t_open
        rt.free(out)
    finally:
        q.destroy()


def _expect_error(rt, q, status, sig):
    deadline = time.monotonic() + 10
    while q.status == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert q.status == status, (L.STATUS_NAMES.get(q.status), q.error_message)
    assert not q.desc["active"][0]
    assert sig.load() == 1  # a failed packet does not signal completion


def _other_queue_still_runs(rt):
    q2 = rt.queue_create(0, 16)
    try:
        s = rt.signals.create(1)
        dispatch(q2, rt.co, "empty", signal=s.handle)
        assert wait_zero(s, 10) == 0
    finally:
        q2.destroy()
    assert rt.agents[0].alive()


BAD = {
    "unknown type": dict(header=A.make_header(7), status=L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    "zero grid": dict(grid=(0, 1, 1), status=L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    "zero dims": dict(setup=0, status=L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    "oversized workgroup": dict(block=(2048, 1, 1), status=L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    "null kernel object": dict(kobj=0, status=L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
    "unknown kernel object": dict(kobj=L.make_kernel_object(100, 9, 3), status=L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
    "garbage kernel object": dict(kobj=0xDEADBEEF, status=L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
    "kernarg outside aperture": dict(karg=0x1234, status=L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_packet_sets_status_and_deactivates_queue(rt, case):
    spec = dict(BAD[case])
    status = spec.pop("status")
    q = rt.queue_create(0, 16)
    try:
        s = rt.signals.create(1)
        x = rt.allocate(0, 64, L.ALLOC_DEVICE)
        dispatch(q, rt.co, "inc", (x, 1), signal=s.handle, **spec)
        _expect_error(rt, q, status, s)
        _other_queue_still_runs(rt)
        rt.free(x)
    finally:
        q.destroy()


@pytest.mark.parametrize("name,args,status", [
    ("inc", (0xDEAD0000, 1), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),   # pointer outside the aperture
    ("boom", (None,), L.HSA_STATUS_ERROR_EXCEPTION),                          # kernel raises
    ("overrun", ("x", 1), L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),      # out-of-bounds access
])
def test_faulting_kernels(rt, name, args, status):
    q = rt.queue_create(0, 16)
    try:
        s = rt.signals.create(1)
        x = rt.allocate(0, 64, L.ALLOC_DEVICE)
        args = tuple(x if a == "x" else (0 if a is None else a) for a in args)
        dispatch(q, rt.co, name, args, signal=s.handle)
        _expect_error(rt, q, status, s)
        with pytest.raises(HsaError) as ei:
            s.wait(HSA_SIGNAL_CONDITION_EQ, 0, 5, check=q.check)
        assert ei.value.status == status
        _other_queue_still_runs(rt)
        rt.free(x)
    finally:
        q.destroy()


def test_long_kernel_does_not_block_other_queue(rt):
    q1, q2 = rt.queue_create(0, 16), rt.queue_create(0, 16)
    flag = rt.allocate(None, 4, L.ALLOC_HOST)
    seg, off, _r = rt.pm.resolve(flag, 4)
    opened = np.frombuffer(seg.buf, np.uint32, 1, off)
    opened[0] = 0
    try:
        assert q1.engine != q2.engine
        slow, fast = rt.signals.create(1), rt.signals.create(1)
        dispatch(q1, rt.co, "gate", (flag, 60.0), signal=slow.handle)   # runs until the test opens it
        dispatch(q2, rt.co, "empty", signal=fast.handle)
        assert wait_zero(fast, 30) == 0
        assert slow.load() == 1          # the fast kernel finished while the gated one still runs
        opened[0] = 1
        assert wait_zero(slow, 30) == 0
    finally:
        opened[0] = 1                    # never leave the gate kernel waiting
        del opened
        q1.destroy()
        q2.destroy()
        rt.free(flag)


def test_signal_wait_conditions_and_timeout(rt):
    from hostside.hsa import (HSA_SIGNAL_CONDITION_GTE, HSA_SIGNAL_CONDITION_LT,
                              HSA_SIGNAL_CONDITION_NE)
    s = rt.signals.create(5)
    t = time.monotonic()
    assert s.wait(HSA_SIGNAL_CONDITION_EQ, 0, 0.1) == 5  # timeout returns the observed value
    assert time.monotonic() - t >= 0.09
    assert s.wait(HSA_SIGNAL_CONDITION_NE, 0, 1) == 5
    assert s.wait(HSA_SIGNAL_CONDITION_GTE, 5, 1) == 5
    s.subtract(7)
    assert s.wait(HSA_SIGNAL_CONDITION_LT, 0, 1) == -2
    s.add(2)
    assert s.load() == 0
    with pytest.raises(HsaError):
        s.wait(9, 0, 1)


def test_async_handler_fires_on_condition(rt):
    import threading
    s = rt.signals.create(1)
    got = []
    ev = threading.Event()

    def handler(value, arg):
        got.append((value, arg))
        ev.set()
        return False
    rt.async_handler.register(s, HSA_SIGNAL_CONDITION_EQ, 0, handler, "arg")
    time.sleep(0.05)
    assert not got
    s.store(0)
    assert ev.wait(5)
    assert got == [(0, "arg")]


def test_queue_error_callback(rt):
    import threading
    seen = []
    ev = threading.Event()
    q = rt.queue_create(0, 16, callback=lambda st, qq, data: (seen.append((st, data)), ev.set()), data="d")
    try:
        dispatch(q, rt.co, "empty", kobj=0)
        assert ev.wait(5)
        assert seen == [(L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "d")]
    finally:
        q.destroy()


def test_allocation_tracker_tags_owning_agent(rt):
    d = rt.allocate(0, 1000, L.ALLOC_DEVICE)
    h = rt.allocate(None, 1000, L.ALLOC_HOST)
    try:
        assert rt.pointer_info(d + 10).agent == 0
        assert rt.pointer_info(h).agent == -1
        assert [a.base for a in rt.allocations(agent=0, kinds={L.ALLOC_DEVICE})] == [d]
    finally:
        rt.free(d)
        rt.free(h)
    with pytest.raises(HsaError, match="not a live allocation"):
        rt.free(d)
