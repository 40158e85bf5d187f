"""The SDMA engine of an agent: serves copy queues (hipMemcpy*, hipMemset*) on the device side.

Its queues hold 64-byte ``shm_layout.layouts.sdma_packet`` records with the same ring protocol as AQL
queues (header written last, INVALID after consumption, read index advanced by the engine). A packet
may name one dependency signal (stream order across engines); the engine parks the queue until that
signal reaches 0, then copies or fills and decrements the completion signal.
"""
from __future__ import annotations

import struct
import time

import numpy as np

from shm_layout import layouts as L

from .memory import MemoryFault

_SDMA = struct.Struct("<HHIQQQQQQQ")
_FILL_DT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


class SdmaEngine:
    def __init__(self, cp):
        self.cp = cp

    def process_queue(self, qs, engine: int, budget: int = 64) -> int:
        from .cp import BARRIER_POLL_MAX_S, BARRIER_POLL_MIN_S, PacketError
        cp = self.cp
        a64 = cp.a64
        done = 0
        if qs.parked_until and time.monotonic() < qs.parked_until:
            return 0
        while done < budget:
            nxt = cp.next_packet(qs)
            if nxt is None:
                break
            idx, off, ptype = nxt
            (_h, _r0, width, dep, src, dst, size, fill, _r2, sig) = _SDMA.unpack_from(cp.aseg.buf, off)
            try:
                if dep and cp.signal_value(dep) != 0:
                    qs.parked_until = time.monotonic() + qs.park_s
                    qs.park_s = min(qs.park_s * 2, BARRIER_POLL_MAX_S)
                    qs.desc["barrier_waits"] += 1
                    return done
                qs.parked_until = 0.0
                qs.park_s = BARRIER_POLL_MIN_S
                did = L.dispatch_id(cp.agent_index, qs.q, idx)
                start = time.monotonic_ns()
                if cp.trace:
                    cp.trace.record(L.EV_COPY_BEGIN, engine, did, size, start)
                try:
                    if ptype == L.SDMA_TYPE_COPY:
                        if size:
                            d = cp.mem.bytes(dst, size)
                            s = cp.mem.bytes(src, size)
                            np.copyto(d, s)
                    elif ptype == L.SDMA_TYPE_FILL:
                        if width not in _FILL_DT or size % width:
                            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                              f"fill width must be 1, 2 or 4 and divide size {size}, not {width}")
                        if size:
                            d = cp.mem.bytes(dst, size)
                            d.view(_FILL_DT[width])[:] = fill
                    else:
                        raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                          f"packet type {ptype:#x} is not an SDMA packet")
                except MemoryFault as f:
                    raise PacketError(f.status, f"SDMA {'copy' if ptype == L.SDMA_TYPE_COPY else 'fill'}: {f}") from None
                end = time.monotonic_ns()
                if cp.trace:
                    cp.trace.record(L.EV_COPY_END, engine, did, size, end)
                cp.complete_signal(sig, start, end)
            except PacketError as err:
                cp.fail_queue(qs, idx, off, err, engine)
                return done
            cp.retire(qs, idx, off)
            done += 1
            cp.agent.hdr["copies"] += 1
        if done:
            a64[qs.i_packets_done] += done
        return done
