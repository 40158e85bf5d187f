"""Per-process trace rings: each process claims one ring and is its only writer.

Writers never block: the ring overwrites its oldest events when full (``count`` keeps the total,
so a reader knows how many were lost). ``record()`` costs one struct pack and one store.
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import layouts as L
from .sync import address_of, cas

_EV = L.struct_of(L.trace_event)
_EV_BYTES = L.trace_event.itemsize
_HDR_BYTES = L.trace_ring_header.itemsize           # the events follow the header
_OFF_COUNT = L.offset_of(L.trace_ring_header, "count")
assert _EV_BYTES == L.TRACE_EVENT_BYTES


class TraceRing:
    def __init__(self, seg, topo, index: int):
        self.index = index
        self.off = index * topo.trace_ring_bytes
        self.hdr = seg.view(L.trace_ring_header, self.off, 1)
        self.buf = seg.buf
        self.ev_off = self.off + _HDR_BYTES
        self.mask = topo.trace_events - 1
        self.pid = os.getpid()
        self._cnt = memoryview(seg.buf)[self.off + _OFF_COUNT:self.off + _OFF_COUNT + 8].cast("Q")
        self._count = self._cnt[0]

    @classmethod
    def claim(cls, pm, role: int = 0, name: str = "") -> "TraceRing | None":
        """Claim a free ring (cas on its owner word); None when every ring is taken."""
        seg = pm.segs["trace"]
        topo = pm.topo
        me = os.getpid()
        for i in range(topo.trace_rings):
            hdr = seg.view(L.trace_ring_header, i * topo.trace_ring_bytes, 1)
            if cas(address_of(hdr), 0, L.own_word(me, 1)):
                hdr["count"] = 0
                hdr["role"] = role
                hdr["name"] = name.encode()[:31]
                return cls(seg, topo, i)
        return None

    def record(self, kind: int, track: int, a: int = 0, b: int = 0, ts: int | None = None) -> None:
        c = self._count
        _EV.pack_into(self.buf, self.ev_off + (c & self.mask) * _EV_BYTES,
                      time.monotonic_ns() if ts is None else ts, kind, track, self.pid,
                      a & 0xFFFFFFFFFFFFFFFF, b & 0xFFFFFFFFFFFFFFFF)
        self._count = c + 1
        self._cnt[0] = c + 1

    def release(self) -> None:
        self._cnt.release()
        cas(address_of(self.hdr), L.own_word(self.pid, 1), 0)


def read_all(pm) -> list[tuple[int, str, int, np.ndarray]]:
    """(ring index, name, role, events) for every ring that holds events; events in time order."""
    seg = pm.segs["trace"]
    topo = pm.topo
    out = []
    for i in range(topo.trace_rings):
        off = i * topo.trace_ring_bytes
        hdr = seg.view(L.trace_ring_header, off, 1)[0]
        n = int(hdr["count"])
        if not n:
            continue
        ev = seg.view(L.trace_event, off + _HDR_BYTES, topo.trace_events).copy()
        if n < topo.trace_events:
            ev = ev[:n]
        ev = ev[np.argsort(ev["ts"], kind="stable")]
        out.append((i, hdr["name"].decode(errors="replace"), int(hdr["role"]), ev))
    return out
