"""DFX profiling: the shared layouts of the AICPU writer lanes and the host collector.

Three segments (created by the supervisor when ``[platform.profiling] enabled = true``):

* ``dfxhdr`` — the DFX header, *device memory*: per AICPU thread ``t`` its ready queue (entries,
  ``queue_heads[t]`` written by the host, ``queue_tails[t]`` by the device) and, per subsystem kind
  ``k``, a pool block (active head, written by the device; free queue ``buffer_ptrs`` and ``tail``
  written by the host, ``head`` by the device), plus the ArgsDump arena cursors. Under SVM (a2a3)
  the host maps it directly; under non-SVM (a5) the host works on a private mirror and moves exactly
  the fields it touches with ``write_range_to_device`` / ``read_range_from_device``. At its end, one
  ownership word per buffer (``buffer_owner``: which side holds it, for which thread, with which seq).
* ``dfxbuf`` — the buffers (device memory too): per kind a slab of ``buffers_per_pool * T`` buffers,
  each a 64-byte buffer header followed by ``records_per_buffer`` records. A buffer pointer is a
  device address ``DFX_BUF_BASE + offset``; the host validates every pointer it reads.
* ``dfxctl`` — control and mailboxes (coherent, like an interrupt line): per-thread wake words, the
  common-mode stall flag, lane and collector states, per-thread stall logs, and the device-local task
  rings through which the command processor hands executed dispatches to the lanes, and the host's
  accounting: collected counters, corrupt flags, and what the host knows it lost (``pool_loss``).

Ready queue: full when ``(tail + 1) % N == head``, empty when ``head == tail``.
Free queue: empty when ``head == tail``, full when ``tail - head >= DfxGeometry.slots[kind]`` (``DEFAULT_SLOTS``: 4, ScopeStats 8; at most ``SLOT_MAX``; u32 counters).

The record kinds, record layouts and the ``dfxbuf`` geometry live in ``shm_layout.dfx_records``
(the config schema needs them) and are re-exported here; ``[platform.profiling]`` is declared in
``shm_layout.config``.
"""
from __future__ import annotations

from . import config as _config
from ._dtype import checked_dtype, field_offset, word_of
from .dfx_records import (  # noqa: F401  (re-exported: shm_layout.dfx stays the one DFX namespace)
    ARCHS, ARENA_BYTES, DEFAULT_RECORDS_PER_BUFFER, DFX_BUF_BASE, DFX_BUF_MAX_BYTES, EDGE_BARRIER,
    EDGE_STREAM, K_AICORE_TASK, K_AICPU_TASK, K_ARGS_DUMP, K_DEPGEN, K_PMU, K_SCOPE_STATS, K_STALL,
    KIND_NAMES, N_KINDS, POLICIES, STALL_POOL_BUFFERS, STALL_POOL_WAIT_S, SUBSYSTEMS, DfxBuffers,
    aicore_task, aicpu_task, args_dump, buffer_header, depgen, payload_file_header, pmu_record, scope_stats,
    stall_record)

SLOT_MAX = 8
DEFAULT_SLOTS = {K_AICPU_TASK: 4, K_AICORE_TASK: 4, K_PMU: 4, K_DEPGEN: 4, K_ARGS_DUMP: 4, K_SCOPE_STATS: 8,
                 K_STALL: 4}

# ---- DFX header ------------------------------------------------------------------------------------
#: A ready-queue entry (device): the published buffer, its pool's seq and its record count (the same
#: as in the buffer's header: the host rejects an entry whose buffer header disagrees).
ready_entry = checked_dtype("ready_entry", [
    ("core_index", "<u4", 0), ("kind", "<u4", 4), ("buffer_ptr", "<u8", 8), ("buffer_seq", "<u4", 16),
    ("record_count", "<u4", 20)], itemsize=32)
pool_block = checked_dtype("pool_block", [
    # active head: device
    ("current_buf_ptr", "<u8", 0), ("current_buf_seq", "<u4", 8), ("current_count", "<u4", 12),
    ("total_record_count", "<u8", 16), ("dropped_record_count", "<u8", 24),
    ("published_record_count", "<u8", 32),       # device: records published on the ready queue so far
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
    ("ack_ns", "<u8", 72),                     # host: monotonic ns of the last ack (stored before the count)
], itemsize=128, align_hot=("completed_payload_count",))

# ---- buffer ownership ------------------------------------------------------------------------------------
#: One ownership word per buffer (``DfxBuffers.buffer_id``), at the end of dfxhdr: the state of the
#: buffer, the AICPU thread it belongs to, and (CURRENT, READY) the pool seq it was claimed with. It is
#: written whole, as one u64 (``buffer_owner_word``), by whichever side holds the buffer:
#:   host:   FREE (handed to ``owner``'s free queue; before the tail publishes it), COLLECTED (taken
#:           off a ready queue, its records on disk)
#:   device: CURRENT (claimed from the free queue: the pop checks FREE and its own thread first),
#:           READY (published on the owner's ready queue, before the tail moves)
#: The host keeps its own table besides (``hostside.dfx``: on the device, with the collector,
#: recycled) and takes a buffer off a ready queue only when both agree: a duplicated, foreign or
#: stale entry is rejected without touching the buffer.
buffer_owner = checked_dtype("buffer_owner", [
    ("state", "<u2", 0),        # BUF_*
    ("owner", "<u2", 2),        # the AICPU thread
    ("seq", "<u4", 4),          # the pool seq (CURRENT, READY), else 0
], itemsize=8)
BUF_UNUSED, BUF_FREE, BUF_CURRENT, BUF_READY, BUF_COLLECTED = 0, 1, 2, 3, 4
BUF_STATE_NAMES = {0: "unused", 1: "free", 2: "current", 3: "ready", 4: "collected"}
_OWN_SHIFT = {f: buffer_owner.fields[f][1] * 8 for f in buffer_owner.names}
_OWN_MASK = {f: (1 << (buffer_owner.fields[f][0].itemsize * 8)) - 1 for f in buffer_owner.names}


def buffer_owner_word(state: int, owner: int, seq: int = 0) -> int:
    """The u64 ownership word of a buffer (``buffer_owner``, little endian)."""
    return ((state & _OWN_MASK["state"]) << _OWN_SHIFT["state"] | (owner & _OWN_MASK["owner"]) << _OWN_SHIFT["owner"]
            | (seq & _OWN_MASK["seq"]) << _OWN_SHIFT["seq"])


def buffer_owner_fields(word: int) -> tuple[int, int, int]:
    """(state, owner, seq) of an ownership word."""
    word = int(word)
    return tuple((word >> _OWN_SHIFT[f]) & _OWN_MASK[f] for f in ("state", "owner", "seq"))

# ---- control segment ---------------------------------------------------------------------------------
ctl_header = checked_dtype("dfx_ctl_header", [
    ("collector_pid", "<u4", 0),     # collector
    ("collector_state", "<u4", 4),   # collector: COL_*
    ("stop", "<u4", 8),              # supervisor: 1 = lanes finish, flush and exit
    ("quiesce_req", "<u4", 12),      # any: 1 = collector drains everything queued, then acks
    ("quiesce_ack", "<u4", 16),      # collector: = quiesce generation drained
    ("go", "<u4", 20),               # any: synthetic lanes with synthetic_wait_go start when 1
    ("drain_delay_ns", "<u8", 24),   # any (fault injection): the collector sleeps this long after each
                                     # buffer it drains (a slow collector); 0 = none (one word read a buffer)
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
#: One per drain shard, after the host-written accounting at the end of dfxctl (``DfxGeometry.shard_off``;
#: room for T shards, the most a collector runs). ``stall_until_ns`` (any: fault injection) is a
#: CLOCK_MONOTONIC deadline: while it is ahead the shard drains nothing, asleep, then clears it itself
#: (cas: a new deadline written meanwhile is kept). The rest the shard counts as it goes.
shard_control = checked_dtype("shard_control", [
    ("stall_until_ns", "<u8", 0),    # any (fault injection); the shard clears it once past
    ("buffers", "<u8", 8),           # shard: ready entries it processed
    ("stalls", "<u8", 16),           # shard: stalls it honoured
    ("stall_ns", "<u8", 24),         # shard: time it spent stalled
], itemsize=64)
LANE_STARTING, LANE_RUNNING, LANE_FLUSHED, LANE_EXITED, LANE_IDLE_HOST_GONE = 0, 1, 2, 3, 4
LANE_STATE_NAMES = {0: "starting", 1: "running", 2: "flushed", 3: "exited", 4: "idle (host gone)"}
GATE_PUSH, GATE_POP, GATE_COMMON = 1, 2, 3
GATE_NAMES = {1: "push", 2: "pop", 3: "common"}
STALL_RECOVERED, STALL_EXPIRED = 0, 1
STALL_LOG = 1024
#: Head of thread t's stall log in dfxctl (thread t writes it); ``STALL_LOG`` stall_records follow,
#: record ``count % STALL_LOG`` is the next one written (a ring: the oldest are overwritten).
stall_log_header = checked_dtype("stall_log_header", [
    ("count", "<u8", 0),        # thread t: stall records written so far
], itemsize=64)
task_event = checked_dtype("task_event", [
    ("did", "<u8", 0), ("kobj", "<u8", 8), ("start", "<u8", 16), ("end", "<u8", 24),
    ("fetch", "<u8", 32), ("prev_did", "<u8", 40),
    ("grid", ("<u4", (3,)), 48), ("karg_len", "<u2", 60), ("ptype", "<u2", 62),
    ("karg", "S64", 64)], itemsize=128)
TASK_RING = 8192
#: Head of one device-local task ring in dfxctl (single producer: its CP engine; single consumer:
#: AICPU thread ring % T). ``TASK_RING`` task_events follow; event ``i`` sits at ``i % TASK_RING``.
#: Full when ``tail - head >= TASK_RING``: the CP drops the event and counts it in ``dropped``.
task_ring_header = checked_dtype("task_ring_header", [
    ("head", "<u8", 0),         # lane (the consuming AICPU thread): events consumed
    ("tail", "<u8", 64),        # CP engine: events published
    ("dropped", "<u8", 72),     # CP engine: events dropped on a full ring
], itemsize=128, align_hot=("head", "tail"))
#: Each AICPU thread's wake word (``shm_layout.sync``: seq, waiters) has its own 64-byte line in dfxctl.
WAKE_WORD_STRIDE = 64
#: Host-written accounting at the end of dfxctl, per AICPU thread t (``DfxGeometry.collected_word`` /
#: ``corrupt_word`` give the u64 word of a field): the records collected so far of each kind (the
#: collector; after it died, the supervisor's salvage) and the corrupt flag (the collector: 1 once
#: thread t is no longer drained; salvage skips it).
collected_counters = checked_dtype("collected_counters", [
    ("collected", ("<u8", (N_KINDS,)), 0),   # collector (salvage after its death): one per kind
], itemsize=N_KINDS * 8)
corrupt_flag = checked_dtype("corrupt_flag", [
    ("corrupt", "<u8", 0),                   # collector
    ("rejected", "<u8", 8),                  # collector: ready entries rejected that named no pool
], itemsize=64)
_COLLECTED_W = word_of(collected_counters, "collected")
_CORRUPT_W = word_of(corrupt_flag, "corrupt")
#: What the host knows it lost, per (thread, kind) pool, after the corrupt flags (the collector; the
#: supervisor's salvage goes on with it). With the device's ``published_record_count`` these explain
#: every imbalance of ``collected + dropped == total`` (``hostside.dfx.accounting``):
#: ``lost`` records of gaps in the pool's published sequence (``buffer_header.published_before``
#: jumped: a deflated record count, a lost or rejected entry), ``overlap`` records collected beyond it
#: (an inflated count), ``rejected`` ready entries (and why: ``causes``, LOSS_* bits), ArgsDump
#: payloads rejected (``bad_payloads``: the record is collected, its payload is not), and records the
#: host collected from a dead lane's current buffers (``adopted``).
pool_loss = checked_dtype("pool_loss", [
    ("lost", "<u8", 0),                      # collector / salvage
    ("overlap", "<u8", 8),                   # collector / salvage
    ("rejected", "<u8", 16),                 # collector / salvage
    ("bad_payloads", "<u8", 24),             # collector
    ("adopted", "<u8", 32),                  # collector / salvage
    ("causes", "<u8", 40),                   # collector / salvage: LOSS_* bits
], itemsize=64)
LOSS_DUPLICATE = 1        # an entry named a buffer the host already holds (collected, recycled)
LOSS_FOREIGN = 2          # an entry named a buffer handed to another thread, or never handed out
LOSS_UNRELEASED = 4       # an entry named a buffer the device still holds (its word is not READY)
LOSS_MALFORMED = 8        # an entry naming no pool or no buffer, or whose buffer header disagrees
LOSS_BAD_PAYLOAD = 16     # an ArgsDump payload outside its arena
LOSS_ADOPTED = 32         # a dead lane's current buffers were collected by the host
LOSS_SALVAGED = 64        # the collector died: the supervisor salvaged the ready queue
LOSS_COLLECTOR_ERROR = 128   # an unexpected error while draining the thread (it was marked corrupt)
LOSS_NAMES = {LOSS_DUPLICATE: "duplicate entry", LOSS_FOREIGN: "foreign entry", LOSS_UNRELEASED: "entry for a buffer not released by the device",
              LOSS_MALFORMED: "malformed entry", LOSS_BAD_PAYLOAD: "payload outside its arena",
              LOSS_ADOPTED: "current buffers of a dead lane collected by the host",
              LOSS_SALVAGED: "salvaged after the collector died", LOSS_COLLECTOR_ERROR: "collector error"}
_LOSS_W = {f: word_of(pool_loss, f) for f in pool_loss.names}
_REJECTED_W = word_of(corrupt_flag, "rejected")
#: ``task_event.prev_did`` of a packet with no previous packet on its queue: not a dispatch id (agent
#: 255 does not exist), while dispatch id 0 (agent 0, queue 0, packet 0) is a valid edge source.
NO_PREV_DID = 0xFFFF_FFFF_FFFF_FFFF

#: Every ``[platform.profiling]`` key with its default, from the schema in shm_layout.config.
PROFILING_DEFAULTS = _config.profiling_defaults()


def validate_profiling(p: dict, arch: str) -> dict:
    """``[platform.profiling]`` with defaults filled in; raises ConfigError (see shm_layout.config)."""
    return _config.parse_profiling(p, arch)


class DfxGeometry(DfxBuffers):
    """Sizes and offsets of the three DFX segments, computed identically on both sides.

    The buffer segment (``dfxbuf``: slabs, ``buffer_addr``, ``check_buffer*``) is ``DfxBuffers``.
    """

    def __init__(self, prof: dict, arch: str, n_rings: int):
        super().__init__(prof, arch)
        self.N = prof["ready_depth"]
        self.slots = dict(DEFAULT_SLOTS)
        pol = prof["policy"]
        self.policy = {k: (pol.get(KIND_NAMES[k], "block") if isinstance(pol, dict) else pol)
                       for k in range(N_KINDS)}
        self.policy[K_STALL] = "block_timeout"

        # dfxhdr: [ctl 64][heads T*64][tails T*64][entries T*N*32][pools T*K*256][arenas T*128]
        #         [ownership words n_buffers*8]
        self.heads_off = 64
        self.tails_off = self.heads_off + self.T * 64
        self.entries_off = self.tails_off + self.T * 64
        self.pools_off = self.entries_off + self.T * self.N * 32
        self.arenas_off = self.pools_off + self.T * N_KINDS * 256
        self.owners_off = self.arenas_off + self.T * 128
        self.hdr_bytes = self.owners_off + self.n_buffers * buffer_owner.itemsize
        # dfxctl: [header 256][lane status 64 * lanes][wake words T*64][stall logs T*(64+STALL_LOG*48)]
        #         [task rings n_rings * (128 + TASK_RING * 128)][collected T*K*8][corrupt T*64]
        #         [pool loss T*K*64][shard control T*64]
        self.n_rings = n_rings
        self.lane_off = ctl_header.itemsize
        self.wake_off = self.lane_off + prof["lanes"] * lane_status.itemsize
        self.stall_off = self.wake_off + self.T * WAKE_WORD_STRIDE
        self.stall_bytes = stall_log_header.itemsize + STALL_LOG * stall_record.itemsize
        self.rings_off = self.stall_off + self.T * self.stall_bytes
        self.ring_bytes = task_ring_header.itemsize + TASK_RING * task_event.itemsize
        # host-written accounting: collected records per (thread, kind), corrupt flag per thread
        self.collected_off = self.rings_off + n_rings * self.ring_bytes
        self.corrupt_off = self.collected_off + self.T * N_KINDS * 8
        self.loss_off = self.corrupt_off + self.T * corrupt_flag.itemsize
        # per drain shard: its stall word (fault injection) and counters (room for T shards)
        self.shard_off = self.loss_off + self.T * N_KINDS * pool_loss.itemsize
        self.ctl_bytes = self.shard_off + self.T * shard_control.itemsize

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

    # offsets in dfxctl
    def lane_status_off(self, lane):
        return self.lane_off + lane * lane_status.itemsize

    def wake_word_off(self, t):
        return self.wake_off + t * WAKE_WORD_STRIDE

    def stall_log_off(self, t):
        """Offset of thread t's stall_log_header; its records follow it."""
        return self.stall_off + t * self.stall_bytes

    def task_ring_off(self, r):
        """Offset of task ring r's task_ring_header; its events follow it."""
        return self.rings_off + r * self.ring_bytes

    def collected_word(self, t, k):
        """Index, in a u64 view of dfxctl, of the collected-record counter of pool (t, k)."""
        return (self.collected_off + t * collected_counters.itemsize) // 8 + _COLLECTED_W + k

    def corrupt_word(self, t):
        """Index, in a u64 view of dfxctl, of thread t's corrupt flag."""
        return (self.corrupt_off + t * corrupt_flag.itemsize) // 8 + _CORRUPT_W

    def rejected_word(self, t):
        """Index, in a u64 view of dfxctl, of thread t's count of rejected entries that named no pool."""
        return (self.corrupt_off + t * corrupt_flag.itemsize) // 8 + _REJECTED_W

    def loss_word(self, t, k, field):
        """Index, in a u64 view of dfxctl, of ``field`` of pool (t, k)'s ``pool_loss``."""
        return (self.loss_off + (t * N_KINDS + k) * pool_loss.itemsize) // 8 + _LOSS_W[field]

    def shard_control_off(self, s):
        """Offset in dfxctl of drain shard s's ``shard_control``."""
        return self.shard_off + s * shard_control.itemsize

    def owner_off(self, bid):
        """Offset in dfxhdr of the ownership word of buffer ``bid`` (``buffer_id``)."""
        return self.owners_off + bid * buffer_owner.itemsize

    def ring_of(self, agent: int, engine: int, engines_per_agent: int) -> int:
        """Task ring of (agent, AQL engine), engine-major: r = engine * agents + agent, so that with
        thread ``r % T`` the engines 0 of the agents (where a process's first stream of each device
        goes) feed different AICPU threads while there are threads enough."""
        return engine * (self.n_rings // engines_per_agent) + agent

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
