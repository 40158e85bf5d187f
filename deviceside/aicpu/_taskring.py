"""Device-local task rings: the command processor hands every executed packet to an AICPU lane.

One single-producer, single-consumer ring per (agent, AQL engine) in the ``dfxctl`` segment
(``shm_layout.dfx.task_ring_header``, then ``TASK_RING`` ``task_event``s); ring ``r`` (engine-major:
``r = engine * agents + agent``, ``DfxGeometry.ring_of``) is consumed by AICPU thread ``r % T``. The
CP engine writes the event, then advances ``tail``, and notifies the thread's wake word at once if
its last notify is ``WAKE_EVERY_NS`` old, else once when it runs out of work (``wake``); the
thread reads events up to ``tail`` and advances ``head``. A full ring never blocks the GPU: the event
is dropped and counted in ``dropped``, which the lane statistics report.
Once the supervisor has marked the consuming lane dead (its role entry), every later event is
counted in ``dropped`` too, instead of waiting in a ring nobody reads (the events left unread at its
death are counted by ``hostside.dfx.lane_statistics``).

``prev`` is the dispatch id of the previous packet of the queue (the DepGen edge). The command
processor passes 0 when there is none, and 0 is also the id of packet 0 of agent 0's queue 0: the
event carries ``shm_layout.dfx.NO_PREV_DID`` instead, and 0 only when it is that packet (a queue runs
its packets in order from index 0, so a packet of agent 0's queue 0 with an index above 0 whose
previous id is 0 follows packet 0).

``TaskRings`` is the producer (used by the command processor through ``deviceside.aicpu``); the
consumer is ``AicpuThread.poll_tasks``. Both use the word indices and the event struct below.
"""
from __future__ import annotations

import time

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.sync import Notifier


__all__ = ["TaskRings", "EVENT", "EVENTS_OFF", "EVENT_BYTES", "HEAD", "TAIL", "DROPPED"]

#: One task event, packed and unpacked whole (fields in task_event order; ``grid`` is three values).
EVENT = L.struct_of(D.task_event)
EVENT_BYTES = D.task_event.itemsize
#: Where the events start, from the ring's header.
EVENTS_OFF = D.task_ring_header.itemsize
#: Fields of the ring header, as indices into a u64 view relative to the header's first word.
HEAD = L.word_of(D.task_ring_header, "head")
TAIL = L.word_of(D.task_ring_header, "tail")
DROPPED = L.word_of(D.task_ring_header, "dropped")


#: Dispatch ids below this one, and above 0, are packets 1.. of agent 0's queue 0 (see ``prev``).
_QUEUE0_END = L.dispatch_id(0, 1, 0)
#: role_entry.state of role i, as an index into a u32 view of the boot block
_ROLE_STATE32 = L.word_of(L.role_entry, "state", 4)
_ROLE_WORDS32 = L.role_entry.itemsize // 4
_ROLES32 = L.BOOT_ROLES_OFF // 4
assert L.role_entry.itemsize % 4 == 0 and L.BOOT_ROLES_OFF % 4 == 0
_RING = D.TASK_RING
#: ``emit`` notifies the consumer itself when its last notify is this old (else ``wake``, when the
#: engine runs out of work).
WAKE_EVERY_NS = 1_000_000


def _lane_role(pm, lane: int):
    """Index of lane ``lane``'s role entry in the boot block, or None (lanes not started by the
    supervisor: autostart = false)."""
    for i in range(L.BOOT_MAX_ROLES):
        if int(pm.roles[i]["kind"]) == L.ROLE_LANE and int(pm.roles[i]["agent"]) == lane:
            return i
    return None


class TaskRings:
    """The producer side of one agent's task rings: one ring per AQL engine."""

    def __init__(self, pm, g, agent: int, n_engines: int):
        self.g = g
        self.ctl = pm.segs["dfxctl"]
        self.ctl.populate(write=True)           # the rings' first lap: no page fault per event page
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.buf = self.ctl.buf
        self.boot32 = memoryview(pm.boot.buf).cast("I")    # the supervisor marks a dead role ROLE_DEAD
        self.rings = []       # per engine: (events offset, header's u64 index, the consumer's wake word
        for e in range(n_engines):       # (a Notifier's fn), the boot-block u32 index of its role's state or -1)
            r = g.ring_of(agent, e, n_engines)
            base = g.task_ring_off(r)
            t = g.thread_of_ring(r)
            role = _lane_role(pm, g.lane_of_thread(t))
            self.rings.append((base + EVENTS_OFF, base // 8, Notifier(self.ctl.addr + g.wake_word_off(t)).fn,
                               -1 if role is None else _ROLES32 + role * _ROLE_WORDS32 + _ROLE_STATE32))
        self.unwoken = [False] * n_engines     # per engine: events published since its consumer's last notify
        self.woke_ns = [0] * n_engines         # per engine: when that notify was (CLOCK_MONOTONIC ns)
        self.heads = [0] * n_engines           # per engine: its ring's head, as last read
        self.emitters = [self.emitter(e) for e in range(n_engines)]     # emit, per engine

    def emit(self, engine, did, kobj, start, end, fetch, prev, grid, karg: bytes, ptype: int) -> bool:
        """Publish one executed packet on ``engine``'s ring; False when it was dropped (ring full, or
        its lane dead). ``prev``: the queue's previous dispatch id, 0 for none (see the module)."""
        if engine >= len(self.rings):
            return False
        return self.emitters[engine](did, kobj, start, end, fetch, prev, grid[0], grid[1], grid[2], karg, ptype)

    def emitter(self, engine: int):
        """``emit`` for one engine, as a function of its own: the engine's hot path calls it once per
        packet (``emit(did, kobj, start, end, fetch, prev, gx, gy, gz, karg, ptype)``), with the ring's
        offsets and the shared views bound in the closure instead of looked up per call."""
        if not 0 <= engine < len(self.rings):
            raise ValueError(f"engine {engine} has no task ring (the agent has {len(self.rings)} AQL engines)")
        events, hi, wake, i_role = self.rings[engine]
        c64, buf, boot32, pack = self.c64, self.buf, self.boot32, EVENT.pack_into
        heads, unwoken, woke_ns = self.heads, self.unwoken, self.woke_ns
        i_head, i_tail, i_dropped = hi + HEAD, hi + TAIL, hi + DROPPED
        dead, no_prev = L.ROLE_DEAD, D.NO_PREV_DID

        def emit(did, kobj, start, end, fetch, prev, gx, gy, gz, karg, ptype) -> bool:
            tail = c64[i_tail]
            # the consumer's head as last read: read again only when the ring looks full by it (the
            # consumer's cache line stays where it is while the ring has room)
            if tail - heads[engine] >= _RING:
                heads[engine] = c64[i_head]
                if tail - heads[engine] >= _RING:
                    c64[i_dropped] = (c64[i_dropped] + 1) & 0xFFFFFFFFFFFFFFFF
                    return False
            if i_role >= 0 and boot32[i_role] == dead:
                c64[i_dropped] = (c64[i_dropped] + 1) & 0xFFFFFFFFFFFFFFFF
                return False
            if prev == 0 and not 0 < did < _QUEUE0_END:
                prev = no_prev
            pack(buf, events + (tail % _RING) * EVENT_BYTES, did, kobj, start, end, fetch, prev, gx, gy, gz,
                 len(karg), ptype, karg)
            c64[i_tail] = tail + 1
            if end - woke_ns[engine] >= WAKE_EVERY_NS:     # the packet's end time is the clock
                woke_ns[engine] = end
                unwoken[engine] = False
                wake()
            else:
                unwoken[engine] = True
            return True

        return emit

    def wake(self, engine: int) -> None:
        """Notify the consumer of ``engine``'s ring if events were published since its last notify.
        ``emit`` notifies at once when the last notify is ``WAKE_EVERY_NS`` old, else leaves it to this
        call, which the engine makes when a pass over its queues found no work (before it parks, sleeps
        or stalls): a stream of short packets costs one notify a millisecond, not one a packet or a pass
        (the consumer takes events in batches; the notify is a locked read even when nobody sleeps),
        and an event waits for its notify at most ``WAKE_EVERY_NS`` of packets after it, or until the
        engine runs dry. The ring holds more than a millisecond of events at any dispatch rate."""
        if self.unwoken[engine]:
            self.unwoken[engine] = False
            self.woke_ns[engine] = time.monotonic_ns()
            self.rings[engine][2]()
