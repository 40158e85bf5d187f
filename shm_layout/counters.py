"""The emulated counter unit: counter ids and the per-dispatch counter-request block.

Real hardware can read only a few counters per dispatch. The emulated GPU computes ``N_COUNTERS``
deterministic counters for every dispatch that asks for them, but writes back at most
``counter_slots`` of them (platform config, default 4): a profiler that wants all of them has to
replay the dispatch ``ceil(N / K)`` times (``hostside.replay``, ``hostside.counters``).

How a dispatch asks: the host puts the device address of a ``counter_request`` block (fine-grained
host memory, ``ALLOC_HOST``) into the dispatch packet's ``reserved2`` field (u64 @48; 0 = no
counters). After the kernel ran and before its completion signal is decremented, the command
processor writes the requested counters into ``out[]`` and then ``n_written`` (the publish: the
completion signal decrement that follows is a locked RMW, so the host that sees the signal at 0
sees the block).

Counters are deterministic functions of the dispatch: its geometry, its kernarg segment, the extents
of its pointer arguments (pointer to end of the allocation holding it) and the bytes of those extents
before and after the kernel. The same dispatch on the same inputs therefore gives the same values
whether they are read in one pass of K = N slots or in several replayed passes of K slots each.
"""
from __future__ import annotations

from ._dtype import checked_dtype

#: (id, name, meaning). Ids are stable; names are what tools and the CLI use.
COUNTERS = (
    (0, "WORKGROUPS", "workgroups in the grid (partial workgroups count)"),
    (1, "WAVEFRONTS", "wavefronts launched: per workgroup ceil(work-items / 64)"),
    (2, "WORKITEMS", "work-items in the grid (elements)"),
    (3, "INACTIVE_LANES", "lanes of launched wavefronts that hold no work-item"),
    (4, "INSTRUCTIONS", "instruction estimate: wavefronts * (8 + 2 * arguments) + (BYTES_READ + BYTES_WRITTEN) // 256"),
    (5, "KERNARG_BYTES", "size of the kernarg segment"),
    (6, "POINTER_ARGS", "non-null pointer arguments"),
    (7, "SCALAR_ARGS", "scalar arguments"),
    (8, "EXTENT_BYTES", "sum of the pointer arguments' extents (pointer to end of its allocation)"),
    (9, "BYTES_READ", "read estimate: per pointer argument min(extent, work-items * element size)"),
    (10, "BYTES_WRITTEN", "bytes of pointer-argument extents and module globals whose value changed"),
    (11, "ELEMENTS_WRITTEN", "elements (of each pointer's element type) whose value changed"),
    (12, "LINES_WRITTEN", "64-byte lines with at least one changed byte"),
    (13, "LDS_BYTES", "group_segment_size * workgroups"),
    (14, "SCRATCH_BYTES", "private_segment_size * work-items"),
    (15, "OUTPUT_CRC32", "crc32 of every pointer extent and module global after the kernel"),
)
N_COUNTERS = len(COUNTERS)
COUNTER_NAMES = tuple(name for _i, name, _d in COUNTERS)
COUNTER_IDS = {name: i for i, name, _d in COUNTERS}

#: Largest ``counter_slots`` a platform may configure (the capacity of a request block).
MAX_SLOTS = 16
#: Default ``counter_slots``: counters the device reads per dispatch.
DEFAULT_SLOTS = 4
#: Value of a slot whose counter id is unknown.
INVALID_VALUE = (1 << 64) - 1
#: Bytes of pointer extents (plus module globals) the unit compares/hashes per dispatch; beyond this
#: the byte-level counters (BYTES_WRITTEN, ELEMENTS_WRITTEN, LINES_WRITTEN, OUTPUT_CRC32) only cover
#: the first SCAN_MAX_BYTES.
SCAN_MAX_BYTES = 64 << 20

counter_request = checked_dtype("counter_request", [
    ("n_slots", "<u4", 0),           # host: counters requested (the device reads at most counter_slots)
    ("n_written", "<u4", 4),         # device: slots written (min(n_slots, counter_slots)); host sets 0
    ("dispatch_id", "<u8", 8),       # device: dispatch id of the packet that filled the block
    ("ids", ("<u4", (MAX_SLOTS,)), 16),   # host: counter ids, n_slots of them
    ("out", ("<u8", (MAX_SLOTS,)), 80),   # device: values, n_written of them
], itemsize=256)
REQUEST_BYTES = counter_request.itemsize


def counter_id(c) -> int:
    """The id of a counter given by name or id; raises ValueError naming the known counters."""
    if isinstance(c, str):
        try:
            return COUNTER_IDS[c.upper()]
        except KeyError:
            raise ValueError(f"counter must be one of {list(COUNTER_NAMES)}, not {c!r}") from None
    if isinstance(c, int) and not isinstance(c, bool) and 0 <= c < N_COUNTERS:
        return c
    raise ValueError(f"counter id must be in [0, {N_COUNTERS}), not {c!r}")
