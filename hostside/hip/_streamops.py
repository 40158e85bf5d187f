"""Stream memory operations: hipStreamWaitValue32/64 and hipStreamWriteValue32/64.

A wait is one AMD barrier-value packet on the stream's AQL queue (``shm_layout.aql``,
``amd_barrier_value_packet``, with hdemu's memory operand: ``reserved0`` = 4 or 8): the command
processor parks the queue, re-polling the value with the barrier back-off, until the condition holds;
later work on the stream waits behind it (the packet's barrier bit), other streams go on. A write is
the same layout with hdemu's write-value format: the value is stored with one aligned store, in stream
order. ``ptr`` is a device or pinned host pointer of this process, aligned to the operand's width
(HIP asks for hipMallocSignalMemory memory; hdemu accepts any such allocation).

HIP's four wait conditions are turned into HSA's masked comparisons, ``(*ptr & mask') cond value'``:
Gte -> (mask, GTE, value); Eq -> (mask, EQ, value); And (``(*ptr & mask) & value != 0``) ->
(mask & value, NE, 0); Nor (``~((*ptr & mask) | (value & mask)) != 0``, the mask applied to both,
read within the mask as CLR does: some bit of mask is clear in both) -> (~value & mask, NE,
~value & mask). A 64-bit wait compares as int64, as AMD's packet processor compares signal values
(GTE 5 holds while *ptr is 2**63 or above); a 32-bit one is unsigned (the masked value never has
bit 63).
Not permitted during stream capture (hipErrorStreamCaptureUnsupported; the capture is invalidated).

A wait holds its hardware queue: streams that share the queue (a process with more streams than the
agent gives it queues, ``hostside.clr._qpool``) wait behind it too, so a wait that only another stream
of the same queue would release is a deadlock until the host's wait timeout, as on a real GPU once
streams outnumber hardware queues.
"""
from __future__ import annotations

import numpy as np

from shm_layout import aql as A

from ._context import _get_stream
from ._errors import _api, _raise, hipError_t
from ._memory import _classify

__all__ = ["hipStreamWaitValueGte", "hipStreamWaitValueEq", "hipStreamWaitValueAnd", "hipStreamWaitValueNor",
           "hipStreamWaitValue32", "hipStreamWaitValue64", "hipStreamWriteValue32", "hipStreamWriteValue64"]

hipStreamWaitValueGte = 0x0
hipStreamWaitValueEq = 0x1
hipStreamWaitValueAnd = 0x2
hipStreamWaitValueNor = 0x3


def _int(api: str, name: str, v, width: int) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 0 <= v < 1 << (8 * width):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {name} must be an int in [0, 2**{8 * width}), not {v!r}")
    return int(v)


def _target(api: str, stream, ptr, width: int):
    """(stream, device address) of a value operation, checked before anything is submitted."""
    kind, addr = _classify(ptr, width, f"{api}: ptr")
    if kind == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: ptr must be device or pinned host memory, not a host array")
    if addr % width:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: ptr {addr:#x} is not aligned to {width} bytes")
    s = _get_stream(stream)
    if s.capture is not None:
        s.capture.illegal(api)
    return s, addr


def _condition(flags: int, value: int, mask: int, width: int):
    """(mask, hsa condition, value) of a HIP wait condition."""
    every = (1 << (8 * width)) - 1
    if flags == hipStreamWaitValueGte:
        return mask, A.HSA_SIGNAL_CONDITION_GTE, value
    if flags == hipStreamWaitValueEq:
        return mask, A.HSA_SIGNAL_CONDITION_EQ, value
    if flags == hipStreamWaitValueAnd:
        return mask & value, A.HSA_SIGNAL_CONDITION_NE, 0
    rest = ~value & mask & every        # Nor, as CLR: some bit of mask is clear in both *ptr and value
    return rest, A.HSA_SIGNAL_CONDITION_NE, rest


def _wait(api: str, stream, ptr, value, flags, mask, width: int) -> None:
    value, mask = _int(api, "value", value, width), _int(api, "mask", mask, width)
    if isinstance(flags, bool) or flags not in (hipStreamWaitValueGte, hipStreamWaitValueEq, hipStreamWaitValueAnd,
                                                hipStreamWaitValueNor):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: flags must be hipStreamWaitValueGte, Eq, And or Nor "
                                                f"(0..3), not {flags!r}")
    s, addr = _target(api, stream, ptr, width)
    m, cond, v = _condition(flags, value, mask, width)
    s.vgpu.value_packet(A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE, width, addr, v, m, cond)
    s.vgpu.flush()


def _write(api: str, stream, ptr, value, flags, width: int) -> None:
    value = _int(api, "value", value, width)
    if isinstance(flags, bool) or flags != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: flags must be 0, not {flags!r}")
    s, addr = _target(api, stream, ptr, width)
    s.vgpu.value_packet(A.HDEMU_PACKET_TYPE_WRITE_VALUE, width, addr, value)
    s.vgpu.flush()


@_api
def hipStreamWaitValue32(stream, ptr, value: int, flags: int, mask: int = 0xFFFFFFFF) -> None:
    """Later work on ``stream`` waits until the u32 at ``ptr`` meets the condition ``flags``."""
    _wait("hipStreamWaitValue32", stream, ptr, value, flags, mask, 4)


@_api
def hipStreamWaitValue64(stream, ptr, value: int, flags: int, mask: int = 0xFFFFFFFFFFFFFFFF) -> None:
    """Later work on ``stream`` waits until the u64 at ``ptr`` meets the condition ``flags``."""
    _wait("hipStreamWaitValue64", stream, ptr, value, flags, mask, 8)


@_api
def hipStreamWriteValue32(stream, ptr, value: int, flags: int = 0) -> None:
    """Store the u32 ``value`` at ``ptr`` once the work before it on ``stream`` is done."""
    _write("hipStreamWriteValue32", stream, ptr, value, flags, 4)


@_api
def hipStreamWriteValue64(stream, ptr, value: int, flags: int = 0) -> None:
    """Store the u64 ``value`` at ``ptr`` once the work before it on ``stream`` is done."""
    _write("hipStreamWriteValue64", stream, ptr, value, flags, 8)
