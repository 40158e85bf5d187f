"""The ring protocol both engines of a command processor share (AQL and SDMA queues).

A queue is a ring of 64-byte packets in the agent segment. The host writes a packet's body, then its
16-bit header (the publish), then rings the doorbell with the packet's id. An engine takes packet
``read_dispatch_id`` once the doorbell has reached it and its header type is no longer INVALID
(``next_packet``, which then issues the acquire barrier), runs it, and consumes the slot: header back
to INVALID, then ``read_dispatch_id + 1`` (``retire``). Both rings use type 1 for INVALID
(``HSA_PACKET_TYPE_INVALID`` = ``SDMA_TYPE_INVALID``), so the fetch is the same code.

A packet whose dependency is not met yet (a barrier's, an SDMA packet's ``dep_signal``) *parks* its
queue: the engine re-polls it after a sleep that starts at ``BARRIER_POLL_MIN_S`` and doubles up to
``BARRIER_POLL_MAX_S`` (``QueueState.park`` / ``unpark``), and counts the park in ``barrier_waits``.
There is no device-side deadline: the host's wait on the dependency is the bounded one.
"""
from __future__ import annotations

import time

from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.coherence import rmb
from shm_layout.errors import HdemuError

__all__ = ["PacketError", "QueueState", "RingEngine", "BARRIER_POLL_MIN_S", "BARRIER_POLL_MAX_S", "U64_MAX"]

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
_QD_DOORBELL = L.word_of(L.queue_desc, "doorbell")
_QD_PACKETS_DONE = L.word_of(L.queue_desc, "packets_done")
_QD_KERNELS_DONE = L.word_of(L.queue_desc, "kernels_done")
assert L.offset_of(A.kernel_dispatch_packet, "header") == L.offset_of(L.sdma_packet, "header") == 0
assert L.SDMA_TYPE_INVALID == _INVALID


class PacketError(HdemuError):
    """A packet the engine cannot run: ``status`` is the HSA status the queue fails with."""

    def __init__(self, status: int, msg: str):
        super().__init__(msg)
        self.status = status


class QueueState:
    """Engine-private cache of one queue slot: where its fields and ring are, and its park state."""

    __slots__ = ("q", "size", "mask", "kind", "gen", "owner_pid", "i_owner", "i_read", "i_doorbell",
                 "i_packets_done", "i_kernels_done", "ring_off", "desc", "parked_until", "park_s", "last_did")

    def __init__(self, agent, q: int):
        self.q = q
        d = agent.qdesc[q]
        self.size = int(d["size"])
        self.mask = self.size - 1
        self.kind = int(d["kind"])
        self.gen = int(d["generation"])
        self.owner_pid = L.owner_pid(int(d["owner"]))
        base = (agent.topo.qdesc_off + q * L.queue_desc.itemsize) // 8
        self.i_owner = base + L.word_of(L.queue_desc, "owner")
        self.i_read = base + _QD_READ
        self.i_doorbell = base + _QD_DOORBELL
        self.i_packets_done = base + _QD_PACKETS_DONE
        self.i_kernels_done = base + _QD_KERNELS_DONE
        self.ring_off = agent.ring_offset(q)
        self.desc = agent.qdesc[q:q + 1]
        self.parked_until = 0.0      # monotonic time of the next poll of a parked queue, 0 = not parked
        self.park_s = BARRIER_POLL_MIN_S
        self.last_did = 0            # dispatch id of the last packet run (the DFX dependency edge)

    def park(self, now: float = 0.0) -> None:
        """The head packet waits on a dependency: poll it again after ``park_s``, which doubles."""
        self.parked_until = (now or time.monotonic()) + self.park_s
        self.park_s = min(self.park_s * 2, BARRIER_POLL_MAX_S)
        self.desc["barrier_waits"] += 1

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

    def ready(self, qs: QueueState) -> bool:
        """The queue has a packet to run (or to re-poll): ``next_packet`` would not return None."""
        if qs.parked_until:
            return True
        idx = self.a64[qs.i_read]
        db = self.a64[qs.i_doorbell]
        return db != U64_MAX and idx <= db and \
            self.a16[(qs.ring_off + (idx & qs.mask) * PACKET_BYTES) >> 1] & _HEADER_TYPE_MASK != _INVALID

    def next_packet(self, qs: QueueState):
        """(packet id, offset, type) of the queue's next packet, or None: the ring is empty, the
        doorbell has not reached it, or its header is still INVALID (not published)."""
        idx = self.a64[qs.i_read]
        db = self.a64[qs.i_doorbell]
        if db == U64_MAX or idx > db:
            return None
        off = qs.ring_off + (idx & qs.mask) * PACKET_BYTES
        ptype = self.a16[off >> 1] & _HEADER_TYPE_MASK
        if ptype == _INVALID:
            return None
        rmb()
        return idx, off, ptype

    def retire(self, qs: QueueState, idx: int, off: int) -> None:
        """The slot is consumed: header back to INVALID, then the read index moves past it."""
        self.a16[off >> 1] = _INVALID
        self.a64[qs.i_read] = idx + 1

    def process_queue(self, qs: QueueState, budget: int = 64) -> int:
        """Run up to ``budget`` packets of one queue; returns how many completed."""
        raise NotImplementedError
