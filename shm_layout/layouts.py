"""Every shared structure other than the AQL packets, declared once with explicit offsets.

Single-writer rule: each docstring below says who writes each field. ``host`` means the client
process that owns the object, ``device`` the command processor of the agent, ``any`` means the
field is only ever changed with an atomic (``shm_layout.sync``).
"""
from __future__ import annotations

from ._dtype import checked_dtype, field_offset, offset_of, struct_of, word_of  # noqa: F401  (re-exported)

MAGIC = 0x00_01_55_4D_45_44_48  # "HDEMU\x01"
VERSION = 1

# ----------------------------------------------------------------------------------------------
# Address map. Device addresses are u64 values a kernel or packet may carry; each aperture maps
# to one segment. Everything sits below 2**47 like user-space pointers do.
HOST_POOL_BASE = 0x1000_0000_0000        # fine-grained system memory (hipHostMalloc, staging)
KERNARG_BASE = 0x2000_0000_0000          # + agent << 36: per-queue kernarg slots of the agent
SIGNAL_HANDLE_BASE = 0x3000_0000_0000    # + slot * 64: hsa_signal_t handles
DEVICE_BASE = 0x4000_0000_0000           # + agent << 40: coarse-grained device memory
KOBJ_BASE = 0x5000_0000_0000             # kernel objects: | gen << 24 | slot << 12 | index << 4


def kernarg_base(agent: int) -> int:
    return KERNARG_BASE + (agent << 36)


def device_base(agent: int) -> int:
    return DEVICE_BASE + (agent << 40)


def make_kernel_object(slot: int, gen: int, index: int) -> int:
    return KOBJ_BASE | ((gen & 0xFFFF) << 24) | ((slot & 0xFFF) << 12) | ((index & 0xFF) << 4)


def split_kernel_object(kobj: int):
    """(slot, gen, index) of a kernel object handle, or None if it is not one."""
    if kobj & ~0xFF_FFFF_FFF0 != KOBJ_BASE or kobj & 0xF:
        return None
    return (kobj >> 12) & 0xFFF, (kobj >> 24) & 0xFFFF, (kobj >> 4) & 0xFF


# ----------------------------------------------------------------------------------------------
# HSA status codes (hsa.h / hsa_ext_amd.h values).
HSA_STATUS_SUCCESS = 0
HSA_STATUS_ERROR = 0x1000
HSA_STATUS_ERROR_INVALID_ARGUMENT = 0x1001
HSA_STATUS_ERROR_INVALID_QUEUE_CREATION = 0x1002
HSA_STATUS_ERROR_INVALID_ALLOCATION = 0x1003
HSA_STATUS_ERROR_INVALID_AGENT = 0x1004
HSA_STATUS_ERROR_INVALID_REGION = 0x1005
HSA_STATUS_ERROR_INVALID_SIGNAL = 0x1006
HSA_STATUS_ERROR_INVALID_QUEUE = 0x1007
HSA_STATUS_ERROR_OUT_OF_RESOURCES = 0x1008
HSA_STATUS_ERROR_INVALID_PACKET_FORMAT = 0x1009
HSA_STATUS_ERROR_RESOURCE_FREE = 0x100A
HSA_STATUS_ERROR_NOT_INITIALIZED = 0x100B
HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS = 0x100D
HSA_STATUS_ERROR_INVALID_CODE_OBJECT = 0x1010
HSA_STATUS_ERROR_INVALID_EXECUTABLE = 0x1011
HSA_STATUS_ERROR_EXCEPTION = 0x1016
HSA_STATUS_ERROR_FATAL = 0x1026
HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION = 41
HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION = 42
HSA_STATUS_ERROR_MEMORY_FAULT = 43

STATUS_NAMES = {v: k for k, v in globals().items() if k.startswith("HSA_STATUS_")}

# ----------------------------------------------------------------------------------------------
# Ownership words: u64 = pid | state << 32, changed only with cas().
OWN_FREE = 0
OWN_ALLOCATED = 1


def own_word(pid: int, state: int) -> int:
    """An ownership word: the owner's pid in the low 32 bits, its state (``Q_*``, ``CO_*``, ``OWN_*``)
    in the high 32. Decode with ``owner_pid`` and ``owner_state`` (they also take numpy arrays)."""
    return (pid & 0xFFFFFFFF) | (state << 32)


def owner_pid(word):
    """The pid of an ownership word (``own_word``)."""
    return word & 0xFFFFFFFF


def owner_state(word):
    """The state of an ownership word (``own_word``)."""
    return word >> 32


# ----------------------------------------------------------------------------------------------
boot_header = checked_dtype("boot_header", [
    ("magic", "<u8", 0),            # supervisor
    ("version", "<u4", 8),          # supervisor
    ("state", "<u4", 12),           # supervisor: BOOT_*
    ("supervisor_pid", "<u4", 16),  # supervisor
    ("json_len", "<u4", 20),        # supervisor
    ("created_ns", "<u8", 24),      # supervisor
    ("shutdown", "<u4", 32),        # any (CLI `down`, the supervisor itself): 1 = please stop
    ("embedded", "<u4", 36),        # supervisor: 1 when owned by a client process
    ("wake", "<u8", 64),            # wake word of the supervisor (seq, waiters)
], itemsize=128, align_hot=("wake",))
BOOT_BOOTING, BOOT_UP, BOOT_STOPPING, BOOT_DOWN = 0, 1, 2, 3
BOOT_STATE_NAMES = {0: "booting", 1: "up", 2: "stopping", 3: "down"}

role_entry = checked_dtype("role_entry", [
    ("pid", "<u4", 0),         # supervisor at start; the role itself confirms
    ("kind", "<u4", 4),        # supervisor: ROLE_*
    ("agent", "<i4", 8),       # supervisor
    ("state", "<u4", 12),      # the role (ROLE_STARTING -> READY -> EXITED), supervisor on death
    ("started_ns", "<u8", 16),  # the role
    ("exit_code", "<i4", 24),  # supervisor
], itemsize=32)
ROLE_CP, ROLE_COLLECTOR, ROLE_LANE = 1, 2, 3
ROLE_KIND_NAMES = {1: "command-processor", 2: "collector", 3: "aicpu-lane"}
ROLE_STARTING, ROLE_READY, ROLE_EXITED, ROLE_DEAD = 0, 1, 2, 3
ROLE_STATE_NAMES = {0: "starting", 1: "ready", 2: "exited", 3: "dead"}
BOOT_ROLES_OFF = 256
BOOT_MAX_ROLES = 32
BOOT_JSON_OFF = 4096
BOOT_BYTES = 64 * 1024

# ----------------------------------------------------------------------------------------------
signal_slot = checked_dtype("signal_slot", [
    ("value", "<i8", 0),       # any (atomic): the hsa_signal_value_t
    ("seq", "<u4", 8),         # any (atomic): futex word, bumped by every notifier
    ("waiters", "<u4", 12),    # any (atomic): count of sleepers
    ("start_ts", "<u8", 16),   # device: monotonic ns when the packet started
    ("end_ts", "<u8", 24),     # device: monotonic ns when it completed
    ("owner", "<u8", 32),      # any (cas): own_word(pid, OWN_*)
    ("kind", "<u4", 40),       # host: 0 plain, 1 completion (stream), 2 event, 3 user
], itemsize=64)
SIGNAL_SLOT_BYTES = 64
SIG_VALUE = field_offset(signal_slot, "value")
SIG_WAKE = field_offset(signal_slot, "seq")

# ----------------------------------------------------------------------------------------------
agent_header = checked_dtype("agent_header", [
    ("magic", "<u8", 0),             # supervisor
    ("cp_pid", "<u4", 8),            # device (CP writes its own pid on start)
    ("state", "<u4", 12),            # device: AGENT_*
    ("n_engines", "<u4", 16),        # supervisor
    ("max_queues", "<u4", 20),       # supervisor
    ("queue_size_max", "<u4", 24),   # supervisor
    ("agent_index", "<u4", 28),      # supervisor
    ("queue_table_gen", "<u8", 32),  # any (atomic): bumped on queue create / destroy
    ("heartbeat_ns", "<u8", 40),     # device
    ("packets", "<u8", 48),          # unused: per-engine engine_stats.packets are summed instead
    ("kernels", "<u8", 56),          # unused: per-queue kernels_done are summed instead
    ("barriers", "<u8", 64),         # unused
    ("copies", "<u8", 72),           # device (the SDMA engine thread, single writer)
    ("errors", "<u8", 80),           # unused: queues in error carry their own status
    ("reclaimed_queues", "<u8", 88),  # device
    ("reclaimed_allocs", "<u8", 96),  # device
], itemsize=1024)
AGENT_BOOTING, AGENT_READY, AGENT_STOPPING, AGENT_EXITED = 0, 1, 2, 3
AGENT_ENGINE_WAKE_OFF = 1024   # + e * 64: wake word of engine e (the SDMA engine is e = n_engines)
AGENT_ENGINE_STATS_OFF = 2048  # + e * 64: engine_stats
AGENT_MAX_ENGINES = 8
AGENT_HEADER_BYTES = 4096

engine_stats = checked_dtype("engine_stats", [
    ("busy_ns", "<u8", 0),     # device
    ("packets", "<u8", 8),     # device
    ("sleeps", "<u8", 16),     # device
    ("wakeups", "<u8", 24),    # device
    ("current_queue", "<i4", 32),  # device: -1 idle
    ("state", "<u4", 36),      # device: ENGINE_* (set RUNNING for every engine before the agent is READY)
    ("died_ns", "<u8", 40),    # device: monotonic ns when the engine thread died, 0 while it lives
    ("stall_until_ns", "<u8", 48),  # host (fault injection, ``hdemu run``); device clears it: see below
    ("wake_delay_ns", "<u8", 56),   # host (fault injection, ``hdemu run``): see below
], itemsize=64)
#: engine_stats.stall_until_ns: a CLOCK_MONOTONIC deadline (ns) before which the engine takes no packet
#: (a stalled pipe). The engine reads it once per loop turn; while it is set and ahead it sleeps on its
#: wake word (no spinning; housekeeping goes on), and once it has passed the engine clears it (cas to 0)
#: and serves its queues again. Its queue states, and every other engine, are untouched: a host wait
#: sees a slow engine, never an error. 0 = no stall.
#: engine_stats.wake_delay_ns: a slow wake-up path (the way a proxy adds latency to a link). Each time
#: the engine's wait for work ends with work to do (a doorbell seen, asleep or spinning), the engine
#: sleeps this long (at most 1 s) before it looks at its queues: the doorbell-to-fetch latency rises by
#: it. Read once per ended wait (nothing per packet); 0 = none.

#: engine_stats.state. An engine is ENGINE_OFF until its CP starts it, ENGINE_RUNNING while it serves its
#: queues, ENGINE_DEAD once its thread ended with an exception (its queues failed with
#: HSA_STATUS_ERROR_FATAL; the CP's other engines serve on) and ENGINE_STOPPED after a clean stop.
ENGINE_OFF, ENGINE_RUNNING, ENGINE_DEAD, ENGINE_STOPPED = 0, 1, 2, 3
ENGINE_STATE_NAMES = {0: "off", 1: "running", 2: "dead", 3: "stopped"}


def engine_usable(state) -> bool:
    """Whether an engine in ``state`` (``engine_stats.state``) takes new queues and serves old ones:
    only ENGINE_RUNNING. A host places queues on usable engines only, and a wait on a queue whose
    engine is not usable has no one to end it."""
    return int(state) == ENGINE_RUNNING


def dead_engines(stats, n_engines: int) -> list:
    """Indices among the first ``n_engines + 1`` entries of an agent's ``engine_stats`` view (the AQL
    engines, then the SDMA engine) whose state is ENGINE_DEAD."""
    st = stats["state"][:n_engines + 1]
    return [e for e in range(len(st)) if int(st[e]) == ENGINE_DEAD]

queue_desc = checked_dtype("queue_desc", [
    ("owner", "<u8", 0),              # any (cas): own_word(pid, Q_*)
    ("size", "<u4", 8),               # host at create (power of two)
    ("engine", "<u4", 12),            # host at create
    ("kind", "<u4", 16),              # host at create: QKIND_*
    ("generation", "<u4", 20),        # host at create (bumped each reuse of the slot)
    ("status", "<i4", 24),            # device: HSA status of the first error, 0 while healthy
    ("active", "<u4", 28),            # device: 1 active, 0 deactivated (error, reclaim, destroy ack)
    ("error_packet_id", "<u8", 32),   # device
    ("created_ns", "<u8", 40),        # host
    ("destroy_req", "<u4", 48),       # host: 1 = the owner asks the CP to drop the queue
    ("write_dispatch_id", "<u8", 64),  # host (single writer: reservations under a host-process lock)
    ("read_dispatch_id", "<u8", 128),  # device
    ("doorbell", "<u8", 192),         # host: last packet id made visible (hsa_signal_store_screlease)
    ("doorbells_rung", "<u8", 200),   # host
    ("error_msg", "S128", 256),       # device
    ("packets_done", "<u8", 384),     # device
    ("kernels_done", "<u8", 392),     # device
    ("busy_ns", "<u8", 400),          # device
    ("barrier_waits", "<u8", 408),    # device
], itemsize=512, align_hot=("write_dispatch_id", "read_dispatch_id", "doorbell"))
QUEUE_DESC_BYTES = 512
Q_FREE, Q_ACTIVE = 0, 1
QKIND_AQL, QKIND_SDMA = 0, 1
QD_WRITE = field_offset(queue_desc, "write_dispatch_id")
QD_READ = field_offset(queue_desc, "read_dispatch_id")
QD_DOORBELL = field_offset(queue_desc, "doorbell")
KERNARG_SLOT_BYTES = 256
#: Packet ids are u64; a read index at or past this is impossible (no queue lives 2**63 packets).
QUEUE_INDEX_LIMIT = 1 << 63
_U64_MAX = (1 << 64) - 1


def queue_shape_error(size: int, engine: int, kind: int, n_engines: int, qmax: int):
    """Why a queue descriptor with this ``size``, ``engine`` and ``kind`` can never be served (a
    string naming the field), or None. A queue is a power of two of at most ``qmax`` packets; an AQL
    queue sits on an engine in [0, n_engines), an SDMA queue on engine ``n_engines``."""
    if size <= 0 or size & (size - 1) or size > qmax:
        return f"size {size} is not a power of two in [1, {qmax}] (queue_size_max)"
    if kind == QKIND_AQL:
        if not 0 <= engine < n_engines:
            return f"engine {engine} of an AQL queue is not in [0, {n_engines})"
    elif kind == QKIND_SDMA:
        if engine != n_engines:
            return f"engine {engine} of an SDMA queue is not the SDMA engine {n_engines}"
    else:
        return f"kind {kind} is not QKIND_AQL ({QKIND_AQL}) or QKIND_SDMA ({QKIND_SDMA})"
    return None


def queue_index_error(read: int, write: int, doorbell: int):
    """Why a queue's indices are impossible (a string naming them), or None. The write index counts the
    packets reserved and never falls behind the read index (packets consumed); the doorbell is the id of
    a reserved packet (``< write``) or U64_MAX before the first ring. (A write index more than the size
    ahead is possible: a producer reserves, then waits for space.) Read the doorbell before the write
    index: the write index only grows, so that order never sees a true doorbell past it."""
    if read >= QUEUE_INDEX_LIMIT:
        return f"read_dispatch_id {read} is past 2**63"
    if write < read:
        return f"write_dispatch_id {write} is behind read_dispatch_id {read}"
    if doorbell != _U64_MAX and doorbell >= write:
        return f"doorbell {doorbell} names a packet past write_dispatch_id {write}"
    return None

# ----------------------------------------------------------------------------------------------
# SDMA packets (the copy engine's own 64-byte format; header type values do not collide with AQL).
SDMA_TYPE_INVALID = 1   # = HSA_PACKET_TYPE_INVALID: both engines share the ring fetch (deviceside/cp/_ring.py)
SDMA_TYPE_COPY = 0x10
SDMA_TYPE_FILL = 0x11
#: ``rows`` rows of ``width`` bytes, a pitch apart on each side (one packet for a whole pitched region:
#: hipMemcpy2D/3D, hipMemset2D/3D), in the ``sdma_rect_packet`` layout
SDMA_TYPE_COPY_RECT = 0x12
SDMA_TYPE_FILL_RECT = 0x13
sdma_packet = checked_dtype("sdma_packet", [
    ("header", "<u2", 0),             # host, written last
    ("reserved0", "<u2", 2),
    ("fill_width", "<u4", 4),         # host: 1, 2 or 4 bytes per fill element
    ("dep_signal", "<u8", 8),         # host: wait until this signal is 0 first (0 = none)
    ("src", "<u8", 16),               # host
    ("dst", "<u8", 24),               # host
    ("size", "<u8", 32),              # host: bytes
    ("fill_value", "<u8", 40),        # host
    ("reserved2", "<u8", 48),
    ("completion_signal", "<u8", 56),  # host
], itemsize=64)
#: The rectangular packets' layout (SDMA_TYPE_COPY_RECT / FILL_RECT): header, dependency, src, dst
#: and completion signal where ``sdma_packet`` has them (the engine reads those before the type's body).
#: Row r reads ``src + r * src_pitch`` (copy) and writes ``dst + r * dst_pitch``; only those bytes.
sdma_rect_packet = checked_dtype("sdma_rect_packet", [
    ("header", "<u2", 0),             # host, written last
    ("reserved0", "<u2", 2),
    ("fill_width", "<u4", 4),         # host (fill): 1, 2 or 4 bytes per element, dividing width
    ("dep_signal", "<u8", 8),         # host
    ("src", "<u8", 16),               # host (copy)
    ("dst", "<u8", 24),               # host
    ("width", "<u4", 32),             # host: bytes per row
    ("rows", "<u4", 36),              # host
    ("src_pitch", "<u4", 40),         # host (copy): >= width
    ("dst_pitch", "<u4", 44),         # host: >= width
    ("fill_value", "<u4", 48),        # host (fill)
    ("reserved2", "<u4", 52),
    ("completion_signal", "<u8", 56),  # host
], itemsize=64)
for _f in ("header", "fill_width", "dep_signal", "src", "dst", "completion_signal"):
    assert sdma_rect_packet.fields[_f] == sdma_packet.fields[_f], _f

# ----------------------------------------------------------------------------------------------
alloc_region_header = checked_dtype("alloc_region_header", [
    ("lock", "<u8", 0),     # any (cas): pid of the holder, 0 free
    ("gen", "<u8", 8),      # lock holder: bumped by every alloc and free
    ("used_bytes", "<u8", 16),  # lock holder
    ("count", "<u4", 24),   # lock holder: live records
], itemsize=64)
alloc_record = checked_dtype("alloc_record", [
    ("base", "<u8", 0),        # lock holder
    ("size", "<u8", 8),        # lock holder
    ("owner_pid", "<u4", 16),  # lock holder
    ("agent", "<i4", 20),      # lock holder: owning agent, -1 for system memory
    ("kind", "<u4", 24),       # lock holder: ALLOC_*, 0 = free record
    ("flags", "<u4", 28),
], itemsize=32)
ALLOC_FREE, ALLOC_DEVICE, ALLOC_HOST, ALLOC_STAGING, ALLOC_KERNARG = 0, 1, 2, 3, 4
ALLOC_KIND_NAMES = {1: "coarse-grained device", 2: "fine-grained host", 3: "staging", 4: "kernarg"}
ALLOC_ALIGN = 256

# ----------------------------------------------------------------------------------------------
codeobj_entry = checked_dtype("codeobj_entry", [
    ("owner", "<u8", 0),      # any (cas): own_word(pid, CO_*)
    ("gen", "<u4", 8),        # host, bumped each load into the slot
    ("src_len", "<u4", 12),   # host
    ("meta_len", "<u4", 16),  # host
    ("n_kernels", "<u4", 20),  # host
    ("name", "S64", 64),      # host
], itemsize=256)
CO_LOADING, CO_LOADED = 1, 2
CODEOBJ_SLOTS = 128
CODEOBJ_BLOB_BYTES = 64 * 1024

# ----------------------------------------------------------------------------------------------
trace_ring_header = checked_dtype("trace_ring_header", [
    ("owner", "<u8", 0),   # any (cas): own_word(pid, 1)
    ("count", "<u8", 8),   # the owning process: events written so far (ring index = count % N)
    ("role", "<u4", 16),   # the owning process: ROLE_* or 0 for a client
    ("name", "S32", 32),   # the owning process
], itemsize=64)
trace_event = checked_dtype("trace_event", [
    ("ts", "<u8", 0),      # time.monotonic_ns()
    ("kind", "<u2", 8),    # EV_*
    ("track", "<u2", 10),  # queue slot or engine, by kind
    ("pid", "<u4", 12),
    ("a", "<u8", 16),
    ("b", "<u8", 24),
], itemsize=32)
EV_DOORBELL = 1        # host: track=queue, a=global queue id, b=doorbell value
EV_LAUNCH = 2          # host: a=dispatch id, b=kernel object
EV_KERNEL_BEGIN = 3    # device: track=engine, a=dispatch id, b=kernel object
EV_KERNEL_END = 4      # device
EV_BARRIER_BEGIN = 5   # device
EV_BARRIER_END = 6
EV_COPY_BEGIN = 7      # device (SDMA): a=dispatch id, b=bytes
EV_COPY_END = 8
EV_QUEUE_ERROR = 9     # device: a=dispatch id, b=status
EV_SIGNAL_WAIT_BEGIN = 10  # host: a=signal handle
EV_SIGNAL_WAIT_END = 11
EV_COPY_SUBMIT = 12    # host: a=dispatch id, b=bytes
EV_LIBRARY_CALL = 13   # host: track=TRACK_LIBRARY, a=index into LIBRARY_LEVELS, b=duration ns (ts: the start)
#: The host track of library calls (a library on the HIP face, e.g. hostside.miopen) in a process's ring.
TRACK_LIBRARY = 0xFFFF
#: The level a library call was answered at (MIOpen's: its invoker, kernel or program cache, the
#: binary cache's system or user db, or a compilation), as EV_LIBRARY_CALL names it.
LIBRARY_LEVELS = ("invoker_cache", "kernel_cache", "program_cache", "binary_cache_system", "binary_cache_user",
                  "compiled")
TRACE_EVENT_BYTES = 32


def signed64(v: int) -> int:
    """A u64's bits as an int64 (how HSA signal values compare)."""
    return v - (1 << 64) if v >> 63 else v


def dispatch_id(agent: int, queue_slot: int, index: int) -> int:
    """A dispatch id unique on the platform: agent, queue slot and packet index."""
    return (agent << 56) | (queue_slot << 44) | (index & ((1 << 44) - 1))


def split_dispatch_id(did: int):
    return did >> 56, (did >> 44) & 0xFFF, did & ((1 << 44) - 1)
