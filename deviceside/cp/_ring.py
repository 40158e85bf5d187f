"""The ring protocol both engines of a command processor share (AQL and SDMA queues).

A queue is a ring of 64-byte packets in the agent segment. The host writes a packet's body, then its
16-bit header (the publish), then rings the doorbell with the packet's id. An engine takes packet
``read_dispatch_id`` once the doorbell has reached it and its header type is no longer INVALID
(``next_packet``, which then issues the acquire barrier), runs it, and consumes the slot: header back
to INVALID, then ``read_dispatch_id + 1`` (``retire``). Both rings use type 1 for INVALID
(``HSA_PACKET_TYPE_INVALID`` = ``SDMA_TYPE_INVALID``), so the fetch is the same code.

Nothing read from the descriptor is trusted. Its shape (size, engine, kind) is validated once, when an
engine takes the queue (``layouts.queue_shape_error``, ``_queues``), and then cached. The read index
is the engine's own (``QueueState.read``): the shared ``read_dispatch_id`` is only its published copy,
and a copy that changed under the engine (only the CP writes it) fails the queue (``check_slot``, once
per turn and again before each retire: a host that moves it while a packet runs is caught before the
engine's own store would hide it). A doorbell rung for a packet whose header is still INVALID is
checked against the write index (``layouts.queue_index_error``: a doorbell past the reserved packets
is a lie, not a packet in flight). Each of these puts the queue in error with HSA_STATUS_ERROR_INVALID_QUEUE, never stalls it
silently. The descriptor word holding ``kind`` and ``generation`` is compared once per turn and before
every retire: a slot re-created while the engine held it (even by another process, even while one of
the old queue's kernels ran) is never written as if it were the old queue. Device counters in the
descriptor wrap modulo 2**64.

A packet whose dependency is not met yet (a barrier's, an SDMA packet's ``dep_signal``) *parks* its
queue: the engine re-polls it after a delay (asleep on its wake word: other queues' doorbells are
served meanwhile) that starts at ``BARRIER_POLL_MIN_S`` and doubles up to
``BARRIER_POLL_MAX_S`` (``QueueState.park`` / ``unpark``), and counts the park in ``barrier_waits``.
There is no device-side deadline: the host's wait on the dependency is the bounded one.
"""
from __future__ import annotations

import time

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.coherence import rmb
from shm_layout.errors import HdemuError
from shm_layout.sync import fetch_add

__all__ = ["PacketError", "QueueState", "RingEngine", "BARRIER_POLL_MIN_S", "BARRIER_POLL_MAX_S", "U64_MAX",
           "DISPATCH_INDEX_MASK", "describe_exception"]

#: Sleep of an engine whose queue is parked on an unsatisfied dependency (doubles up to the max).
BARRIER_POLL_MIN_S = 100e-6
BARRIER_POLL_MAX_S = 5e-3
#: A doorbell that was never rung.
U64_MAX = (1 << 64) - 1

PACKET_BYTES = A.PACKET_BYTES
_HEADER_TYPE_MASK = (1 << 8) - 1      # hsa_packet_header_t: the type is bits 0-7
_INVALID = A.HSA_PACKET_TYPE_INVALID
# word indices in a u64 view of a queue_desc, and the header's place in a packet (u16 view)
_QD_READ = L.word_of(L.queue_desc, "read_dispatch_id")
_QD_WRITE = L.word_of(L.queue_desc, "write_dispatch_id")
_QD_DOORBELL = L.word_of(L.queue_desc, "doorbell")
_QD_PACKETS_DONE = L.word_of(L.queue_desc, "packets_done")
_QD_KERNELS_DONE = L.word_of(L.queue_desc, "kernels_done")
#: ``kind`` (u32) and ``generation`` (u32) share one u64 word of the descriptor: one load tells whether
#: the slot still holds the queue an engine serves (a re-created queue has a new generation).
_QD_KINDGEN = L.word_of(L.queue_desc, "kind")
assert L.offset_of(L.queue_desc, "generation") == L.offset_of(L.queue_desc, "kind") + 4
#: The packet-index bits of a dispatch id: ``QueueState.did_base | (idx & DISPATCH_INDEX_MASK)`` is
#: ``layouts.dispatch_id(agent, q, idx)``.
DISPATCH_INDEX_MASK = (1 << 44) - 1
assert L.dispatch_id(0, 0, DISPATCH_INDEX_MASK + 1) == 0
assert L.dispatch_id(0, 0, DISPATCH_INDEX_MASK) == DISPATCH_INDEX_MASK
assert L.offset_of(A.kernel_dispatch_packet, "header") == L.offset_of(L.sdma_packet, "header") == 0
assert L.SDMA_TYPE_INVALID == _INVALID


class PacketError(HdemuError):
    """A packet the engine cannot run: ``status`` is the HSA status the queue fails with."""

    def __init__(self, status: int, msg: str):
        super().__init__(msg)
        self.status = status


def describe_exception(exc: BaseException, with_type: bool = True) -> str:
    """``Type: message`` (or just the message) of an exception raised by user code, whatever its
    ``__str__`` does."""
    try:
        name = type(exc).__name__
        if not isinstance(name, str):
            name = "?"
    except BaseException:  # noqa: BLE001 - user code: anything may raise
        name = "?"
    try:
        text = str(exc)
        if not isinstance(text, str):
            text = "<unprintable>"
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises (even SystemExit)
        text = "<unprintable>"
    return f"{name}: {text}" if with_type else text


class QueueState:
    """Engine-private state of one queue slot: its validated, cached shape, where its fields, ring and
    kernarg slots are, its own read index, the owner words its signals and code objects must carry,
    and its park state."""

    __slots__ = ("q", "size", "mask", "kind", "engine", "gen", "own", "owner_pid", "i_owner", "i_read", "i_write",
                 "i_doorbell", "i_packets_done", "i_kernels_done", "ring_off", "desc", "parked_until", "park_s",
                 "last_did", "read", "did_base", "sig_own", "co_own", "karg_lo", "karg_hi", "karg_off", "closed",
                 "i_kindgen", "kindgen")

    def __init__(self, agent, q: int):
        self.q = q
        d = agent.qdesc[q]
        self.size = int(d["size"])
        self.mask = self.size - 1
        self.kind = int(d["kind"])
        self.engine = int(d["engine"])
        self.gen = int(d["generation"])
        self.own = int(d["owner"])
        self.owner_pid = L.owner_pid(self.own)
        base = (agent.topo.qdesc_off + q * L.queue_desc.itemsize) // 8
        self.i_owner = base + L.word_of(L.queue_desc, "owner")
        self.i_read = base + _QD_READ
        self.i_write = base + _QD_WRITE
        self.i_doorbell = base + _QD_DOORBELL
        self.i_packets_done = base + _QD_PACKETS_DONE
        self.i_kernels_done = base + _QD_KERNELS_DONE
        self.ring_off = agent.ring_offset(q)
        self.desc = agent.qdesc[q:q + 1]
        self.read = int(d["read_dispatch_id"])   # the engine's own read index (the shared one is a copy)
        self.did_base = L.dispatch_id(agent.index, q, 0)
        self.sig_own = L.own_word(self.owner_pid, L.OWN_ALLOCATED)   # the owner word of the owner's signals
        self.co_own = L.own_word(self.owner_pid, L.CO_LOADED)        # ... and of its loaded code objects
        self.karg_lo = agent.kernarg_address(q, 0)                   # the queue's own kernarg slots
        self.karg_hi = self.karg_lo + agent.topo.kernarg_queue_bytes
        self.karg_off = agent.kernarg_offset(q)
        self.parked_until = 0.0      # monotonic time of the next poll of a parked queue, 0 = not parked
        self.park_s = BARRIER_POLL_MIN_S
        self.last_did = 0            # dispatch id of the last packet run (the DFX dependency edge)
        self.closed = False          # failed, destroyed, reclaimed or replaced: no engine touches it again
        self.i_kindgen = base + _QD_KINDGEN   # kind and generation, one word: checked once per turn
        self.kindgen = self.kind | (self.gen << 32)

    def shape_error(self, n_engines: int, qmax: int):
        """Why this queue's cached shape or indices cannot be served (a string), or None. The doorbell is
        read before the write index (``queue_index_error``: the other order can see a host's fresh
        doorbell beside its stale write index, a false lie)."""
        db = int(self.desc["doorbell"][0])
        return L.queue_shape_error(self.size, self.engine, self.kind, n_engines, qmax) or \
            L.queue_index_error(self.read, int(self.desc["write_dispatch_id"][0]), db)

    def park(self, now: float = 0.0) -> None:
        """The head packet waits on a dependency: poll it again after ``park_s``, which doubles."""
        self.parked_until = (now or time.monotonic()) + self.park_s
        self.park_s = min(self.park_s * 2, BARRIER_POLL_MAX_S)
        self.desc["barrier_waits"] += 1          # numpy: wraps modulo 2**64

    def unpark(self) -> None:
        """The dependency is met: the next park starts again at ``BARRIER_POLL_MIN_S``."""
        self.parked_until = 0.0
        self.park_s = BARRIER_POLL_MIN_S


class RingEngine:
    """Fetch and consume packets of the agent's rings; ``process_queue`` is the engine's own."""

    def __init__(self, cp, engine: int):
        self.cp = cp
        self.engine = engine
        self.buf = cp.aseg.buf
        self.a64 = cp.a64
        self.a16 = cp.a16
        self.fail_queue = cp.fail_queue

    def ready(self, qs: QueueState) -> bool:
        """The queue has a packet to run (or to re-poll): ``next_packet`` would not return None."""
        if qs.parked_until:
            return True
        idx = qs.read
        db = self.a64[qs.i_doorbell]
        return db != U64_MAX and idx <= db and not qs.closed and \
            self.a16[(qs.ring_off + (idx & qs.mask) * PACKET_BYTES) >> 1] & _HEADER_TYPE_MASK != _INVALID

    def check_slot(self, qs: QueueState) -> None:
        """The slot's kind/generation word or read index is not what the engine expects (checked inline
        once per turn in the engines' ``process_queue``): a re-created queue (new generation) is not this
        one any more, so it is dropped for the next scan; a changed kind or a moved read index fails the
        queue."""
        kg = self.a64[qs.i_kindgen]
        if kg != qs.kindgen:
            if kg >> 32 != qs.gen:
                qs.closed = True                             # replaced: the next scan takes the new queue
                fetch_add(self.cp.queue_table_gen_addr, 1)
                return
            self.queue_error(qs, f"engine/kind/size changed under the command processor from {qs.engine}/"
                                 f"{qs.kind}/{qs.size} to kind {kg & 0xFFFFFFFF}")
            return
        self.check_read(qs)

    def check_read(self, qs: QueueState) -> bool:
        """False (and the queue failed) when the shared read index is not the engine's own: the host
        moved it. Checked once per turn of the queue (inline in the engines' ``process_queue``)."""
        shared = self.a64[qs.i_read]
        if shared == qs.read:
            return True
        self.queue_error(qs, f"read_dispatch_id changed under the command processor from {qs.read} to {shared} "
                             f"(only the command processor writes it)")
        return False

    def queue_error(self, qs: QueueState, msg: str, status: int = L.HSA_STATUS_ERROR_INVALID_QUEUE) -> None:
        """Fail the queue at its read index for a reason that is not a packet (its descriptor)."""
        self.fail_queue(qs, qs.read, PacketError(status, msg), self.engine, 0)

    def next_packet(self, qs: QueueState):
        """(packet id, offset, type) of the queue's next packet, or None: the ring is empty, the
        doorbell has not reached it, or its header is still INVALID (not published; a doorbell that
        names packets never reserved fails the queue)."""
        idx = qs.read
        db = self.a64[qs.i_doorbell]
        if db == U64_MAX or idx > db:
            return None
        off = qs.ring_off + (idx & qs.mask) * PACKET_BYTES
        ptype = self.a16[off >> 1] & _HEADER_TYPE_MASK
        if ptype == _INVALID:
            # rung but not published: a packet in flight (a producer between reserve and publish), or
            # a doorbell that lies. The write index tells them apart (doorbell read first: it only grows).
            why = L.queue_index_error(idx, self.a64[qs.i_write], db)
            if why is not None:
                self.queue_error(qs, why)
            return None
        rmb()
        return idx, off, ptype

    def retire(self, qs: QueueState, idx: int, off: int) -> bool:
        """The slot is consumed: header back to INVALID, then the read index moves past it. False (and
        nothing written) when the queue slot no longer holds this queue: it was re-created, maybe by
        another process, while the packet ran (``check_slot``)."""
        if self.a64[qs.i_kindgen] != qs.kindgen or self.a64[qs.i_read] != idx:
            self.check_slot(qs)             # replaced, or a read index the host moved: failed
            return False
        self.a16[off >> 1] = _INVALID
        qs.read = idx + 1
        self.a64[qs.i_read] = idx + 1
        return True

    def bump(self, i: int, n: int) -> None:
        """Add ``n`` to the u64 device counter at word ``i`` of the agent segment, modulo 2**64 (the
        host may have stored anything there)."""
        self.a64[i] = (self.a64[i] + n) & U64_MAX

    def packet_error(self, qs: QueueState, idx: int, exc: BaseException, signal: int) -> None:
        """Fail the queue at packet ``idx`` for ``exc``: a PacketError as it is; anything else that
        escaped a packet's processing (a bug, or user code the engine did not expect) as
        HSA_STATUS_ERROR_EXCEPTION, logged with its traceback. The engine itself carries on."""
        if not isinstance(exc, PacketError):
            self.cp.log.error("engine %d: packet %d of queue %d raised", self.engine, idx, qs.q, exc_info=exc)
            exc = PacketError(L.HSA_STATUS_ERROR_EXCEPTION,
                              f"processing the packet raised {describe_exception(exc)}")
        self.fail_queue(qs, idx, exc, self.engine, signal)

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        raise NotImplementedError
