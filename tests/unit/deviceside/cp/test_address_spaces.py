"""Each process has its own GPU address space and its own signals: a pointer, kernarg segment,
counter block or signal that the queue's owner does not own is a queue error (MEMORY_FAULT /
INVALID_SIGNAL), and the other process's memory and signals stay untouched. A code object that
replaces numpy functions does not break the CP for the other clients."""
from __future__ import annotations

import numpy as np
import pytest

from shm_layout import counters as C
from shm_layout import layouts as L
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (BARRIER_OR, Bystander, RawQueue, alloc, cp_alive, load_code, new_signal,
                                            platform, signal_value)

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
FAULT, BADSIG = L.HSA_STATUS_ERROR_MEMORY_FAULT, L.HSA_STATUS_ERROR_INVALID_SIGNAL
VANDAL = '''
import numpy

from shm_layout.kernels import kernel


def _broken(*a, **k):
    raise RuntimeError("numpy was vandalised by a code object")


@kernel("")
def vandalise(ctx):
    for name in ("frombuffer", "copyto", "flatnonzero", "dtype", "isin", "argsort", "concatenate", "arange"):
        setattr(numpy, name, _broken)
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


def _ints(view):
    x = view.view(np.int32)
    x[:] = 0
    return x


def test_pointer_into_another_process_device_memory_is_a_memory_fault(plat, other):
    co = load_code(plat, BASIC)
    theirs, tview = alloc(plat, 16, owner=other.pid)
    t = _ints(tview)
    q = RawQueue(plat)
    k, sig = co.kernels["inc"]
    q.dispatch(k, sig, (theirs, 4))
    assert q.wait_error() == FAULT
    assert f"allocation of process {other.pid}" in q.error_msg, q.error_msg
    assert list(t) == [0] * 4
    mine, mview = alloc(plat, 16)                       # our own pointer still works, on a new queue
    m = _ints(mview)
    q2 = RawQueue(plat)
    q2.wait_done(q2.dispatch(k, sig, (mine, 4)))
    assert list(m) == [1] * 4


def test_pinned_host_memory_of_another_process_is_not_ours_but_our_own_is(plat, other):
    co = load_code(plat, BASIC)
    theirs, tview = alloc(plat, 16, region=0, owner=other.pid)
    mine, mview = alloc(plat, 16, region=0)
    t, m = _ints(tview), _ints(mview)
    k, sig = co.kernels["inc"]
    q = RawQueue(plat)
    q.wait_done(q.dispatch(k, sig, (mine, 4)))
    assert list(m) == [1] * 4
    q.dispatch(k, sig, (theirs, 4))
    assert q.wait_error() == FAULT
    assert list(t) == [0] * 4


def test_kernargs_of_another_queue_or_process_are_refused_and_our_kernarg_block_works(plat, other):
    co = load_code(plat, BASIC)
    k, sig = co.kernels["inc"]
    mine, mview = alloc(plat, 16)
    m = _ints(mview)
    block, bview = alloc(plat, 256, region=0, kind=L.ALLOC_KERNARG)       # a graph-style kernarg block
    sig.pack_into(bview, 0, [mine, 4])
    q = RawQueue(plat)
    q.wait_done(q.dispatch(k, None, karg=block))
    assert list(m) == [1] * 4
    theirs_block, tb = alloc(plat, 256, region=0, owner=other.pid, kind=L.ALLOC_KERNARG)
    sig.pack_into(tb, 0, [mine, 4])
    q.dispatch(k, None, karg=theirs_block)
    assert q.wait_error() == FAULT
    other_q = RawQueue(plat)                          # another queue's kernarg slot, holding good args
    koff, kaddr = other_q.kernarg_slot(0)
    sig.pack_into(other_q.buf, koff, [mine, 4])
    q2 = RawQueue(plat)
    q2.dispatch(k, None, karg=kaddr)
    assert q2.wait_error() == FAULT
    assert "kernarg slots of a queue" in q2.error_msg, q2.error_msg
    assert list(m) == [1] * 4


def test_signals_of_another_process_are_invalid_and_untouched(plat, other):
    co = load_code(plat, BASIC)
    k, sig = co.kernels["inc"]
    mine, mview = alloc(plat, 16)
    m = _ints(mview)
    their_done, their_dep = new_signal(plat, 1, owner=other.pid), new_signal(plat, 0, owner=other.pid)
    q = RawQueue(plat)
    q.dispatch(k, sig, (mine, 4), signal=their_done)
    assert q.wait_error() == BADSIG
    assert f"not a signal of the queue's owner (pid {q.owner})" in q.error_msg, q.error_msg
    assert signal_value(plat, their_done) == 1 and list(m) == [0] * 4         # not decremented, not run
    q2 = RawQueue(plat)
    q2.barrier([their_dep], header=BARRIER_OR)
    assert q2.wait_error() == BADSIG
    s = RawQueue(plat, kind=L.QKIND_SDMA)
    s.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=7, dst=mine, size=16, dep_signal=their_dep)
    assert s.wait_error() == BADSIG
    s2 = RawQueue(plat, kind=L.QKIND_SDMA)
    s2.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=7, dst=mine, size=16, completion_signal=their_done)
    assert s2.wait_error() == BADSIG
    assert signal_value(plat, their_done) == 1 and list(m) == [0] * 4


def test_sdma_copies_and_fills_stay_in_the_owner_address_space(plat, other):
    theirs, tview = alloc(plat, 64, owner=other.pid)
    tview[:] = 0x5A
    mine, mview = alloc(plat, 64)
    mview[:] = 0
    s = RawQueue(plat, kind=L.QKIND_SDMA)
    s.sdma(L.SDMA_TYPE_COPY, src=theirs, dst=mine, size=64)
    assert s.wait_error() == FAULT
    s2 = RawQueue(plat, kind=L.QKIND_SDMA)
    s2.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=1, dst=theirs, size=64)
    assert s2.wait_error() == FAULT
    assert (mview == 0).all() and (tview == 0x5A).all()


def test_counter_block_of_another_process_is_a_memory_fault(plat, other):
    co = load_code(plat, BASIC)
    k, sig = co.kernels["inc"]
    mine, mview = alloc(plat, 16)
    _ints(mview)
    req, rview = alloc(plat, C.REQUEST_BYTES, region=0, owner=other.pid)
    rec = rview.view(C.counter_request)
    rec["n_slots"], rec["ids"][0][0] = 1, C.COUNTER_IDS["WORKITEMS"]
    q = RawQueue(plat)
    q.dispatch(k, sig, (mine, 4), reserved2=req)
    assert q.wait_error() == FAULT
    assert int(rec["n_written"][0]) == 0
    own, oview = alloc(plat, C.REQUEST_BYTES, region=0)             # our own block is served
    orec = oview.view(C.counter_request)
    orec["n_slots"], orec["ids"][0][0] = 1, C.COUNTER_IDS["WORKITEMS"]
    q2 = RawQueue(plat)
    q2.wait_done(q2.dispatch(k, sig, (mine, 4), reserved2=own, grid=(4, 1, 1)))
    assert int(orec["n_written"][0]) == 1 and int(orec["out"][0][0]) == 4


def test_a_code_object_that_vandalises_numpy_does_not_break_other_clients(plat, other):
    vandal = load_code(plat, VANDAL, "vandal", owner=other.pid)
    theirs = RawQueue(plat, owner=other.pid)
    k, sig = vandal.kernels["vandalise"]
    theirs.wait_done(theirs.dispatch(k, sig))
    co = load_code(plat, BASIC)
    a, av = alloc(plat, 64)
    b, bv = alloc(plat, 64)
    c, cv = alloc(plat, 64)
    av.view(np.float32)[:] = np.arange(16, dtype=np.float32)
    bv.view(np.float32)[:] = 1.0
    q = RawQueue(plat)
    k, sig = co.kernels["vadd"]
    q.wait_done(q.dispatch(k, sig, (a, b, c, 16)))                    # new pointers: mapped after the vandal
    assert list(cv.view(np.float32)) == [float(i + 1) for i in range(16)]
    d, dv = alloc(plat, 64)                                           # a new allocation, copied by SDMA
    s = RawQueue(plat, kind=L.QKIND_SDMA)
    s.wait_done(s.sdma(L.SDMA_TYPE_COPY, src=c, dst=d, size=64))
    assert (dv == cv).all()
    assert cp_alive(plat)
