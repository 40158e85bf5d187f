"""shm_layout.histogram: bucket bounds, precision, merge by adding buckets, percentiles from buckets,
and a board filled in place by two processes and merged by a third."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from shm_layout import histogram as H
from shm_layout.segments import Segment, new_run_token, segment_name


def test_buckets_contain_their_values_and_are_monotone():
    v = np.unique(np.concatenate([np.arange(0, 5000), np.logspace(3, 12, 4000).astype(np.int64)]))
    b = H.bucket_of(v)
    assert (np.diff(b) >= 0).all()
    assert (H.bucket_low(b) <= v).all() and (v < H.bucket_high(b)).all()
    assert b.max() < H.N_BUCKETS - 1          # below 2**MAX_BITS: never the overflow bucket


def test_small_values_exact_and_relative_width_bounded():
    small = np.arange(1 << H.SUB_BITS)
    assert (H.bucket_low(H.bucket_of(small)) == small).all()
    i = np.arange(1 << H.SUB_BITS, H.N_BUCKETS - 1)
    width = H.bucket_high(i) - H.bucket_low(i)
    assert (width / H.bucket_low(i)).max() <= 1 / (1 << (H.SUB_BITS - 1))


def test_powers_of_two_and_overflow():
    for e in range(H.SUB_BITS, H.MAX_BITS):
        for v in ((1 << e) - 1, 1 << e, (1 << e) + 1):
            b = int(H.bucket_of([v])[0])
            assert int(H.bucket_low(b)) <= v < int(H.bucket_high(b)), (v, b)
    assert int(H.bucket_of([1 << H.MAX_BITS])[0]) == H.N_BUCKETS - 1
    assert int(H.bucket_of([1 << 60])[0]) == H.N_BUCKETS - 1
    with pytest.raises(ValueError, match=">= 0"):
        H.bucket_of([-1])


def test_merge_is_the_histogram_of_all_values():
    rng = np.random.default_rng(7)
    parts = [rng.lognormal(10, 1.5, 3000).astype(np.int64) for _ in range(4)]
    hs = H.new(4)
    for h, p in zip(hs, parts):
        H.record(h, p)
    one = H.new(1)[0]
    H.record(one, np.concatenate(parts))
    m = H.merge(hs)
    assert (m["buckets"] == one["buckets"]).all()
    assert int(m["count"]) == 12000 == int(one["count"])
    assert int(m["total"]) == int(one["total"]) == int(np.concatenate(parts).sum())
    assert int(m["min"]) == min(int(p.min()) for p in parts) and int(m["max"]) == max(int(p.max()) for p in parts)


def test_percentiles_within_bucket_precision():
    rng = np.random.default_rng(3)
    v = rng.lognormal(9, 1.0, 20000).astype(np.int64) + 40
    h = H.new(1)[0]
    H.record(h, v)
    for q in (1, 50, 90, 99, 99.9, 100):
        exact = float(np.sort(v)[max(0, int(np.ceil(q / 100 * len(v))) - 1)])
        got = H.percentile(h, q)
        assert abs(got - exact) <= exact / (1 << (H.SUB_BITS - 1)), (q, got, exact)
    assert H.percentile(h, 100) <= int(h["max"])
    assert H.mean(h) == pytest.approx(v.mean())
    s = H.summary(h, 1e3)
    assert s["count"] == 20000 and s["p50"] == pytest.approx(H.percentile(h, 50) / 1e3)


def test_empty_and_bad_percentile():
    h = H.new(1)[0]
    assert np.isnan(H.percentile(h, 50)) and np.isnan(H.mean(h))
    assert H.summary(h)["count"] == 0
    assert int(H.merge(H.new(3))["count"]) == 0
    with pytest.raises(ValueError, match="percentile"):
        H.percentile(h, 0)
    with pytest.raises(ValueError, match="writers"):
        H.board_bytes(0)


CHILD = """
import sys, numpy as np
from shm_layout import histogram as H
from shm_layout.segments import Segment
seg = Segment.attach(sys.argv[1])
i = int(sys.argv[2])
board = seg.view(H.histogram, H.board_header.itemsize, 2)
H.record(board[i], np.arange(1, 1001) * (i + 1))
del board
seg.close()
"""


def test_board_filled_in_place_by_two_processes():
    seg = Segment.create(segment_name(os.getpid(), new_run_token(), "testhist"), H.board_bytes(2))
    try:
        H.new(2, seg.buf, H.board_header.itemsize)
        for i in range(2):
            subprocess.run([sys.executable, "-c", CHILD, seg.name, str(i)], check=True, timeout=60)
        m = H.merge(seg.view(H.histogram, H.board_header.itemsize, 2))
        want = H.new(1)[0]
        H.record(want, np.concatenate([np.arange(1, 1001), np.arange(1, 1001) * 2]))
        assert (m["buckets"] == want["buckets"]).all() and int(m["count"]) == 2000
        assert int(m["max"]) == 2000 and int(m["min"]) == 1
    finally:
        seg.close()
        seg.unlink()
