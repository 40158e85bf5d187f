"""A log-bucket latency histogram declared once as a layout, filled in place, merged by adding.

Values are non-negative integers (nanoseconds, for the timing studies). Bucketing is log-linear, the
scheme HdrHistogram uses: values below ``2**SUB_BITS`` get a bucket each (exact); above that, each
power-of-two octave is split into ``2**(SUB_BITS-1)`` equal sub-buckets, so a bucket's width is at most
``1 / 2**(SUB_BITS-1)`` = 1/16 of its lower bound (a relative error below 6.25 %, constant over the
whole range). Values at or above ``2**MAX_BITS`` ns (about 18 minutes) go to the last bucket.

The layout (``histogram``) is one fixed-size record: ``count``, ``total`` (sum of values), ``min``,
``max`` and ``buckets[N_BUCKETS]`` of u64. An array of them can sit in a shared-memory segment, one
per writer process (each record has a single writer: ``record`` is a plain read-modify-write of its
own buckets, not an atomic), and a reader merges them by adding buckets (``merge``), which is exact:
the merged histogram is the one a single writer would have filled with every value.

Why this and not HdrHistogram (the ``hdrhistogram`` package): its counts live in a process-private
array whose layout is an implementation detail, and crossing processes means encoding and decoding
its compressed base64 form; here the record is a checked numpy dtype like every other shared
structure of hdemu (``checked_dtype``), a writer fills it in place in the segment with one vectorised
``np.add.at``, a merge is one array addition, and nothing beyond numpy is needed. The bucketing (and
so the precision) is the same idea at a fixed 4 significant bits.
"""
from __future__ import annotations

import numpy as np

from ._dtype import checked_dtype

__all__ = ["SUB_BITS", "MAX_BITS", "N_BUCKETS", "histogram", "board_header", "MAX_WRITERS", "board_bytes", "bucket_of", "bucket_low", "bucket_high",
           "new", "record", "merge", "percentile", "percentiles", "mean", "summary"]

SUB_BITS = 5                          #: values below 2**SUB_BITS are exact; 2**(SUB_BITS-1) sub-buckets per octave
MAX_BITS = 40                         #: values >= 2**MAX_BITS share the last bucket
_HALF = 1 << (SUB_BITS - 1)
N_BUCKETS = (1 << SUB_BITS) + (MAX_BITS - SUB_BITS) * _HALF + 1
_HDR = 64
#: the shared layout: one writer per record; readers merge records by adding them
histogram = checked_dtype("histogram", [
    ("count", "<u8", 0),              # values recorded (writer)
    ("total", "<u8", 8),              # sum of the values (writer; wraps only past 2**64 ns)
    ("min", "<u8", 16),               # smallest value, 2**64-1 while empty (writer)
    ("max", "<u8", 24),               # largest value (writer)
    ("buckets", ("<u8", (N_BUCKETS,)), _HDR),
], itemsize=_HDR + 8 * N_BUCKETS + (-(8 * N_BUCKETS) % 64))
#: a board: this header, then one ``histogram`` record per writer (a segment a study shares with its
#: client processes); writer i sets ``ready[i]`` once it is set up, then waits for ``go``
MAX_WRITERS = 64
board_header = checked_dtype("histogram_board", [
    ("go", "<u8", 0),                 # the reader (the study) sets it once every writer is ready
    ("writers", "<u8", 8),            # histogram records that follow the header (reader)
    ("ready", ("u1", (MAX_WRITERS,)), 64),   # writer i: 1 once set up
], itemsize=128)


def board_bytes(writers: int) -> int:
    """Bytes of a board of ``writers`` histogram records."""
    if not 1 <= writers <= MAX_WRITERS:
        raise ValueError(f"a board holds 1 to {MAX_WRITERS} writers, not {writers}")
    return board_header.itemsize + writers * histogram.itemsize


_EMPTY_MIN = np.uint64(0xFFFFFFFFFFFFFFFF)


def bucket_of(values) -> np.ndarray:
    """The bucket index of each value (an array of non-negative integers)."""
    v = np.asarray(values, dtype=np.int64)
    if v.size and int(v.min()) < 0:
        raise ValueError(f"histogram values must be >= 0, not {int(v.min())}")
    v = np.minimum(v, (1 << MAX_BITS) - 1).astype(np.uint64)
    top = np.zeros(v.shape, np.int64)                 # floor(log2 v) for v >= 1
    nz = v > 0
    top[nz] = np.floor(np.log2(v[nz].astype(np.float64))).astype(np.int64)
    # float log2 may be off by one right at a power of two: fix it exactly
    top = np.where((top > 0) & (v < (np.uint64(1) << top.astype(np.uint64))), top - 1, top)
    top = np.where(v >= (np.uint64(1) << (top + 1).astype(np.uint64)), top + 1, top)
    small = v < (1 << SUB_BITS)
    shift = np.maximum(top - (SUB_BITS - 1), 0).astype(np.uint64)
    sub = (v >> shift).astype(np.int64) - _HALF       # 0 .. _HALF-1 within the octave
    big = (1 << SUB_BITS) + (top - SUB_BITS) * _HALF + sub
    out = np.where(small, v.astype(np.int64), big)
    out = np.where(np.asarray(values, dtype=np.int64) >= (1 << MAX_BITS), N_BUCKETS - 1, out)
    return out


def bucket_low(i) -> np.ndarray:
    """The smallest value of bucket(s) ``i``."""
    i = np.asarray(i, dtype=np.int64)
    octave = (i - (1 << SUB_BITS)) // _HALF + SUB_BITS
    sub = (i - (1 << SUB_BITS)) % _HALF
    big = (sub + _HALF) << np.maximum(octave - (SUB_BITS - 1), 0)
    out = np.where(i < (1 << SUB_BITS), i, big)
    return np.where(i >= N_BUCKETS - 1, 1 << MAX_BITS, out)


def bucket_high(i) -> np.ndarray:
    """One past the largest value of bucket(s) ``i`` (the last bucket is open: 2**MAX_BITS + its low)."""
    i = np.asarray(i, dtype=np.int64)
    return np.where(i >= N_BUCKETS - 1, 1 << (MAX_BITS + 1), bucket_low(i + 1))


def new(n: int = 1, buf=None, offset: int = 0) -> np.ndarray:
    """``n`` empty histogram records: a fresh array, or a view into ``buf`` (a shared segment's
    buffer) at ``offset``, cleared."""
    h = np.zeros(n, histogram) if buf is None else np.ndarray(n, histogram, buffer=buf, offset=offset)
    h[...] = 0
    h["min"] = _EMPTY_MIN
    return h


def record(h, values) -> None:
    """Add ``values`` to histogram record ``h`` (a 0-d/1-element view, written in place)."""
    v = np.asarray(values, dtype=np.int64).ravel()
    if not v.size:
        return
    h = h.reshape(-1)[0] if isinstance(h, np.ndarray) and h.shape else h
    np.add.at(h["buckets"], bucket_of(v), 1)
    h["count"] += np.uint64(v.size)
    h["total"] += np.uint64(int(v.sum()) & 0xFFFFFFFFFFFFFFFF)
    h["min"] = min(int(h["min"]), int(v.min()))
    h["max"] = max(int(h["max"]), int(v.max()))


def merge(hs) -> np.ndarray:
    """One histogram record holding every value of the records ``hs`` (an array or an iterable)."""
    out = new(1)[0]
    for h in np.asarray(hs, dtype=histogram).reshape(-1):
        if not int(h["count"]):
            continue
        out["buckets"] += h["buckets"]
        out["count"] += h["count"]
        out["total"] += h["total"]
        out["min"] = min(int(out["min"]), int(h["min"]))
        out["max"] = max(int(out["max"]), int(h["max"]))
    return out


def percentile(h, q: float) -> float:
    """The q-th percentile (0 < q <= 100) by nearest rank, as the midpoint of the bucket that holds
    that rank, clamped to the recorded [min, max]; NaN for an empty histogram."""
    if not 0 < q <= 100:
        raise ValueError(f"percentile must be in (0, 100], not {q}")
    n = int(h["count"])
    if not n:
        return float("nan")
    rank = max(1, int(np.ceil(q / 100 * n)))
    i = int(np.searchsorted(np.cumsum(h["buckets"]), rank))
    mid = (int(bucket_low(i)) + int(bucket_high(i)) - 1) / 2
    return float(min(max(mid, int(h["min"])), int(h["max"])))


def percentiles(h, qs=(50, 90, 99, 99.9)) -> dict:
    """{"p50": ..., ...} of ``h`` (keys as ``p`` + the number, ``99.9`` -> ``p99.9``)."""
    return {f"p{q:g}": percentile(h, q) for q in qs}


def mean(h) -> float:
    n = int(h["count"])
    return int(h["total"]) / n if n else float("nan")


def summary(h, scale: float = 1.0) -> dict:
    """count, min, mean, p50/p90/p99/p99.9 and max of ``h``, values divided by ``scale``."""
    n = int(h["count"])
    out = {"count": n, "min": int(h["min"]) / scale if n else float("nan"), "mean": mean(h) / scale}
    out.update({k: v / scale for k, v in percentiles(h).items()})
    out["max"] = int(h["max"]) / scale if n else float("nan")
    return out
