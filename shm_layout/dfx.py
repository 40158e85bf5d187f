"""DFX profiling: the shared layouts of the AICPU writer lanes and the host collector.

Three segments (created by the supervisor when ``[platform.profiling] enabled = true``):

* ``dfxhdr`` — the DFX header, *device memory*: per AICPU thread ``t`` its ready queue (entries,
  ``queue_heads[t]`` written by the host, ``queue_tails[t]`` by the device) and, per subsystem kind
  ``k``, a pool block (active head, written by the device; free queue ``buffer_ptrs`` and ``tail``
  written by the host, ``head`` by the device), plus the ArgsDump arena cursors. Under SVM (a2a3)
  the host maps it directly; under non-SVM (a5) the host works on a private mirror and moves exactly
  the fields it touches with ``write_range_to_device`` / ``read_range_from_device``.
* ``dfxbuf`` — the buffers (device memory too): per kind a slab of ``buffers_per_pool * T`` buffers,
  each a 64-byte buffer header followed by ``records_per_buffer`` records. A buffer pointer is a
  device address ``DFX_BUF_BASE + offset``; the host validates every pointer it reads.
* ``dfxctl`` — control and mailboxes (coherent, like an interrupt line): per-thread wake words, the
  common-mode stall flag, lane and collector states, per-thread stall logs, and the device-local task
  rings through which the command processor hands executed dispatches to the lanes.

Ready queue: full when ``(tail + 1) % N == head``, empty when ``head == tail``.
Free queue: empty when ``head == tail``, full when ``tail - head >= SLOT_COUNT`` (u32 counters).
"""
from __future__ import annotations

import numpy as np

from ._dtype import checked_dtype, field_offset

DFX_BUF_BASE = 0x6000_0000_0000

# subsystem kinds (the ``kind`` of a ready entry)
K_AICPU_TASK, K_AICORE_TASK, K_PMU, K_DEPGEN, K_ARGS_DUMP, K_SCOPE_STATS, K_STALL = range(7)
N_KINDS = 7
KIND_NAMES = ["aicpu_task", "aicore_task", "pmu", "depgen", "args_dump", "scope_stats", "stall"]
SUBSYSTEMS = {"chip_swimlane": (K_AICPU_TASK, K_AICORE_TASK), "pmu": (K_PMU,), "depgen": (K_DEPGEN,),
              "args_dump": (K_ARGS_DUMP,), "scope_stats": (K_SCOPE_STATS,)}
SLOT_MAX = 8

ARCHS = {  # system counter frequency, memory model, PMU counters per record
    "a2a3": {"freq_hz": 50_000_000, "svm": True, "pmu_counters": 8},
    "a5": {"freq_hz": 1_000_000_000, "svm": False, "pmu_counters": 10},
}

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
scope_stats = checked_dtype("ScopeStats", [
    ("scope_id", "<u8", 0), ("count", "<u4", 8), ("thread", "<u4", 12), ("total_ns", "<u8", 16),
    ("max_ns", "<u8", 24)], itemsize=32)

DEFAULT_RECORDS_PER_BUFFER = {K_AICPU_TASK: 1000, K_AICORE_TASK: 1024, K_PMU: 512, K_DEPGEN: 512,
                              K_ARGS_DUMP: 256, K_SCOPE_STATS: 512, K_STALL: 256}
#: The in-band stall records have a pool of their own, never shrunk, and wait at most this long
#: for a buffer (a stall record must not stall its writer for long; on expiry it is counted dropped).
STALL_POOL_BUFFERS = 8
STALL_POOL_WAIT_S = 0.05
DEFAULT_SLOTS = {K_AICPU_TASK: 4, K_AICORE_TASK: 4, K_PMU: 4, K_DEPGEN: 4, K_ARGS_DUMP: 4, K_SCOPE_STATS: 8,
                 K_STALL: 4}
ARENA_BYTES = 64 * 1024

# ---- DFX header ------------------------------------------------------------------------------------
ready_entry = checked_dtype("ready_entry", [
    ("core_index", "<u4", 0), ("kind", "<u4", 4), ("buffer_ptr", "<u8", 8), ("buffer_seq", "<u4", 16),
    ("pad", "<u4", 20)], itemsize=32)
pool_block = checked_dtype("pool_block", [
    # active head: device
    ("current_buf_ptr", "<u8", 0), ("current_buf_seq", "<u4", 8), ("current_count", "<u4", 12),
    ("total_record_count", "<u8", 16), ("dropped_record_count", "<u8", 24),
    # free queue
    ("buffer_ptrs", ("<u8", (SLOT_MAX,)), 64),   # host
    ("head", "<u4", 128),                        # device
    ("tail", "<u4", 192),                        # host
    ("refill_ns", "<u8", 200),                   # host: monotonic ns of the last tail publish
], itemsize=256, align_hot=("buffer_ptrs", "head", "tail"))
PB_PTRS = field_offset(pool_block, "buffer_ptrs")
PB_HEAD = field_offset(pool_block, "head")
PB_TAIL = field_offset(pool_block, "tail")
PB_REFILL = field_offset(pool_block, "refill_ns")
arena_block = checked_dtype("arena_block", [
    ("arena_write_offset", "<u8", 0), ("published_payload_count", "<u8", 8),   # device
    ("completed_payload_count", "<u8", 64),                                   # host
], itemsize=128, align_hot=("completed_payload_count",))
buffer_header = checked_dtype("buffer_header", [
    ("record_count", "<u4", 0), ("kind", "<u4", 4), ("seq", "<u4", 8), ("thread", "<u4", 12)],
    itemsize=64)

# ---- control segment ---------------------------------------------------------------------------------
ctl_header = checked_dtype("dfx_ctl_header", [
    ("collector_pid", "<u4", 0),     # collector
    ("collector_state", "<u4", 4),   # collector: COL_*
    ("stop", "<u4", 8),              # supervisor: 1 = lanes finish, flush and exit
    ("quiesce_req", "<u4", 12),      # any: 1 = collector drains everything queued, then acks
    ("quiesce_ack", "<u4", 16),      # collector: = quiesce generation drained
    ("go", "<u4", 20),               # any: synthetic lanes with synthetic_wait_go start when 1
    ("common_stall", "<u4", 64),     # any (atomic): >0 while a common-mode stall holds every lane
    ("common_seq", "<u4", 68),
    ("collector_wake", "<u8", 128),  # wake word of the collector's shards (device notifies)
], itemsize=256, align_hot=("common_stall", "collector_wake"))
COL_STARTING, COL_RUNNING, COL_DRAINING, COL_DONE = 0, 1, 2, 3
lane_status = checked_dtype("lane_status", [
    ("pid", "<u4", 0), ("state", "<u4", 4),             # lane
    ("records", "<u8", 8), ("drops", "<u8", 16),         # lane
    ("stalls", "<u8", 24), ("stall_ns", "<u8", 32),      # lane
    ("tasks", "<u8", 40), ("backstops", "<u8", 48),      # lane
], itemsize=64)
LANE_STARTING, LANE_RUNNING, LANE_FLUSHED, LANE_EXITED, LANE_IDLE_HOST_GONE = 0, 1, 2, 3, 4
LANE_STATE_NAMES = {0: "starting", 1: "running", 2: "flushed", 3: "exited", 4: "idle (host gone)"}
stall_record = checked_dtype("stall_record", [
    ("thread", "<u4", 0), ("kind", "<u4", 4), ("gate", "<u4", 8), ("outcome", "<u4", 12),
    ("start_ns", "<u8", 16), ("end_ns", "<u8", 24),
    ("release_ns", "<u8", 32)],   # pop gate: when the host published the refill that ended it
    itemsize=48)
GATE_PUSH, GATE_POP, GATE_COMMON = 1, 2, 3
GATE_NAMES = {1: "push", 2: "pop", 3: "common"}
STALL_RECOVERED, STALL_EXPIRED = 0, 1
STALL_LOG = 1024
task_event = checked_dtype("task_event", [
    ("did", "<u8", 0), ("kobj", "<u8", 8), ("start", "<u8", 16), ("end", "<u8", 24),
    ("fetch", "<u8", 32), ("prev_did", "<u8", 40),
    ("grid", ("<u4", (3,)), 48), ("karg_len", "<u2", 60), ("ptype", "<u2", 62),
    ("karg", "S64", 64)], itemsize=128)
TASK_RING = 4096

POLICIES = ("block", "drop", "block_timeout", "common_mode")

PROFILING_DEFAULTS = {
    "enabled": False,
    "lanes": 2,                 # AICPU writer lane processes
    "threads_per_lane": 1,      # AICPU threads in each lane
    "mode": "real",             # "real": profile executed dispatches; "synthetic": generated load
    "subsystems": list(SUBSYSTEMS),
    "buffers_per_pool": 8,      # buffers per (thread, kind) pool: the pool the host may allocate from
    "pool_overrides": {},       # {"thread": buffers} to shrink one thread's pools
    "records_per_buffer": {},   # {"kind name": n} overrides of DEFAULT_RECORDS_PER_BUFFER
    "ready_depth": 64,          # ready-queue entries per thread
    "policy": "block",          # or {"kind name": policy}
    "block_timeout_s": 1.0,     # for policy block_timeout
    "backpressure_timeout_s": 30.0,  # the backstop (PLATFORM_DFX_BACKPRESSURE_TIMEOUT_CYCLES / freq)
    "drain_shards": 2,
    "on_host_gone": "idle",     # or "exit"
    "output_dir": "",           # default: ./hdemu-dfx-<platform name>
    "synthetic_records_per_s": 0,   # per thread; 0 = as fast as the pipeline allows
    "synthetic_duration_s": 1.0,
    "synthetic_records": 0,     # per thread per kind; 0 = use duration
    "synthetic_batch": 256,     # records a synthetic writer hands to write() at a time
    "skip_writeback_thread": -1,  # fault injection: the collector omits one write_range_to_device
    "synthetic_wait_go": False,  # synthetic lanes wait for ctl.go (benchmarks time from the go)
    "autostart": True,          # False: segments only; a test drives lanes and collector in-process
}


def validate_profiling(p: dict, arch: str) -> dict:
    unknown = set(p) - set(PROFILING_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown profiling config keys {sorted(unknown)}; known: {sorted(PROFILING_DEFAULTS)}")
    out = dict(PROFILING_DEFAULTS)
    out.update(p)
    for k in ("lanes", "threads_per_lane", "buffers_per_pool", "ready_depth", "drain_shards"):
        if not isinstance(out[k], int) or out[k] < 1:
            raise ValueError(f"profiling {k} must be a positive integer, not {out[k]!r}")
    if out["lanes"] * out["threads_per_lane"] > 64:
        raise ValueError("profiling lanes * threads_per_lane must be at most 64")
    if out["mode"] not in ("real", "synthetic"):
        raise ValueError(f"profiling mode must be 'real' or 'synthetic', not {out['mode']!r}")
    bad = set(out["subsystems"]) - set(SUBSYSTEMS)
    if bad:
        raise ValueError(f"profiling subsystems must be among {sorted(SUBSYSTEMS)}, not {sorted(bad)}")
    pol = out["policy"]
    pols = pol.values() if isinstance(pol, dict) else [pol]
    for v in pols:
        if v not in POLICIES:
            raise ValueError(f"profiling policy must be one of {POLICIES}, not {v!r}")
    if isinstance(pol, dict):
        bad = set(pol) - set(KIND_NAMES)
        if bad:
            raise ValueError(f"profiling policy keys must be kind names {KIND_NAMES}, not {sorted(bad)}")
    bad = set(out["records_per_buffer"]) - set(KIND_NAMES)
    if bad:
        raise ValueError(f"records_per_buffer keys must be kind names {KIND_NAMES}, not {sorted(bad)}")
    if out["on_host_gone"] not in ("idle", "exit"):
        raise ValueError(f"profiling on_host_gone must be 'idle' or 'exit', not {out['on_host_gone']!r}")
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {sorted(ARCHS)}, not {arch!r}")
    return out


class DfxGeometry:
    """Sizes and offsets of the three DFX segments, computed identically on both sides."""

    def __init__(self, prof: dict, arch: str, n_rings: int):
        self.prof = prof
        self.arch = arch
        a = ARCHS[arch]
        self.freq_hz = a["freq_hz"]
        self.svm = a["svm"]
        self.T = prof["lanes"] * prof["threads_per_lane"]
        self.N = prof["ready_depth"]
        # the in-band stall records always flow (their own pool; see STALL_POOL_WAIT_S)
        self.kinds = sorted({k for s in prof["subsystems"] for k in SUBSYSTEMS[s]} | {K_STALL})
        self.rec_dtype = {K_AICPU_TASK: aicpu_task, K_AICORE_TASK: aicore_task,
                          K_PMU: pmu_record(a["pmu_counters"]), K_DEPGEN: depgen,
                          K_ARGS_DUMP: args_dump, K_SCOPE_STATS: scope_stats, K_STALL: stall_record}
        self.per_buf = dict(DEFAULT_RECORDS_PER_BUFFER)
        for name, n in prof["records_per_buffer"].items():
            self.per_buf[KIND_NAMES.index(name)] = int(n)
        self.slots = dict(DEFAULT_SLOTS)
        pol = prof["policy"]
        self.policy = {k: (pol.get(KIND_NAMES[k], "block") if isinstance(pol, dict) else pol)
                       for k in range(N_KINDS)}
        self.policy[K_STALL] = "block_timeout"
        self.pool_size = {}
        for t in range(self.T):
            n = int(prof["pool_overrides"].get(str(t), prof["pool_overrides"].get(t, prof["buffers_per_pool"])))
            self.pool_size[t] = n
        # dfxhdr: [ctl 64][heads T*64][tails T*64][entries T*N*32][pools T*K*256][arenas T*128]
        self.heads_off = 64
        self.tails_off = self.heads_off + self.T * 64
        self.entries_off = self.tails_off + self.T * 64
        self.pools_off = self.entries_off + self.T * self.N * 32
        self.arenas_off = self.pools_off + self.T * N_KINDS * 256
        self.hdr_bytes = self.arenas_off + self.T * 128
        # dfxbuf: per kind, per thread, pool_size[t] buffers; then per-thread payload arenas
        self.buf_bytes_of = {k: 64 + self.per_buf[k] * self.rec_dtype[k].itemsize for k in range(N_KINDS)}
        self.slab = {}   # (thread, kind) -> (offset, count)
        off = 0
        for t in range(self.T):
            for k in self.kinds:
                n = STALL_POOL_BUFFERS if k == K_STALL else self.pool_size[t]
                self.slab[(t, k)] = (off, n)
                off += n * self.buf_bytes_of[k]
        self.arena_data_off = off
        self.buf_region_bytes = off + self.T * ARENA_BYTES
        # dfxctl: [header 256][lane status 64 * lanes][wake words T*64][stall logs T*(64+STALL_LOG*32)]
        #         [task rings n_rings * (128 + TASK_RING * 128)]
        self.n_rings = n_rings
        self.lane_off = 256
        self.wake_off = self.lane_off + prof["lanes"] * 64
        self.stall_off = self.wake_off + self.T * 64
        self.stall_bytes = 64 + STALL_LOG * stall_record.itemsize
        self.rings_off = self.stall_off + self.T * self.stall_bytes
        self.ring_bytes = 128 + TASK_RING * 128
        # host-written accounting: collected records per (thread, kind), corrupt flag per thread
        self.collected_off = self.rings_off + n_rings * self.ring_bytes
        self.corrupt_off = self.collected_off + self.T * N_KINDS * 8
        self.ctl_bytes = self.corrupt_off + self.T * 64

    # offsets in dfxhdr
    def head_off(self, t):
        return self.heads_off + t * 64

    def tail_off(self, t):
        return self.tails_off + t * 64

    def entry_off(self, t, i):
        return self.entries_off + (t * self.N + i) * 32

    def pool_off(self, t, k):
        return self.pools_off + (t * N_KINDS + k) * 256

    def arena_off(self, t):
        return self.arenas_off + t * 128

    # buffers
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

    def ring_of(self, agent: int, engine: int, engines_per_agent: int) -> int:
        return agent * engines_per_agent + engine

    def thread_of_ring(self, r: int) -> int:
        return r % self.T

    def lane_of_thread(self, t: int) -> int:
        return t // self.prof["threads_per_lane"]

    def budget_cycles(self, kind: int) -> int:
        if kind == K_STALL:
            return int(STALL_POOL_WAIT_S * self.freq_hz)
        pol = self.policy[kind]
        if pol == "drop":
            return 0
        if pol == "block_timeout":
            return int(self.prof["block_timeout_s"] * self.freq_hz)
        return int(self.prof["backpressure_timeout_s"] * self.freq_hz)
