"""The agent-scoped inventory, the snapshot of one agent's device memory and the restore identity
gate (rocprofiler-sdk ``kernel_replay/memory_tracker`` and ``kernel_replay/memory_snapshot``).

hdemu's allocation tracker is the runtime's (``hsa.Runtime.tracker``, base -> ``Allocation``, behind
``tracker_lock``); it records every allocation, always. This module adds what upstream's tracker
keeps beside it:

* a **generation** per allocation (``generation_of``): a number never reissued in the process, so
  an allocation freed and replaced at the same base (what a caching allocator does) is told apart
  from the one that was captured. hdemu stamps the tracker's ``Allocation`` object itself (its
  identity is the allocation's), on first sight; 0 means "not a live tracked allocation".
* ``snap_inventory(agent)``: base -> ``AllocInfo(size, agent, generation)`` of the coarse-grained
  device memory the tracker tags with ``agent`` (not kernarg, staging, or fine-grained/host memory).
* ``snap(agent)`` copies that inventory into a host buffer (a ``Snapshot`` with ``ok`` and
  ``blocks``) under the tracker lock, so a concurrent free cannot retire a region mid-copy.
* ``restore(snapshot)`` writes back, under the same lock, only the regions that still pass
  ``region_is_restorable`` (the same base, at least the captured size, the captured generation) and,
  for a module's device global, ``module_region_is_restorable`` (its code object still loaded). A
  region that fails is skipped with a warning, which is not a failure: writing into it would
  corrupt a live allocation that is not the captured one.

hdemu's device globals are tracked allocations (``hsa.Runtime.load_code_object``), so they are in the
inventory with a generation like any other region; their blocks also name their code object
(``executable_handle``). hdemu has no virtual-memory or stream-ordered allocator, so
``untracked_device_memory`` always reports nothing.
"""
from __future__ import annotations

import dataclasses
import itertools
import sys
import threading

import numpy as np

from shm_layout import layouts as L

from .. import hsa
from ._diagnostics import Footprint, UntrackedSummary

__all__ = ["AllocInfo", "AllocQuery", "Block", "Snapshot", "generation_of", "snap_inventory", "query_alloc",
           "untracked_device_memory", "estimate_footprint", "region_is_restorable", "module_region_is_restorable",
           "executable_handle", "loaded_executables", "snap", "restore"]


@dataclasses.dataclass(frozen=True, slots=True)
class AllocInfo:
    """One inventory entry (upstream ``alloc_info_t``)."""
    size: int
    agent: int
    generation: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class AllocQuery:
    """How the tracker classifies a pointer (upstream ``query_alloc``): ``trackable`` is
    coarse-grained device memory (a snapshot candidate); ``gpu_owned`` means an agent owns it."""
    trackable: bool
    gpu_owned: bool
    agent: int
    size: int
    kind: int


@dataclasses.dataclass(frozen=True, slots=True)
class Block:
    """One captured region: its base and size, the generation it had at snap time, the code object
    it belongs to (``executable_handle``; 0 for an ordinary allocation) and its offset in the buffer."""
    base: int
    size: int
    generation: int
    executable: int
    offset: int


@dataclasses.dataclass(eq=False)
class Snapshot:
    """The device memory of one agent at snap time (upstream ``device_snapshot_t``). ``ok`` is False
    when the host buffer could not be allocated (the window declines ``snapshot_failed``);
    ``skipped`` is how many regions the last ``restore`` left alone."""
    agent: int
    rt: object = None
    ok: bool = True
    blocks: list = dataclasses.field(default_factory=list)
    buf: np.ndarray | None = None
    ranges: tuple = ()          # merged (device-segment offset, buffer offset, bytes)
    bytes: int = 0
    skipped: int = 0
    warned: set = dataclasses.field(default_factory=set)

    def empty(self) -> bool:
        """Nothing captured (a successful snapshot may be empty; only ``ok`` says it failed)."""
        return not self.blocks

    def host_copy(self, blk: Block) -> np.ndarray:
        return self.buf[blk.offset:blk.offset + blk.size]


_gen_lock = threading.Lock()
_gens: dict = {}                 # base -> (the Allocation object stamped, its generation)
_next_gen = itertools.count(1)


def _stamp(a) -> int:
    """The generation of tracker entry ``a`` (stamped on first sight; the caller holds the tracker lock)."""
    with _gen_lock:
        e = _gens.get(a.base)
        if e is None or e[0] is not a:
            e = _gens[a.base] = (a, next(_next_gen))
        return e[1]


def _rt(rt):
    return hsa.runtime() if rt is None else rt


def _snapshottable(a, agent: int) -> bool:
    return a.kind == L.ALLOC_DEVICE and a.agent == agent


def generation_of(ptr: int, rt=None) -> int:
    """The generation of the live tracked allocation based at ``ptr``, or 0 (freed, never allocated,
    or an interior pointer)."""
    rt = _rt(rt)
    with rt.tracker_lock:
        a = rt.tracker.get(ptr)
        return 0 if a is None else _stamp(a)


def snap_inventory(agent: int, rt=None) -> dict:
    """base -> ``AllocInfo`` of the coarse-grained device memory the tracker tags with ``agent``."""
    rt = _rt(rt)
    with rt.tracker_lock:
        return {a.base: AllocInfo(a.size, a.agent, _stamp(a)) for a in rt.tracker.values() if _snapshottable(a, agent)}


def query_alloc(ptr: int, rt=None) -> AllocQuery:
    """The tracker's classification of the allocation holding ``ptr`` (kernarg slots of the queues
    are not allocations: they are not trackable either)."""
    a = _rt(rt).pointer_info(ptr)
    if a is None:
        return AllocQuery(False, False, -1, 0, L.ALLOC_FREE)
    return AllocQuery(a.kind == L.ALLOC_DEVICE, a.agent >= 0, a.agent, a.size, a.kind)


def untracked_device_memory(agent: int, rt=None) -> UntrackedSummary:
    """Device-visible memory outside the tracker: none in hdemu (no hipMemMap, no hipMallocAsync
    pools); the window counts pointer arguments outside the snapshot per dispatch instead."""
    return UntrackedSummary()


def estimate_footprint(agent: int, rt=None) -> Footprint:
    """What ``snap(agent)`` would capture, without copying anything (admission control)."""
    inv = snap_inventory(agent, rt)
    return Footprint(sum(i.size for i in inv.values()), len(inv))


def region_is_restorable(inventory, ptr: int, size: int, generation: int) -> bool:
    """May ``restore`` write ``size`` bytes back at ``ptr``? ``inventory`` maps bases to entries with
    ``size`` and ``generation`` (``snap_inventory``'s shape). Only an exact base names a region; a
    smaller allocation there, or another generation, is not the captured one. Generation 0 asks only
    for a live allocation of at least ``size`` bytes (no tracked allocation is stamped 0)."""
    info = inventory.get(ptr)
    if info is None or info.size < size:
        return False
    return generation == 0 or info.generation == generation


def module_region_is_restorable(loaded, executable: int) -> bool:
    """May a device global of code object ``executable`` be written back? Only while that code
    object is loaded; an empty ``loaded`` means the set could not be enumerated, which admits."""
    return not loaded or executable in loaded


def executable_handle(co) -> int:
    """A code object's handle for the module gate: its slot and load generation."""
    return (co.slot << 16) | co.gen


def loaded_executables(rt=None) -> set:
    """Handles of the code objects of this process that are still loaded."""
    return {executable_handle(co) for co in list(_rt(rt).code_objects) if not co.released}


def _global_owners(rt, agent: int) -> dict:
    """base -> executable handle of every device global of ``agent`` in a loaded code object."""
    out = {}
    for co in list(rt.code_objects):
        if co.released or not co.globals:
            continue
        h = executable_handle(co)
        for _t, _c, addrs, _n in co.globals.values():
            if agent < len(addrs):
                out[addrs[agent]] = h
    return out


def _buffer(total: int, buf):
    if buf is not None and len(buf) >= total:
        return buf
    cap = -(-max(total, 1) // (1 << 20)) << 20
    out = np.empty(cap, np.uint8)
    out.fill(0)                              # pre-fault: first touch runs at page-fault speed
    return out


def snap(agent: int, rt=None, buf=None) -> Snapshot:
    """Capture the agent's inventory into ``buf`` (reused when big enough, else a new buffer of
    whole MiB). A ``MemoryError`` gives ``ok=False``."""
    rt = _rt(rt)
    out = Snapshot(agent, rt)
    owners = _global_owners(rt, agent)
    mem = rt.pm.segs[f"mem{agent}"].u8
    base0 = L.device_base(agent)
    with rt.tracker_lock:
        allocs = sorted((a for a in rt.tracker.values() if _snapshottable(a, agent)), key=lambda a: a.base)
        total = sum(a.size for a in allocs)
        try:
            buf = _buffer(total, buf)
        except MemoryError:
            out.ok, out.bytes = False, total
            return out
        ranges, pos = [], 0
        for a in allocs:
            off = a.base - base0
            out.blocks.append(Block(a.base, a.size, _stamp(a), owners.get(a.base, 0), pos))
            if ranges and ranges[-1][0] + ranges[-1][2] == off:
                ranges[-1][2] += a.size
            else:
                ranges.append([off, pos, a.size])
            pos += a.size
        for off, p, n in ranges:
            np.copyto(buf[p:p + n], mem[off:off + n])
    out.buf, out.bytes = buf, total
    out.ranges = tuple(tuple(r) for r in ranges)
    return out


class _Live:
    """The tracker seen as an inventory of one agent (``region_is_restorable``'s ``inventory``); the
    caller holds the tracker lock."""
    __slots__ = ("rt", "agent")

    def __init__(self, rt, agent):
        self.rt, self.agent = rt, agent

    def get(self, ptr):
        a = self.rt.tracker.get(ptr)
        if a is None or not _snapshottable(a, self.agent):
            return None
        return AllocInfo(a.size, a.agent, _stamp(a))


def restore(s: Snapshot) -> bool:
    """Write the snapshot back, region by region through the identity gate (a region that fails it
    is skipped and warned about once per snapshot). False only for a snapshot that is not ``ok``
    (a failed capture must never be restored, not even its blocks captured before the failure)."""
    if not s.ok:
        return False
    s.skipped = 0
    if not s.blocks:
        return True                          # nothing captured: a no-op, not an error
    rt = s.rt
    mem = rt.pm.segs[f"mem{s.agent}"].u8
    base0 = L.device_base(s.agent)
    loaded = loaded_executables(rt) if any(b.executable for b in s.blocks) else set()
    with rt.tracker_lock:
        live = _Live(rt, s.agent)
        bad = [b for b in s.blocks
               if not region_is_restorable(live, b.base, b.size, b.generation)
               or (b.executable and not module_region_is_restorable(loaded, b.executable))]
        if not bad:
            for off, p, n in s.ranges:
                np.copyto(mem[off:off + n], s.buf[p:p + n])
        else:
            skip = {b.base for b in bad}
            for b in s.blocks:
                if b.base not in skip:
                    off = b.base - base0
                    np.copyto(mem[off:off + b.size], s.buf[b.offset:b.offset + b.size])
    s.skipped = len(bad)
    for b in bad:
        if b.base not in s.warned:
            s.warned.add(b.base)
            what = "device global" if b.executable else "region"
            print(f"hdemu replay: warning: restore skips {what} {b.base:#x} ({b.size} bytes): it is no longer the "
                  f"allocation captured at snap time (freed, shrunk, its address reused, or its module unloaded); "
                  f"a kernel reading it will not see identical inputs on later passes", file=sys.stderr, flush=True)
    return True
