"""Device-local task rings: the command processor hands every executed packet to an AICPU lane.

One single-producer ring per (agent, AQL engine) in the ``dfxctl`` segment; ring ``r`` is consumed by
AICPU thread ``r % T``. Header: ``head`` u64 @0 (lane), ``tail`` u64 @64 (CP), ``dropped`` u64 @72
(CP). A full ring never blocks the GPU: the event is dropped and counted (``dropped``), which the
lane statistics report.
"""
from __future__ import annotations

import struct

from shm_layout import dfx as D
from shm_layout.sync import notify

_EV = struct.Struct("<QQQQQQIIIHH64s")


class TaskRings:
    def __init__(self, pm, g, agent: int, n_engines: int):
        self.g = g
        self.ctl = pm.segs["dfxctl"]
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.rings = []
        for e in range(n_engines):
            r = g.ring_of(agent, e, n_engines)
            base = g.rings_off + r * g.ring_bytes
            t = g.thread_of_ring(r)
            self.rings.append((base, base // 8, self.ctl.addr + g.wake_off + t * 64))

    def emit(self, engine, did, kobj, start, end, fetch, prev, grid, karg: bytes, ptype: int) -> bool:
        if engine >= len(self.rings):
            return False
        base, hi, wake = self.rings[engine]
        c64 = self.c64
        tail = c64[hi + 8]
        if tail - c64[hi] >= D.TASK_RING:
            c64[hi + 9] += 1
            return False
        _EV.pack_into(self.ctl.buf, base + 128 + (tail % D.TASK_RING) * 128, did, kobj, start, end, fetch,
                      prev, grid[0], grid[1], grid[2], len(karg), ptype, karg)
        c64[hi + 8] = tail + 1
        notify(wake)
        return True
