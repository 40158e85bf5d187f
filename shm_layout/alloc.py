"""Allocation tables: one per memory region, shared by every client and the command processors.

Protocol: a client allocates or frees under the region's lock word (cas from 0 to its pid); the
holder updates records, ``used_bytes`` and bumps ``gen`` (readers cache pointer lookups per gen).
A holder that died is detected (pid gone) and its lock stolen. The command processor reclaims the
records of dead clients under the same lock. First fit, ``ALLOC_ALIGN`` alignment.

The table is shared memory any client can write, so every reader validates the records it uses
(``valid_mask``): a live record whose base or size leaves the region is no allocation. Lookups skip
it and ``allocate`` ignores it. Owner pids and lock holders read from the table go through
``owner_alive``, which never raises on a value that is no pid.
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
#: pid_t is a signed 32-bit value: an owner or lock holder at or past this is no process.
_PID_LIMIT = 1 << 31
# numpy functions the tables use, bound once: code that runs in the same process (a kernel module in
# the command processor) and replaces numpy attributes does not change how the tables are read
_flatnonzero, _argsort, _concatenate, _isin, _u64 = np.flatnonzero, np.argsort, np.concatenate, np.isin, np.uint64


def owner_alive(pid: int) -> bool:
    """``pid_alive`` for a pid read from shared memory: a value outside pid_t is no process (and never
    raises the OverflowError that ``os.kill`` raises for it)."""
    return 0 < pid < _PID_LIMIT and pid_alive(pid)


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
        self._lo = _u64(base)
        self._span = _u64(size)

    # -- lock ---------------------------------------------------------------------------------
    def _lock(self, timeout_s: float = ALLOC_LOCK_TIMEOUT_S):
        me = os.getpid()
        deadline = time.monotonic() + timeout_s
        n = 0
        while not cas(self.lock_addr, 0, me):
            holder = int(self.hdr["lock"][0])
            if holder and holder != me and not owner_alive(holder):
                if cas(self.lock_addr, holder, me):
                    return
            n += 1
            if n > 64:
                time.sleep(50e-6)
            if time.monotonic() > deadline:
                raise AllocError(f"allocation lock of region at {self.base:#x} held by pid {holder} "
                                 f"for more than {timeout_s} s")

    def _unlock(self):
        cas(self.lock_addr, os.getpid(), 0)

    # -- validation ---------------------------------------------------------------------------
    def valid_mask(self) -> np.ndarray:
        """The live records that lie inside the region: kind not free, size in [1, region size], base
        in the region and base + size not past its end (computed so that no u64 sum can wrap)."""
        r = self.recs
        b, n = r["base"], r["size"]
        off = b - self._lo                               # wraps where b < base: masked by b >= base
        return (r["kind"] != L.ALLOC_FREE) & (b >= self._lo) & (off < self._span) & (n > 0) & \
            (n <= self._span - off)

    def record_error(self, base: int, size: int):
        """Why a record with this base and size is no allocation of the region (a string), or None."""
        if not self.base <= base < self.base + self.size:
            return f"base {base:#x} is outside the region [{self.base:#x}, +{self.size:#x})"
        if not 0 < size <= self.base + self.size - base:
            return f"size {size:#x} at {base:#x} is zero or runs past the end of the region"
        return None

    # -- operations ---------------------------------------------------------------------------
    def allocate(self, nbytes: int, kind: int, owner: int | None = None) -> int:
        if nbytes <= 0:
            raise AllocError(f"allocation size must be positive, not {nbytes}",
                             L.HSA_STATUS_ERROR_INVALID_ARGUMENT)
        size = -(-nbytes // L.ALLOC_ALIGN) * L.ALLOC_ALIGN
        self._lock()
        try:
            free_recs = _flatnonzero(self.recs["kind"] == L.ALLOC_FREE)
            if not len(free_recs):
                raise AllocError(f"region at {self.base:#x} has no free allocation record")
            live = _flatnonzero(self.valid_mask())      # a record outside the region holds no memory
            bases = self.recs["base"][live] - self.base
            ends = bases + self.recs["size"][live]
            order = _argsort(bases)
            starts = _concatenate(([0], ends[order])).astype(np.int64)
            stops = _concatenate((bases[order], [self.size])).astype(np.int64)
            fit = _flatnonzero(stops - starts >= size)
            if not len(fit):
                raise AllocError(f"out of memory: {nbytes} bytes requested, "
                                 f"{self.size - int(self.hdr['used_bytes'][0])} free in region at "
                                 f"{self.base:#x} (fragmented or full)")
            off = int(starts[fit[0]])
            slot = int(free_recs[0])
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
            hit = _flatnonzero((self.recs["base"] == addr) & (self.recs["kind"] != L.ALLOC_FREE))
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

    def reclaim_dead(self, timeout_s: float = ALLOC_LOCK_TIMEOUT_S) -> int:
        """Free every record whose owner is dead; returns how many records were freed. ``timeout_s``
        bounds the wait for the region lock (AllocError past it)."""
        live = _flatnonzero(self.recs["kind"] != L.ALLOC_FREE)
        owners = {int(p) for p in self.recs["owner_pid"][live]}
        dead = [p for p in owners if not owner_alive(p)]
        if not dead:
            return 0
        self._lock(timeout_s)
        try:
            hit = _flatnonzero(_isin(self.recs["owner_pid"], dead) & (self.recs["kind"] != L.ALLOC_FREE))
            self._free_slots(hit)
            return len(hit)
        finally:
            self._unlock()

    def lookup(self, addr: int, owner: int | None = None):
        """(base, size, kind, owner) of the live allocation containing ``addr``, or None. Only records
        inside the region count (``valid_mask``). With ``owner``, a record of that pid is preferred
        where records overlap (a corrupted table), so a process always finds its own allocation."""
        if not self.base <= addr < self.base + self.size:
            return None
        r = self.recs
        b = r["base"]
        a = _u64(addr)
        hit = _flatnonzero(self.valid_mask() & (b <= a) & (a - b < r["size"]))
        if not len(hit):
            return None
        i = hit[0]
        if owner is not None and len(hit) > 1:
            mine = hit[r["owner_pid"][hit] == owner]
            if len(mine):
                i = mine[0]
        rec = r[i]
        return int(rec["base"]), int(rec["size"]), int(rec["kind"]), int(rec["owner_pid"])

    def live(self):
        k = self.recs["kind"]
        idx = _flatnonzero(k != L.ALLOC_FREE)
        return [(int(self.recs["base"][i]), int(self.recs["size"][i]), int(k[i]),
                 int(self.recs["owner_pid"][i]), int(self.recs["agent"][i])) for i in idx]

    @property
    def gen(self) -> int:
        return int(self.hdr["gen"][0])

    def statistics(self) -> "AllocStatistics":
        return AllocStatistics(capacity_bytes=self.size, used_bytes=int(self.hdr["used_bytes"][0]),
                               allocations=int(self.hdr["count"][0]))
