"""Device-side view of memory: resolve device addresses into numpy views, or fault.

Each process has its own GPU address space: a pointer is valid for a queue when it lies inside an
aperture *and* inside a live allocation of that region owned by the queue's owner (``pid``). An
address outside the apertures or the live allocations is HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION;
an allocation of another process is HSA_STATUS_ERROR_MEMORY_FAULT. The kernarg slots belong to their
queue: a packet's own slots are resolved by the engine (``QueueState.karg_lo``..``karg_hi``), and no
pointer or copy may reach any kernarg slot. Allocation records are validated on every lookup
(``AllocTable.valid_mask``): one that leaves its region is no allocation, so a view never reaches past
its segment.
"""
from __future__ import annotations

import numpy as np

from shm_layout import layouts as L
from shm_layout.alloc import AllocError, AllocTable

from ._ring import PacketError

__all__ = ["DeviceMemory", "MemoryFault", "RECLAIM_LOCK_TIMEOUT_S"]

#: How long the command processor waits for a region's lock when it reclaims dead owners' allocations
#: (a lock held longer is tried again at the next housekeeping: an engine never blocks on it).
RECLAIM_LOCK_TIMEOUT_S = 0.05
_GEN = L.offset_of(L.alloc_region_header, "gen")
# bound once: a kernel module that replaces numpy attributes does not change how the CP maps memory
_frombuffer, _dtype = np.frombuffer, np.dtype


class MemoryFault(PacketError):
    """An address outside the apertures or the live allocations of the queue's owner; ``status`` is
    the HSA status the command processor reports on the queue."""

    def __init__(self, msg, status=L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION):
        super().__init__(status, msg)


class DeviceMemory:
    """Resolves device addresses through the platform's apertures and allocation tables; views of
    pointers are cached per (address, type, owner) until an allocation table changes (its ``gen``)."""

    def __init__(self, pm):
        self.pm = pm
        topo = pm.topo
        self.tables = [AllocTable(pm.alloc_hdrs[0], pm.alloc_recs[0], L.HOST_POOL_BASE,
                                  topo.host_pool_bytes, -1)]
        for a in range(topo.n_agents):
            self.tables.append(AllocTable(pm.alloc_hdrs[1 + a], pm.alloc_recs[1 + a],
                                          L.device_base(a), topo.memory_bytes, a))
        self._a64 = memoryview(pm.segs["alloc"].buf).cast("Q")
        self._gen_words = tuple((r * topo.alloc_region_bytes + _GEN) // 8 for r in range(len(self.tables)))
        self._cache = {}
        self._gens = self._read_gens()

    def _read_gens(self):
        a64 = self._a64
        return tuple([a64[i] for i in self._gen_words])

    def refresh(self) -> None:
        """Drop the cached views if an allocation table changed since they were made."""
        gens = self._read_gens()
        if gens != self._gens:
            self._gens = gens
            self._cache.clear()

    def extent(self, addr: int, nbytes: int, pid: int):
        """(segment, offset, bytes available from addr to the end of its allocation) of an access of
        ``nbytes`` at ``addr`` by a queue of process ``pid``."""
        r = self.pm.resolve(addr, max(nbytes, 1))
        if r is None:
            raise MemoryFault(f"address {addr:#x} (+{nbytes}) is outside every aperture")
        seg, off, region = r
        if region < 0:
            raise MemoryFault(f"address {addr:#x} is in the kernarg slots of a queue, which only that queue's "
                              f"packets may use", L.HSA_STATUS_ERROR_MEMORY_FAULT)
        hit = self.tables[region].lookup(addr, pid)
        if hit is None:
            raise MemoryFault(f"address {addr:#x} is not inside a live allocation")
        base, size, _kind, owner = hit
        if owner != pid:
            raise MemoryFault(f"address {addr:#x} is in an allocation of process {owner}, not of the queue's "
                              f"owner (pid {pid})", L.HSA_STATUS_ERROR_MEMORY_FAULT)
        if addr + nbytes > base + size:
            raise MemoryFault(f"access [{addr:#x}, +{nbytes}) runs past the allocation "
                              f"[{base:#x}, +{size})")
        return seg, off, base + size - addr

    def kernarg(self, addr: int, nbytes: int, pid: int):
        """(buffer, offset) of a kernarg segment outside the queue's own slots: it must be a live
        allocation of the queue's owner (a graph's kernarg block in fine-grained memory)."""
        self.refresh()
        seg, off, _avail = self.extent(addr, nbytes, pid)
        return seg.buf, off

    def array(self, addr: int, dtype, pid: int) -> np.ndarray | None:
        """The pointer as a numpy array from ``addr`` to the end of its allocation (None for null);
        call ``refresh`` first (once per dispatch)."""
        if addr == 0:
            return None
        key = (addr, dtype, pid)
        v = self._cache.get(key)
        if v is not None:
            return v
        dt = _dtype(dtype)
        if addr % dt.itemsize:
            raise MemoryFault(f"pointer {addr:#x} is not aligned to its {dt.itemsize}-byte element")
        seg, off, avail = self.extent(addr, dt.itemsize, pid)
        v = _frombuffer(seg.buf, dtype=dt, count=avail // dt.itemsize, offset=off)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = v
        return v

    def bytes(self, addr: int, nbytes: int, pid: int) -> np.ndarray:
        """Exactly ``nbytes`` bytes at ``addr`` as a u8 view (for copies and fills)."""
        seg, off, _avail = self.extent(addr, nbytes, pid)
        return seg.u8[off:off + nbytes]

    def reclaim_dead(self, regions) -> int:
        """Free the allocations of dead owners in ``regions``; a region whose lock is held is left for
        the next call."""
        n = 0
        for r in regions:
            try:
                n += self.tables[r].reclaim_dead(RECLAIM_LOCK_TIMEOUT_S)
            except AllocError:
                pass            # the lock is busy (or held by a live process that never lets go): later
        return n
