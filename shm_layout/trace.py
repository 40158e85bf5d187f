"""Per-process trace rings: each process claims one ring and is its only writer.

Writers never block: the ring overwrites its oldest events when full (``count`` keeps the total,
so a reader knows how many were lost). ``record()`` costs one struct pack and one store.

Several threads of the process may record at once (host threads sharing the runtime's ring, the
command processor's engine threads): each event's slot is reserved with ``next()`` of an
``itertools.count`` (one C call: atomic under the GIL), so two events never share a slot, and
``count`` only moves forward (a thread that reserved earlier but publishes later leaves it alone). A
reader that runs while a writer is between its reserve and its pack may see that one slot's previous
contents; readers after the fact (``read_all`` at exit, trace export) see every event.

``EV_LAUNCH_RUNG`` is a launch whose packet was rung on its own (direct dispatch, not in a batch):
one record that stands for ``EV_LAUNCH`` (a = dispatch id, b = kernel object) followed by its
``EV_DOORBELL`` (a = global queue id, b = packet id), and ``read_all`` returns it as those two
events (same timestamp), so readers only ever see the declared kinds.
"""
from __future__ import annotations

import itertools
import os
import struct
import time

import numpy as np

from . import layouts as L
from .sync import address_of, cas

_EV = L.struct_of(L.trace_event)
_EV_BYTES = L.trace_event.itemsize
_HDR_BYTES = L.trace_ring_header.itemsize           # the events follow the header
_OFF_COUNT = L.offset_of(L.trace_ring_header, "count")
assert _EV_BYTES == L.TRACE_EVENT_BYTES
#: EV_LAUNCH + its EV_DOORBELL in one record (expanded by ``read_all``); not a kind of the layout
EV_LAUNCH_RUNG = 0x8000 | L.EV_LAUNCH
# its EV_DOORBELL's fields come from the launch's dispatch id: a = the global queue id, agent <<
# (queue-slot bits) | slot (``hostside.hsa.Queue.gid``); b = the packet id (the index bits the
# dispatch id keeps: all of it on any real queue)
_AGENT_SHIFT = L.dispatch_id(1, 0, 0).bit_length() - 1
_SLOT_BITS = _AGENT_SHIFT - (L.dispatch_id(0, 1, 0).bit_length() - 1)
_INDEX_MASK = L.dispatch_id(0, 0, -1)
_M64 = 0xFFFFFFFFFFFFFFFF
_pack_ev = _EV.pack_into
#: two consecutive events in one pack (``record_span``): the declared event's format, twice
_pack_ev2 = struct.Struct("<" + _EV.format.lstrip("<") * 2).pack_into
_now = time.monotonic_ns


def _expand(ev: np.ndarray) -> np.ndarray:
    """``ev`` with each EV_LAUNCH_RUNG record replaced by its EV_LAUNCH and EV_DOORBELL events."""
    rung = ev["kind"] == EV_LAUNCH_RUNG
    if not rung.any():
        return ev
    counts = 1 + rung.astype(np.intp)
    out = np.repeat(ev, counts)
    first = (np.cumsum(counts) - counts)[rung]
    out["kind"][first] = L.EV_LAUNCH
    db = first + 1
    a = out["a"][db]
    out["kind"][db] = L.EV_DOORBELL
    out["b"][db] = a & np.uint64(_INDEX_MASK)
    out["a"][db] = ((a >> np.uint64(_AGENT_SHIFT)) << np.uint64(_SLOT_BITS)) | out["track"][db].astype(np.uint64)
    return out


class TraceRing:
    __slots__ = ("index", "off", "hdr", "buf", "ev_off", "mask", "pid", "_cnt", "_seq", "_pub")

    def __init__(self, seg, topo, index: int):
        self.index = index
        self.off = index * topo.trace_ring_bytes
        self.hdr = seg.view(L.trace_ring_header, self.off, 1)
        self.buf = seg.buf
        self.ev_off = self.off + _HDR_BYTES
        self.mask = topo.trace_events - 1
        self.pid = os.getpid()
        self._cnt = memoryview(seg.buf)[self.off + _OFF_COUNT:self.off + _OFF_COUNT + 8].cast("Q")
        start = self._cnt[0]
        self._seq = itertools.count(start)      # the next slot to reserve (next(): atomic under the GIL)
        self._pub = start                       # the count published last (private: never read back)

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
        """One event (``ts``: now when None); thread-safe, never blocks (see the module)."""
        c = next(self._seq)                     # this event's slot: no other thread gets it
        _pack_ev(self.buf, self.ev_off + (c & self.mask) * _EV_BYTES, _now() if ts is None else ts,
                 kind, track, self.pid, a & _M64, b & _M64)
        if c >= self._pub:                      # no call between the test and the stores: no thread
            self._pub = c = c + 1               # switch either (an earlier slot published later
            self._cnt[0] = c                    # leaves count where the later one put it)

    def record_span(self, k1: int, k2: int, track: int, a: int, b: int, ts1: int, ts2: int) -> None:
        """Two events of one span at once (a kernel's BEGIN at ``ts1`` and END at ``ts2``, same
        track, ``a`` and ``b``: u64 values), written together after the span: one pack where the two
        slots are adjacent. Same guarantees as two ``record`` calls."""
        seq = self._seq
        c = next(seq)
        c2 = next(seq)                          # another thread may have taken the slot between
        m = self.mask
        i = c & m
        pid = self.pid
        if c2 == c + 1 and i != m:
            _pack_ev2(self.buf, self.ev_off + i * _EV_BYTES, ts1, k1, track, pid, a, b, ts2, k2, track, pid, a, b)
        else:
            _pack_ev(self.buf, self.ev_off + i * _EV_BYTES, ts1, k1, track, pid, a, b)
            _pack_ev(self.buf, self.ev_off + (c2 & m) * _EV_BYTES, ts2, k2, track, pid, a, b)
        if c2 >= self._pub:                     # as in record: count only moves forward
            self._pub = c2 = c2 + 1
            self._cnt[0] = c2

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
        ev = _expand(ev)
        ev = ev[np.argsort(ev["ts"], kind="stable")]
        out.append((i, hdr["name"].decode(errors="replace"), int(hdr["role"]), ev))
    return out
