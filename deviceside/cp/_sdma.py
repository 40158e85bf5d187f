"""The SDMA engine of an agent: serves copy queues (hipMemcpy*, hipMemset*) on the device side.

Its queues hold 64-byte ``shm_layout.layouts.sdma_packet`` records with the same ring protocol as AQL
queues (``_ring``: header written last, INVALID after consumption, read index advanced by the
engine). A packet may name one dependency signal (stream order across engines); the engine parks the
queue until that signal reaches 0, then copies or fills and decrements the completion signal. A bad
packet (unknown type, a fill width other than 1, 2 or 4 or a value that does not fit it, a range
outside the live allocations, a handle that is not a signal) fails its queue like a bad AQL packet.
"""
from __future__ import annotations

import time

import numpy as np

from shm_layout import layouts as L

from ._memory import MemoryFault
from ._ring import PacketError, QueueState, RingEngine

__all__ = ["SdmaEngine"]

_SDMA = L.struct_of(L.sdma_packet)
_FILL_DT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_COPY, _FILL = L.SDMA_TYPE_COPY, L.SDMA_TYPE_FILL


class SdmaEngine(RingEngine):
    """The SDMA engine thread's packet processor (engine index ``n_engines`` of the agent)."""

    def __init__(self, cp, engine: int):
        super().__init__(cp, engine)
        self.agent_index = cp.agent_index
        self.mem = cp.mem
        self.trace = cp.trace
        self.hdr = cp.agent.hdr
        self.complete_signal = cp.complete_signal
        self.signal_value = cp.signal_value
        self.fail_queue = cp.fail_queue

    def run_packet(self, qs: QueueState, idx: int, ptype: int, width: int, src: int, dst: int, size: int,
                   fill: int, sig: int) -> None:
        did = L.dispatch_id(self.agent_index, qs.q, idx)
        tr = self.trace
        start = time.monotonic_ns()
        if tr:
            tr.record(L.EV_COPY_BEGIN, self.engine, did, size, start)
        mem = self.mem
        try:
            if ptype == _COPY:
                if size:
                    np.copyto(mem.bytes(dst, size), mem.bytes(src, size))
            elif ptype == _FILL:
                if width not in _FILL_DT or size % width:
                    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                      f"fill width must be 1, 2 or 4 and divide size {size}, not {width}")
                if fill >> (8 * width):
                    raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                      f"fill value {fill:#x} does not fit the fill width of {width} byte(s)")
                if size:
                    mem.bytes(dst, size).view(_FILL_DT[width])[:] = fill
            else:
                raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                  f"packet type {ptype:#x} is not an SDMA packet")
        except MemoryFault as f:
            raise PacketError(f.status, f"SDMA {'copy' if ptype == _COPY else 'fill'}: {f}") from None
        end = time.monotonic_ns()
        if tr:
            tr.record(L.EV_COPY_END, self.engine, did, size, end)
        self.complete_signal(sig, start, end)

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        done = 0
        if qs.parked_until and time.monotonic() < qs.parked_until:
            return 0
        while done < budget:
            nxt = self.next_packet(qs)
            if nxt is None:
                break
            idx, off, ptype = nxt
            (_h, _r0, width, dep, src, dst, size, fill, _r2, sig) = _SDMA.unpack_from(self.buf, off)
            try:
                if dep and self.signal_value(dep) != 0:
                    qs.park()
                    return done
                if qs.parked_until:
                    qs.unpark()
                self.run_packet(qs, idx, ptype, width, src, dst, size, fill, sig)
            except PacketError as err:
                self.fail_queue(qs, idx, err, self.engine, sig)
                return done
            self.retire(qs, idx, off)
            done += 1
            self.hdr["copies"] += 1
        if done:
            self.a64[qs.i_packets_done] += done
        return done
