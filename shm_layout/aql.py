"""AQL packets, byte-for-byte the layouts of ROCR-Runtime's ``hsa.h`` (large model, little endian).

Who writes what: the *host* writes every field of a packet, the body first and the 16-bit header
last (the header store is the publish); the *device* (command processor) writes only the header,
back to INVALID, once it has consumed the slot.

Header bits (``hsa_packet_header_t``): type 0-7, barrier 8, acquire fence scope 9-10, release fence
scope 11-12.
"""
from __future__ import annotations

import numpy as np

from ._dtype import checked_dtype

# hsa_packet_type_t
HSA_PACKET_TYPE_VENDOR_SPECIFIC = 0
HSA_PACKET_TYPE_INVALID = 1
HSA_PACKET_TYPE_KERNEL_DISPATCH = 2
HSA_PACKET_TYPE_BARRIER_AND = 3
HSA_PACKET_TYPE_AGENT_DISPATCH = 4
HSA_PACKET_TYPE_BARRIER_OR = 5

# hsa_fence_scope_t
HSA_FENCE_SCOPE_NONE = 0
HSA_FENCE_SCOPE_AGENT = 1
HSA_FENCE_SCOPE_SYSTEM = 2

# hsa_packet_header_t (bit offsets)
HSA_PACKET_HEADER_TYPE = 0
HSA_PACKET_HEADER_BARRIER = 8
HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE = 9
HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE = 11
HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS = 0

PACKET_BYTES = 64

kernel_dispatch_packet = checked_dtype("hsa_kernel_dispatch_packet_t", [
    ("header", "<u2", 0),
    ("setup", "<u2", 2),
    ("workgroup_size_x", "<u2", 4),
    ("workgroup_size_y", "<u2", 6),
    ("workgroup_size_z", "<u2", 8),
    ("reserved0", "<u2", 10),
    ("grid_size_x", "<u4", 12),
    ("grid_size_y", "<u4", 16),
    ("grid_size_z", "<u4", 20),
    ("private_segment_size", "<u4", 24),
    ("group_segment_size", "<u4", 28),
    ("kernel_object", "<u8", 32),
    ("kernarg_address", "<u8", 40),
    ("reserved2", "<u8", 48),
    ("completion_signal", "<u8", 56),
], itemsize=64)

_barrier_fields = [
    ("header", "<u2", 0),
    ("reserved0", "<u2", 2),
    ("reserved1", "<u4", 4),
    ("dep_signal", ("<u8", (5,)), 8),
    ("reserved2", "<u8", 48),
    ("completion_signal", "<u8", 56),
]
barrier_and_packet = checked_dtype("hsa_barrier_and_packet_t", _barrier_fields, itemsize=64)
barrier_or_packet = checked_dtype("hsa_barrier_or_packet_t", _barrier_fields, itemsize=64)

# hsa_amd_packet_type_t (the AmdFormat byte of a VENDOR_SPECIFIC packet), and hdemu's own format
HSA_AMD_PACKET_TYPE_BARRIER_VALUE = 2
#: hdemu extension: write ``value`` (``reserved0`` bytes: 4 or 8) at the address in ``signal``
HDEMU_PACKET_TYPE_WRITE_VALUE = 0x80

# hsa_signal_condition_t
HSA_SIGNAL_CONDITION_EQ = 0
HSA_SIGNAL_CONDITION_NE = 1
HSA_SIGNAL_CONDITION_LT = 2
HSA_SIGNAL_CONDITION_GTE = 3

#: ``hsa_amd_barrier_value_packet_t`` (hsa_ext_amd.h): the packet processor halts the queue until
#: ``(value_of(signal) & mask) cond value``. ``value`` and ``mask`` are int64 in hsa_ext_amd.h; here
#: their bits as u64. hdemu extension: ``reserved0`` is the operand's width: 0 (as in hsa_ext_amd.h:
#: ``signal`` is a signal handle, compared signed) or 4 / 8 (``signal`` is the device address of an
#: aligned u32 / u64 the queue's owner holds: hipStreamWaitValue32/64; a u64 compares as int64, as a
#: signal value does). The same
#: layout with AmdFormat ``HDEMU_PACKET_TYPE_WRITE_VALUE`` stores ``value`` there instead
#: (hipStreamWriteValue32/64); ``mask`` and ``cond`` are then 0.
amd_barrier_value_packet = checked_dtype("hsa_amd_barrier_value_packet_t", [
    ("header", "<u2", 0),
    ("amd_format", "u1", 2),
    ("reserved", "u1", 3),
    ("reserved0", "<u4", 4),
    ("signal", "<u8", 8),
    ("value", "<u8", 16),
    ("mask", "<u8", 24),
    ("cond", "<u4", 32),
    ("reserved1", "<u4", 36),
    ("reserved2", "<u8", 40),
    ("reserved3", "<u8", 48),
    ("completion_signal", "<u8", 56),
], itemsize=64)

PACKET_DTYPES = {
    "kernel_dispatch_packet": kernel_dispatch_packet,
    "barrier_and_packet": barrier_and_packet,
    "barrier_or_packet": barrier_or_packet,
    "amd_barrier_value_packet": amd_barrier_value_packet,
}


def make_header(ptype: int, *, barrier: bool = False, acquire: int = HSA_FENCE_SCOPE_SYSTEM,
                release: int = HSA_FENCE_SCOPE_SYSTEM) -> int:
    if not 0 <= ptype <= 0xFF:
        raise ValueError(f"packet type must fit 8 bits, not {ptype}")
    for name, scope in (("acquire", acquire), ("release", release)):
        if scope not in (HSA_FENCE_SCOPE_NONE, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_SYSTEM):
            raise ValueError(f"{name} fence scope must be 0, 1 or 2, not {scope}")
    return (ptype << HSA_PACKET_HEADER_TYPE) | (int(bool(barrier)) << HSA_PACKET_HEADER_BARRIER) \
        | (acquire << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) \
        | (release << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)


def header_type(header: int) -> int:
    return header & 0xFF


def header_barrier(header: int) -> bool:
    return bool((header >> HSA_PACKET_HEADER_BARRIER) & 1)


def header_acquire(header: int) -> int:
    return (header >> HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) & 3


def header_release(header: int) -> int:
    return (header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) & 3


def encode(kind: str, **fields) -> bytes:
    """64 bytes of packet ``kind`` (a key of PACKET_DTYPES) with the given fields; the rest zero."""
    try:
        dt = PACKET_DTYPES[kind]
    except KeyError:
        raise ValueError(f"packet kind must be one of {sorted(PACKET_DTYPES)}, not {kind!r}") from None
    rec = np.zeros(1, dtype=dt)
    for k, v in fields.items():
        if k not in dt.names:
            raise ValueError(f"{kind} has no field {k!r}; fields are {dt.names}")
        rec[0][k] = v
    return rec.tobytes()


def decode(kind: str, data: bytes) -> dict:
    dt = PACKET_DTYPES[kind]
    if len(data) != PACKET_BYTES:
        raise ValueError(f"an AQL packet is {PACKET_BYTES} bytes, not {len(data)}")
    rec = np.frombuffer(data, dtype=dt)[0]
    out = {}
    for k in dt.names:
        v = rec[k]
        out[k] = [int(x) for x in v] if np.ndim(v) else int(v)
    return out
