"""Corruption of the workload's AQL queue, every field written through the declared layouts
(``shm_layout.aql`` packets, ``shm_layout.layouts.queue_desc``): no format or offset here.

Packet fields (``corrupt_header``, ``corrupt_kernel_object``, ``corrupt_kernarg``,
``corrupt_dependency``): once the queue has a backlog, the agent's command processor is held with
SIGSTOP for the few milliseconds of the write, and a published packet it has not looked at yet (one
past ``read_dispatch_id``, below ``write_dispatch_id``) of the right type is changed, then the CP is
released. The CP fetches that packet later and fails the queue naming it.

Indices (``corrupt_read_index``: the CP's published read index moved far ahead; ``corrupt_doorbell``:
the doorbell names a packet far past the write index): written while the queue has a backlog; the
engine checks the read index once per turn and the doorbell when it reaches an unpublished slot. A
write can be undone before the engine looks (the engine retiring a packet it held while stopped, the
host ringing the doorbell for its next packet), so the write is repeated until the queue is in error
or ``CORRUPT_WAIT_S`` has passed.
"""
from __future__ import annotations

import time

from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L

__all__ = ["corrupt", "corrupt_ready_entry", "CORRUPT_WAIT_S", "BAD_KERNEL_OBJECT", "BAD_KERNARG", "BAD_SIGNAL",
           "INDEX_JUMP", "READY_FIELDS", "BAD_BUFFER_PTR", "SEQ_JUMP"]

#: How long a corruption looks for a backlog (and, for indices, retries a write that was undone).
CORRUPT_WAIT_S = 5.0
#: Longest hold of the collector (SIGSTOP) while a ready-queue backlog forms (corrupt_ready_entry).
HOLD_S = 2.0
#: The kernel object written: no code object is loaded there.
BAD_KERNEL_OBJECT = 0xDEAD_0000_0000
#: The kernarg address written: 8-aligned, outside every aperture.
BAD_KERNARG = 0x8
#: The dependency signal written: inside the signal handle range but not on a slot boundary.
BAD_SIGNAL = L.SIGNAL_HANDLE_BASE + 8
#: How far ahead a corrupted read index or doorbell points.
INDEX_JUMP = 1 << 20

#: ``corrupt_ready_entry``: the fields it can change (``shm_layout.dfx.ready_entry``).
READY_FIELDS = ("buffer_ptr", "core_index", "buffer_seq", "record_count")
#: The buffer address written: 8-aligned, below the DFX buffer region (no pool's buffer).
BAD_BUFFER_PTR = D.DFX_BUF_BASE - 4096
#: How far ahead a corrupted buffer seq points (a use of the buffer that never happened).
SEQ_JUMP = 1 << 20

_POLL_S = 0.0002      # a poll period: catch the queue with a backlog (the workload runs at its own pace)
_DISPATCH, _BARRIER_AND = A.HSA_PACKET_TYPE_KERNEL_DISPATCH, A.HSA_PACKET_TYPE_BARRIER_AND


def _dispatch_field(field: str, value: int):
    def edit(ring, bar, i):
        if A.header_type(int(ring[i]["header"])) != _DISPATCH:
            return None
        old = int(ring[i][field])
        ring[i][field] = value
        return {"field": field, "old": hex(old), "new": hex(value)}
    return edit


def _header(packet_type: int):
    def edit(ring, bar, i):
        old = int(ring[i]["header"])
        if A.header_type(old) == A.HSA_PACKET_TYPE_INVALID:
            return None
        new = (old & 0xFF00) | packet_type
        ring[i]["header"] = new
        return {"old_header": hex(old), "new_header": hex(new)}
    return edit


def _dependency(ring, bar, i):
    if A.header_type(int(bar[i]["header"])) != _BARRIER_AND or not int(bar[i]["dep_signal"][0]):
        return None
    old = int(bar[i]["dep_signal"][0])
    bar[i]["dep_signal"][0] = BAD_SIGNAL
    return {"field": "dep_signal[0]", "old": hex(old), "new": hex(BAD_SIGNAL)}


def _packet(inj, agent: int, slot: int, edit) -> dict:
    """Hold the CP, change one unfetched packet of the backlog that ``edit`` accepts, release it."""
    am = inj.plat.pm.agents[agent]
    d = am.qdesc[slot]
    size = int(d["size"])
    ring = am.seg.view(A.kernel_dispatch_packet, am.ring_offset(slot), size)
    bar = am.seg.view(A.barrier_and_packet, am.ring_offset(slot), size)
    cp = f"cp{agent}"
    deadline = time.monotonic() + CORRUPT_WAIT_S
    read = write = 0
    while True:
        read, write = int(d["read_dispatch_id"]), int(d["write_dispatch_id"])
        if write > read + 1:        # a backlog: hold the CP and look again
            inj.stop(cp)
            try:
                read, write = int(d["read_dispatch_id"]), int(d["write_dispatch_id"])
                for idx in range(read + 1, min(write, read + size)):   # `read` may be in the CP's hands
                    ev = edit(ring, bar, idx & (size - 1))
                    if ev is not None:
                        return {"packet": idx, **ev}
            finally:
                inj.resume(cp)
        if time.monotonic() > deadline or inj.workload.poll() is not None:
            raise inj.error(f"queue {slot} of agent {agent} had no suitable packet waiting behind the one in flight "
                            f"within {CORRUPT_WAIT_S} s (read {read}, write {write})")
        time.sleep(_POLL_S)


def _index(inj, agent: int, slot: int, field: str) -> dict:
    """Move ``read_dispatch_id`` or ``doorbell`` ``INDEX_JUMP`` packets ahead while the queue has a
    backlog; repeat until the queue is in error (the write may be undone before the engine looks)."""
    am = inj.plat.pm.agents[agent]
    d = am.qdesc[slot]
    deadline = time.monotonic() + CORRUPT_WAIT_S
    tries = 0
    ev = None
    while time.monotonic() < deadline and inj.workload.poll() is None:
        read, write = int(d["read_dispatch_id"]), int(d["write_dispatch_id"])
        if int(d["status"]):
            break
        if write > read + 1:
            old = int(d[field])
            new = (read if field == "read_dispatch_id" else write) + INDEX_JUMP
            d[field] = new
            tries += 1
            ev = {"field": field, "old": old, "new": new, "read": read, "write": write, "tries": tries}
            seen = time.monotonic() + 0.05
            while time.monotonic() < seen and not int(d["status"]) and int(d[field]) == new:
                time.sleep(_POLL_S)     # a poll period: the engine checks once per turn
            if int(d["status"]):
                return ev
            continue
        time.sleep(_POLL_S)
    if ev is not None and int(d["status"]):
        return ev
    if int(d["status"]):
        raise inj.error(f"queue {slot} of agent {agent} was in error before {field} was written")
    raise inj.error(f"{field} of queue {slot} of agent {agent}: no write stuck within {CORRUPT_WAIT_S} s "
                    f"({tries} tries; read {int(d['read_dispatch_id'])}, write {int(d['write_dispatch_id'])})")


def corrupt(inj, kind: str, agent: int, nth: int, packet_type: int = 4) -> dict:
    """Inject one corruption of ``kind`` into the workload's ``nth`` AQL queue on ``agent``; returns
    the evidence (queue slot, packet or field, old and new values)."""
    qs = inj.workload_queues(agent)
    if nth >= len(qs):
        raise inj.error(f"the workload has {len(qs)} AQL queue(s) on agent {agent}, no queue {nth}")
    slot = qs[nth]
    if kind == "corrupt_read_index":
        ev = _index(inj, agent, slot, "read_dispatch_id")
    elif kind == "corrupt_doorbell":
        ev = _index(inj, agent, slot, "doorbell")
    else:
        edit = {"corrupt_header": _header(packet_type),
                "corrupt_kernel_object": _dispatch_field("kernel_object", BAD_KERNEL_OBJECT),
                "corrupt_kernarg": _dispatch_field("kernarg_address", BAD_KERNARG),
                "corrupt_dependency": _dependency}[kind]
        ev = _packet(inj, agent, slot, edit)
    return {"agent": agent, "queue": slot, **ev, "workload_pid": inj.workload.pid}


def corrupt_ready_entry(inj, thread: int, field: str) -> dict:
    """Change ``field`` of a published, not yet collected entry of AICPU thread ``thread``'s DFX ready
    queue (in dfxhdr, through ``shm_layout.dfx.ready_entry``). The collector is held with SIGSTOP
    (at most HOLD_S at a time) until the thread has two entries waiting, and for the write; the entry
    changed is the one after the host's published head (the collector may hold the entry at its
    head). Returns where, and the old and new values."""
    pm = inj.plat.pm
    g = pm.topo.dfx
    hdr = pm.segs["dfxhdr"]
    u32 = hdr.u8.view("<u4")
    deadline = time.monotonic() + CORRUPT_WAIT_S
    head = tail = 0

    def backlog():
        h, t = int(u32[g.head_off(thread) // 4]), int(u32[g.tail_off(thread) // 4])
        return h, t, (t - h) % g.N
    while True:
        # hold the collector and let the lane publish: a backlog of two forms while it is stopped (the
        # lane fills its pool's buffers, then waits at its gate, far under its backpressure timeout),
        # however fast the collector drains when it runs (a loaded machine must not decide)
        inj.stop("collector")
        try:
            hold_end = min(deadline, time.monotonic() + HOLD_S)
            head, tail, n = backlog()
            while n < 2 and time.monotonic() < hold_end and inj.workload.poll() is None:
                time.sleep(0.001)
                head, tail, n = backlog()
            if n >= 2:
                i = (head + 1) % g.N
                e = hdr.view(D.ready_entry, g.entry_off(thread, i), 1)
                old = {f: int(e[f][0]) for f in D.ready_entry.names}
                new = {"buffer_ptr": BAD_BUFFER_PTR, "core_index": (thread + 1) % max(g.T, 2),
                       "buffer_seq": (old["buffer_seq"] + SEQ_JUMP) & 0xFFFFFFFF,
                       "record_count": old["record_count"] + 1}[field]
                e[field] = new
                return {"thread": thread, "entry": i, "field": field, "old": old[field], "new": new,
                        "record_kind": D.KIND_NAMES[old["kind"]] if old["kind"] < len(D.KIND_NAMES) else old["kind"],
                        "buffer_seq": old["buffer_seq"], "record_count": old["record_count"],
                        "collected": {D.KIND_NAMES[k]: int(pm.segs["dfxctl"].u8.view("<u8")[
                            g.collected_word(thread, k)]) for k in g.kinds}}
        finally:
            inj.resume("collector")
        if time.monotonic() > deadline or inj.workload.poll() is not None:
            raise inj.error(f"the ready queue of AICPU thread {thread} never had two entries waiting within "
                            f"{CORRUPT_WAIT_S} s (head {head}, tail {tail})")
        time.sleep(_POLL_S)
