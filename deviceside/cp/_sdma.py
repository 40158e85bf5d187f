"""The SDMA engine of an agent: serves copy queues (hipMemcpy*, hipMemset*) on the device side.

Its queues hold 64-byte ``shm_layout.layouts.sdma_packet`` records with the same ring protocol as AQL
queues (``_ring``: header written last, INVALID after consumption, read index advanced by the
engine). A packet may name one dependency signal (stream order across engines); the engine parks the
queue until that signal reaches 0, then copies or fills and decrements the completion signal. The
rectangular packets (``sdma_rect_packet``: COPY_RECT, FILL_RECT) move ``rows`` rows of ``width``
bytes a pitch apart on each side in one packet (a pitched 2-D/3-D region), touching only those bytes.
A bad packet (unknown type, a fill width other than 1, 2 or 4 or a value that does not fit it, a pitch
under the width, a range outside the live allocations of the queue's owner, a handle that is not a
signal of the queue's owner) fails its queue like a bad AQL packet; so does anything else a packet
raises (the engine never dies of a packet). The signals are checked before the copy runs.
"""
from __future__ import annotations

import time

import numpy as np

from shm_layout import layouts as L

from ._memory import MemoryFault
from ._ring import DISPATCH_INDEX_MASK, PacketError, QueueState, RingEngine

__all__ = ["SdmaEngine"]

_SDMA = L.struct_of(L.sdma_packet)
_RECT = L.struct_of(L.sdma_rect_packet, "width", "reserved2")      # the rectangular packets' body
_RECT_OFF = L.offset_of(L.sdma_rect_packet, "width")
_FILL_DT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_COPY, _FILL = L.SDMA_TYPE_COPY, L.SDMA_TYPE_FILL
_COPY_RECT, _FILL_RECT = L.SDMA_TYPE_COPY_RECT, L.SDMA_TYPE_FILL_RECT
_NAMES = {_COPY: "copy", _FILL: "fill", _COPY_RECT: "rectangular copy", _FILL_RECT: "rectangular fill"}
_I_COPIES = L.word_of(L.agent_header, "copies")
# bound once: a kernel module that replaces these does not change the engine
_copyto, _now, _strided = np.copyto, time.monotonic_ns, np.lib.stride_tricks.as_strided


def _check_fill(width: int, size: int, fill: int) -> None:
    if width not in _FILL_DT or size % width:
        raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                          f"fill width must be 1, 2 or 4 and divide size {size}, not {width}")
    if fill >> (8 * width):
        raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                          f"fill value {fill:#x} does not fit the fill width of {width} byte(s)")


class SdmaEngine(RingEngine):
    """The SDMA engine thread's packet processor (engine index ``n_engines`` of the agent)."""

    def __init__(self, cp, engine: int):
        super().__init__(cp, engine)
        self.agent_index = cp.agent_index
        self.mem = cp.mem
        self.trace = cp.trace
        self.check_signal = cp.check_signal
        self.complete_signal = cp.complete_signal
        self.signal_value = cp.signal_value
        self.rect_off = 0          # ring offset of the packet being run (a rectangular one's body is read from it)

    def run_packet(self, qs: QueueState, idx: int, ptype: int, width: int, src: int, dst: int, size: int,
                   fill: int, sig: int) -> None:
        slot = self.check_signal(sig, qs) if sig else -1
        rect = None
        if ptype == _COPY_RECT or ptype == _FILL_RECT:
            rect = _RECT.unpack_from(self.buf, self.rect_off + _RECT_OFF)
            size = rect[0] * rect[1]            # the bytes it moves (for the trace)
        did = qs.did_base | (idx & DISPATCH_INDEX_MASK)
        tr = self.trace
        start = _now()
        if tr:
            tr.record(L.EV_COPY_BEGIN, self.engine, did, size, start)
        mem = self.mem
        pid = qs.owner_pid
        try:
            if ptype == _COPY:
                if size:
                    _copyto(mem.bytes(dst, size, pid), mem.bytes(src, size, pid))
            elif ptype == _FILL:
                _check_fill(width, size, fill)
                if size:
                    mem.bytes(dst, size, pid).view(_FILL_DT[width])[:] = fill
            elif rect is not None:
                self.run_rect(ptype, width, src, dst, pid, rect)
            else:
                raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                                  f"packet type {ptype:#x} is not an SDMA packet")
        except MemoryFault as f:
            raise PacketError(f.status, f"SDMA {_NAMES.get(ptype, 'packet')}: {f}") from None
        end = _now()
        if tr:
            tr.record(L.EV_COPY_END, self.engine, did, size, end)
        if slot >= 0:
            self.complete_signal(slot, start, end)

    def run_rect(self, ptype: int, fill_width: int, src: int, dst: int, pid: int, rect) -> None:
        """A rectangular copy or fill (``rect``: its ``sdma_rect_packet`` body), each side's whole span
        checked against the owner's allocations before a byte moves."""
        width, rows, src_pitch, dst_pitch, fill, _r = rect
        if not width or not rows:
            return
        if dst_pitch < width or (ptype == _COPY_RECT and src_pitch < width):
            raise PacketError(L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                              f"pitches (src {src_pitch}, dst {dst_pitch}) must not be under the width {width}")
        mem = self.mem
        d = mem.bytes(dst, (rows - 1) * dst_pitch + width, pid)
        if ptype == _COPY_RECT:
            sv = mem.bytes(src, (rows - 1) * src_pitch + width, pid)
            _copyto(_strided(d, (rows, width), (dst_pitch, 1)), _strided(sv, (rows, width), (src_pitch, 1)))
            return
        _check_fill(fill_width, width, fill)
        if fill_width == 1:
            _strided(d, (rows, width), (dst_pitch, 1))[:] = fill
            return
        dt = _FILL_DT[fill_width]
        for r in range(rows):                  # wider elements: a row at a time (rows may be unaligned)
            d[r * dst_pitch:r * dst_pitch + width].view(dt)[:] = fill

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        if qs.closed:
            return 0
        a64 = self.a64
        if a64[qs.i_read] != qs.read or a64[qs.i_kindgen] != qs.kindgen:     # check_slot, inline
            self.check_slot(qs)
            return 0
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
                if dep and self.signal_value(dep, qs) != 0:
                    qs.park()
                    break
                if qs.parked_until:
                    qs.unpark()
                self.rect_off = off                 # where run_rect reads a rectangular packet's body
                self.run_packet(qs, idx, ptype, width, src, dst, size, fill, sig)
            except BaseException as exc:  # noqa: BLE001 - every packet error is a queue error, never a dead engine
                self.packet_error(qs, idx, exc, sig)
                break
            if not self.retire(qs, idx, off):
                return done + 1                     # the slot holds another queue now: not its counters
            done += 1
        if done:
            self.bump(qs.i_packets_done, done)
            self.bump(_I_COPIES, done)          # the agent header's copies: this engine is its one writer
        return done
