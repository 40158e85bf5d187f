"""Allocation tables: one per memory region, shared by every client and the command processors.

Protocol: a client allocates or frees under the region's lock word (cas from 0 to its pid); the
holder updates records, ``used_bytes`` and bumps ``gen`` (readers cache pointer lookups per gen).
A holder that died is detected (pid gone) and its lock stolen. The command processor reclaims the
records of dead clients under the same lock. First fit, ``ALLOC_ALIGN`` alignment.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from . import layouts as L
from .errors import AllocError as _AllocError
from .sync import address_of, cas, pid_alive

#: Longest wait for a region lock before the allocation fails loudly.
ALLOC_LOCK_TIMEOUT_S = 5.0


class AllocError(_AllocError):
    """An allocation table is full, or an address is not a live allocation (carries an hsa status)."""

    def __init__(self, msg, status=L.HSA_STATUS_ERROR_OUT_OF_RESOURCES):
        super().__init__(msg)
        self.status = status


@dataclass(frozen=True, slots=True)
class AllocStatistics:
    """``AllocTable.statistics()``: one memory region's use at one moment."""
    capacity_bytes: int
    used_bytes: int
    allocations: int


class AllocTable:
    def __init__(self, hdr: np.ndarray, recs: np.ndarray, base: int, size: int, agent: int):
        self.hdr = hdr
        self.recs = recs
        self.base = base
        self.size = size
        self.agent = agent
        self.lock_addr = address_of(hdr)

    # -- lock ---------------------------------------------------------------------------------
    def _lock(self):
        me = os.getpid()
        deadline = time.monotonic() + ALLOC_LOCK_TIMEOUT_S
        n = 0
        while not cas(self.lock_addr, 0, me):
            holder = int(self.hdr["lock"][0])
            if holder and holder != me and not pid_alive(holder):
                if cas(self.lock_addr, holder, me):
                    return
            n += 1
            if n > 64:
                time.sleep(50e-6)
            if time.monotonic() > deadline:
                raise AllocError(f"allocation lock of region at {self.base:#x} held by pid {holder} "
                                 f"for more than {ALLOC_LOCK_TIMEOUT_S} s")

    def _unlock(self):
        cas(self.lock_addr, os.getpid(), 0)

    # -- operations ---------------------------------------------------------------------------
    def allocate(self, nbytes: int, kind: int, owner: int | None = None) -> int:
        if nbytes <= 0:
            raise AllocError(f"allocation size must be positive, not {nbytes}",
                             L.HSA_STATUS_ERROR_INVALID_ARGUMENT)
        size = -(-nbytes // L.ALLOC_ALIGN) * L.ALLOC_ALIGN
        self._lock()
        try:
            live = np.flatnonzero(self.recs["kind"] != L.ALLOC_FREE)
            if len(live) >= len(self.recs):
                raise AllocError(f"region at {self.base:#x} has no free allocation record")
            bases = self.recs["base"][live] - self.base
            ends = bases + self.recs["size"][live]
            order = np.argsort(bases)
            starts = np.concatenate(([0], ends[order])).astype(np.int64)
            stops = np.concatenate((bases[order], [self.size])).astype(np.int64)
            fit = np.flatnonzero(stops - starts >= size)
            if not len(fit):
                raise AllocError(f"out of memory: {nbytes} bytes requested, "
                                 f"{self.size - int(self.hdr['used_bytes'][0])} free in region at "
                                 f"{self.base:#x} (fragmented or full)")
            off = int(starts[fit[0]])
            slot = int(np.flatnonzero(self.recs["kind"] == L.ALLOC_FREE)[0])
            r = self.recs[slot:slot + 1]
            r["base"] = self.base + off
            r["size"] = size
            r["owner_pid"] = os.getpid() if owner is None else owner
            r["agent"] = self.agent
            r["flags"] = 0
            r["kind"] = kind
            self.hdr["used_bytes"] += size
            self.hdr["count"] += 1
            self.hdr["gen"] += 1
            return self.base + off
        finally:
            self._unlock()

    def free(self, addr: int) -> int:
        """Free the allocation starting at ``addr``; returns its size. KeyError when there is none."""
        self._lock()
        try:
            hit = np.flatnonzero((self.recs["base"] == addr) & (self.recs["kind"] != L.ALLOC_FREE))
            if not len(hit):
                raise KeyError(f"{addr:#x} is not the start of a live allocation")
            return self._free_slots(hit)
        finally:
            self._unlock()

    def _free_slots(self, slots) -> int:
        total = int(self.recs["size"][slots].sum())
        self.recs["kind"][slots] = L.ALLOC_FREE
        self.hdr["used_bytes"] -= total
        self.hdr["count"] -= len(slots)
        self.hdr["gen"] += 1
        return total

    def reclaim_dead(self) -> int:
        """Free every record whose owner is dead; returns how many records were freed."""
        live = np.flatnonzero(self.recs["kind"] != L.ALLOC_FREE)
        owners = {int(p) for p in self.recs["owner_pid"][live]}
        dead = [p for p in owners if not pid_alive(p)]
        if not dead:
            return 0
        self._lock()
        try:
            hit = np.flatnonzero(np.isin(self.recs["owner_pid"], dead) & (self.recs["kind"] != L.ALLOC_FREE))
            self._free_slots(hit)
            return len(hit)
        finally:
            self._unlock()

    def lookup(self, addr: int):
        """(base, size, kind, owner) of the live allocation containing ``addr``, or None."""
        k = self.recs["kind"]
        b = self.recs["base"]
        hit = np.flatnonzero((k != L.ALLOC_FREE) & (b <= addr) & (b + self.recs["size"] > addr))
        if not len(hit):
            return None
        r = self.recs[hit[0]]
        return int(r["base"]), int(r["size"]), int(r["kind"]), int(r["owner_pid"])

    def live(self):
        k = self.recs["kind"]
        idx = np.flatnonzero(k != L.ALLOC_FREE)
        return [(int(self.recs["base"][i]), int(self.recs["size"][i]), int(k[i]),
                 int(self.recs["owner_pid"][i]), int(self.recs["agent"][i])) for i in idx]

    @property
    def gen(self) -> int:
        return int(self.hdr["gen"][0])

    def statistics(self) -> "AllocStatistics":
        return AllocStatistics(capacity_bytes=self.size, used_bytes=int(self.hdr["used_bytes"][0]),
                               allocations=int(self.hdr["count"][0]))
