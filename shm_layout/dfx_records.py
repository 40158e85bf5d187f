"""DFX record kinds, their record layouts, and the geometry of the buffer segment (``dfxbuf``).

Split out of ``shm_layout.dfx`` so that the config schema (``shm_layout.config``) can take its
choices (kind names, subsystems, archs, policies) from these tables and bound the ``dfxbuf`` size
with the very formula the segment is laid out by, while ``shm_layout.dfx`` takes its profiling
defaults from that schema: ``dfx -> config -> dfx_records``, no import cycle. ``shm_layout.dfx``
re-exports every name here; callers keep using ``shm_layout.dfx``.
"""
from __future__ import annotations

import numpy as np

from ._dtype import checked_dtype

DFX_BUF_BASE = 0x6000_0000_0000

# subsystem kinds (the ``kind`` of a ready entry)
K_AICPU_TASK, K_AICORE_TASK, K_PMU, K_DEPGEN, K_ARGS_DUMP, K_SCOPE_STATS, K_STALL = range(7)
N_KINDS = 7
KIND_NAMES = ["aicpu_task", "aicore_task", "pmu", "depgen", "args_dump", "scope_stats", "stall"]
SUBSYSTEMS = {"chip_swimlane": (K_AICPU_TASK, K_AICORE_TASK), "pmu": (K_PMU,), "depgen": (K_DEPGEN,),
              "args_dump": (K_ARGS_DUMP,), "scope_stats": (K_SCOPE_STATS,)}

ARCHS = {  # system counter frequency, memory model, PMU counters per record
    "a2a3": {"freq_hz": 50_000_000, "svm": True, "pmu_counters": 8},
    "a5": {"freq_hz": 1_000_000_000, "svm": False, "pmu_counters": 10},
}

#: What a writer does when the host falls behind (per kind; the stall kind is always block_timeout).
POLICIES = ("block", "drop", "block_timeout", "common_mode")

# ---- records ------------------------------------------------------------------------------------
aicpu_task = checked_dtype("AicpuTask", [
    ("dispatch_time", "<u8", 0), ("finish_time", "<u8", 8), ("reg_task_id", "<u8", 16),
    ("thread", "<u4", 24)], itemsize=32)
aicore_task = checked_dtype("AicoreTask", [
    ("start_time", "<u8", 0), ("end_time", "<u8", 8), ("reg_task_id", "<u8", 16),
    ("task_token", "<u4", 24), ("receive_to_start_cycles", "<u4", 28)], itemsize=32)


def pmu_record(n_counters: int) -> np.dtype:
    size = 24 + 8 * n_counters
    size += (-size) % 16
    return checked_dtype(f"Pmu{n_counters}", [
        ("task_id", "<u8", 0), ("func_id", "<u4", 8), ("core_type", "<u4", 12),
        ("total_cycles", "<u8", 16), ("counters", ("<u8", (n_counters,)), 24)], itemsize=size)


depgen = checked_dtype("DepGen", [
    ("src_task", "<u8", 0), ("dst_task", "<u8", 8), ("edge_kind", "<u4", 16), ("thread", "<u4", 20)],
    itemsize=32)
EDGE_STREAM, EDGE_BARRIER = 1, 2
args_dump = checked_dtype("ArgsDump", [
    ("task_id", "<u8", 0), ("kernel_object", "<u8", 8), ("payload_offset", "<u8", 16),
    ("payload_len", "<u4", 24), ("thread", "<u4", 28), ("inline", "S96", 32)], itemsize=128)
#: Header of each ArgsDump payload in the collector's ``args_payload.bin`` (an output file, not
#: shared memory; packed, so the file stays byte-for-byte ``<QQI`` + payload): written by the
#: collector only; ``length`` payload bytes follow it.
payload_file_header = checked_dtype("payload_file_header", [
    ("task_id", "<u8", 0),      # collector: the record's task_id
    ("thread", "<u8", 8),       # collector: the AICPU thread whose arena held the payload
    ("length", "<u4", 16),      # collector: payload bytes that follow
], itemsize=20)
scope_stats = checked_dtype("ScopeStats", [
    ("scope_id", "<u8", 0), ("count", "<u4", 8), ("thread", "<u4", 12), ("total_ns", "<u8", 16),
    ("max_ns", "<u8", 24)], itemsize=32)
stall_record = checked_dtype("stall_record", [
    ("thread", "<u4", 0), ("kind", "<u4", 4), ("gate", "<u4", 8), ("outcome", "<u4", 12),
    ("start_ns", "<u8", 16), ("end_ns", "<u8", 24),
    ("release_ns", "<u8", 32)],   # pop gate: when the host published the refill that ended it
    itemsize=48)
#: Header of a published buffer (written by the device at publish; the records follow it).
#: ``published_before`` is the number of records of the pool published before this buffer: on one
#: ready queue a pool's buffers arrive in order, so the host sees a gap (a deflated record count, a
#: lost or rejected entry) or an overlap (an inflated count) at the next buffer.
buffer_header = checked_dtype("buffer_header", [
    ("record_count", "<u4", 0), ("kind", "<u4", 4), ("seq", "<u4", 8), ("thread", "<u4", 12),   # device
    ("published_before", "<u8", 16)],                                                            # device
    itemsize=64)

#: Records per buffer by default: about 128 KB a buffer (64-192 KB by record size; the stall pool
#: keeps its small buffers). The collector's work is mostly per buffer (checks, ownership words,
#: the file write, the refill), about 100-200 us of Python whatever the buffer holds, so the buffer
#: size sets its cost per record: at 32 KB buffers the collector took about 4 us of CPU per profiled
#: launch, at 128 KB 1-2 us, and on two cores that CPU is the host's and the command processor's.
DEFAULT_RECORDS_PER_BUFFER = {K_AICPU_TASK: 4000, K_AICORE_TASK: 4096, K_PMU: 2048, K_DEPGEN: 2048,
                              K_ARGS_DUMP: 1024, K_SCOPE_STATS: 2048, K_STALL: 256}
#: The in-band stall records have a pool of their own, never shrunk, and wait at most this long
#: for a buffer (a stall record must not stall its writer for long; on expiry it is counted dropped).
STALL_POOL_BUFFERS = 8
STALL_POOL_WAIT_S = 0.05
ARENA_BYTES = 64 * 1024
#: Largest ``dfxbuf`` segment a config may ask for (it is pre-faulted in /dev/shm at start).
DFX_BUF_MAX_BYTES = 1 << 30


class DfxBuffers:
    """The ``dfxbuf`` segment: per thread, per kind, a slab of buffers; then per-thread arenas.

    Takes the validated ``[platform.profiling]`` dict (``prof``) and the arch name.
    """

    def __init__(self, prof: dict, arch: str):
        self.prof = prof
        self.arch = arch
        a = ARCHS[arch]
        self.freq_hz = a["freq_hz"]
        self.svm = a["svm"]
        self.T = prof["lanes"] * prof["threads_per_lane"]
        # the in-band stall records always flow (their own pool; see STALL_POOL_WAIT_S)
        self.kinds = sorted({k for s in prof["subsystems"] for k in SUBSYSTEMS[s]} | {K_STALL})
        self.rec_dtype = {K_AICPU_TASK: aicpu_task, K_AICORE_TASK: aicore_task,
                          K_PMU: pmu_record(a["pmu_counters"]), K_DEPGEN: depgen,
                          K_ARGS_DUMP: args_dump, K_SCOPE_STATS: scope_stats, K_STALL: stall_record}
        self.per_buf = dict(DEFAULT_RECORDS_PER_BUFFER)
        for name, n in prof["records_per_buffer"].items():
            self.per_buf[KIND_NAMES.index(name)] = int(n)
        self.pool_size = {}
        for t in range(self.T):
            n = int(prof["pool_overrides"].get(str(t), prof["pool_overrides"].get(t, prof["buffers_per_pool"])))
            self.pool_size[t] = n
        # dfxbuf: per kind, per thread, pool_size[t] buffers; then per-thread payload arenas
        self.buf_bytes_of = {k: buffer_header.itemsize + self.per_buf[k] * self.rec_dtype[k].itemsize
                             for k in range(N_KINDS)}
        self.slab = {}   # (thread, kind) -> (offset, count)
        self.first_id = {}   # (thread, kind) -> buffer id of its slab's first buffer (ids: 0 .. n_buffers-1)
        off = 0
        n_ids = 0
        for t in range(self.T):
            for k in self.kinds:
                n = STALL_POOL_BUFFERS if k == K_STALL else self.pool_size[t]
                self.slab[(t, k)] = (off, n)
                self.first_id[(t, k)] = n_ids
                off += n * self.buf_bytes_of[k]
                n_ids += n
        self.n_buffers = n_ids
        self.arena_data_off = off
        self.buf_region_bytes = off + self.T * ARENA_BYTES

    def buffer_addr(self, t, k, i):
        off, n = self.slab[(t, k)]
        if not 0 <= i < n:
            raise IndexError(f"buffer {i} of pool ({t}, {k}) out of range [0, {n})")
        return DFX_BUF_BASE + off + i * self.buf_bytes_of[k]

    def check_buffer(self, t, k, addr):
        """Index of buffer ``addr`` in pool (t, k), or raise ValueError naming what is wrong."""
        if (t, k) not in self.slab:
            raise ValueError(f"pool (thread {t}, kind {k}) does not exist")
        off, n = self.slab[(t, k)]
        rel = addr - DFX_BUF_BASE - off
        size = self.buf_bytes_of[k]
        if rel < 0 or rel >= n * size or rel % size:
            raise ValueError(f"buffer pointer {addr:#x} is not a buffer of pool (thread {t}, kind "
                             f"{KIND_NAMES[k]})")
        return rel // size

    def buffer_id(self, k, addr):
        """The platform-wide id (0 .. n_buffers-1) of buffer ``addr`` of kind ``k``, or ValueError: the
        index of its ownership word (``shm_layout.dfx.buffer_owner``)."""
        t, i = self.check_buffer_kind(k, addr)
        return self.first_id[(t, k)] + i

    def check_buffer_kind(self, k, addr):
        """(owning thread, index) of buffer ``addr`` among all buffers of kind ``k``, or ValueError."""
        size = self.buf_bytes_of[k]
        for t in range(self.T):
            off, n = self.slab.get((t, k), (0, 0))
            rel = addr - DFX_BUF_BASE - off
            if 0 <= rel < n * size:
                if rel % size:
                    break
                return t, rel // size
        raise ValueError(f"buffer pointer {addr:#x} is not a buffer of kind {KIND_NAMES[k]}")

    def arena_data(self, t):
        return self.arena_data_off + t * ARENA_BYTES
