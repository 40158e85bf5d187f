"""shm_layout.trace: the trace ring's writer (thread safety, count) and read_all's expansion."""
from __future__ import annotations

import sys
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from shm_layout import layouts as L
from shm_layout.trace import TraceRing, read_all


class _Seg:
    """The part of a mapped segment TraceRing uses, over private memory."""

    def __init__(self, n: int):
        self.buf = bytearray(n)

    def view(self, dtype, offset=0, count=-1):
        return np.frombuffer(self.buf, dtype=dtype, offset=offset, count=count)


def _ring(events: int):
    topo = SimpleNamespace(trace_events=events, trace_rings=1,
                           trace_ring_bytes=L.trace_ring_header.itemsize + events * L.trace_event.itemsize)
    seg = _Seg(topo.trace_ring_bytes)
    pm = SimpleNamespace(segs={"trace": seg}, topo=topo)
    return pm, TraceRing(seg, topo, 0)


def _at_once(threads: int, work) -> None:
    """Run ``work(t)`` in ``threads`` threads started together, switching threads as often as the
    interpreter can."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        go = threading.Barrier(threads)

        def body(t):
            go.wait()
            work(t)

        ts = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    finally:
        sys.setswitchinterval(old)


def test_threads_recording_at_once_lose_no_event_and_count_is_exact():
    threads, per = 4, 3000
    pm, ring = _ring(1 << 14)           # room for every event: none overwritten

    def work(t):
        for i in range(per):
            ring.record(L.EV_DOORBELL, t, i, t, ts=1 + i)

    _at_once(threads, work)
    assert int(ring.hdr["count"][0]) == threads * per
    ((_, _, _, ev),) = read_all(pm)
    assert len(ev) == threads * per
    seen = set(zip(ev["track"].tolist(), ev["a"].tolist()))
    assert seen == {(t, i) for t in range(threads) for i in range(per)}
    assert (ev["b"] == ev["track"]).all()          # no event mixes two writers' fields


def test_count_continues_from_the_ring_header_and_wraps():
    pm, ring = _ring(8)
    for i in range(5):
        ring.record(L.EV_DOORBELL, 1, i, 0, ts=i + 1)
    again = TraceRing(pm.segs["trace"], pm.topo, 0)  # a second writer object over the same ring
    for i in range(5, 12):
        again.record(L.EV_DOORBELL, 1, i, 0, ts=i + 1)
    assert int(again.hdr["count"][0]) == 12
    ((_, _, _, ev),) = read_all(pm)
    assert ev["a"].tolist() == list(range(4, 12))   # the 8 newest, in time order


def test_spans_from_threads_at_once_keep_both_events_and_the_count():
    """record_span takes two slots: interleaved with other threads' spans and single events, each
    span's BEGIN and END both land, whole, and count is exact."""
    threads, per = 4, 1500
    pm, ring = _ring(1 << 14)

    def work(t):
        for i in range(per):
            if t % 2:
                ring.record_span(L.EV_KERNEL_BEGIN, L.EV_KERNEL_END, t, i, t, 2 * i + 1, 2 * i + 2)
            else:
                ring.record(L.EV_DOORBELL, t, i, t, ts=2 * i + 1)
                ring.record(L.EV_DOORBELL, t, i, t, ts=2 * i + 2)

    _at_once(threads, work)
    assert int(ring.hdr["count"][0]) == threads * per * 2
    ((_, _, _, ev),) = read_all(pm)
    assert (ev["b"] == ev["track"]).all()
    for t in range(1, threads, 2):
        mine = ev[ev["track"] == t]
        begin, end = mine[mine["kind"] == L.EV_KERNEL_BEGIN], mine[mine["kind"] == L.EV_KERNEL_END]
        assert begin["a"].tolist() == end["a"].tolist() == list(range(per))
        assert (begin["ts"] == 2 * begin["a"] + 1).all() and (end["ts"] == 2 * end["a"] + 2).all()


def test_a_span_across_the_ring_end_is_written_in_two_slots():
    pm, ring = _ring(8)
    for i in range(7):
        ring.record(L.EV_DOORBELL, 1, i, 0, ts=i + 1)
    ring.record_span(L.EV_KERNEL_BEGIN, L.EV_KERNEL_END, 2, 99, 5, 100, 101)   # slots 7 and 0
    assert int(ring.hdr["count"][0]) == 9
    ((_, _, _, ev),) = read_all(pm)
    assert ev["kind"].tolist()[-2:] == [L.EV_KERNEL_BEGIN, L.EV_KERNEL_END]
    assert ev["ts"].tolist()[-2:] == [100, 101] and ev["a"].tolist()[-2:] == [99, 99]
    assert ev["a"].tolist()[:-2] == list(range(1, 7))      # the oldest event was overwritten
