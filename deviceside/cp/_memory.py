"""Device-side view of memory: resolve device addresses into numpy views, or fault.

A pointer is valid when it lies inside an aperture *and* inside a live allocation of that region
(kernarg slots are valid over their whole aperture). Anything else is a memory fault the command
processor reports on the queue as HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION.
"""
from __future__ import annotations

import numpy as np

from shm_layout import layouts as L
from shm_layout.alloc import AllocTable
from shm_layout.errors import HdemuError

__all__ = ["DeviceMemory", "MemoryFault"]


class MemoryFault(HdemuError):
    """An address outside the apertures or the live allocations; ``status`` is the HSA status the
    command processor reports on the queue."""

    def __init__(self, msg, status=L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION):
        super().__init__(msg)
        self.status = status


class DeviceMemory:
    """Resolves device addresses through the platform's apertures and allocation tables; views of
    pointers are cached until an allocation table changes (its ``gen``)."""

    def __init__(self, pm):
        self.pm = pm
        topo = pm.topo
        self.tables = [AllocTable(pm.alloc_hdrs[0], pm.alloc_recs[0], L.HOST_POOL_BASE,
                                  topo.host_pool_bytes, -1)]
        for a in range(topo.n_agents):
            self.tables.append(AllocTable(pm.alloc_hdrs[1 + a], pm.alloc_recs[1 + a],
                                          L.device_base(a), topo.memory_bytes, a))
        self._cache = {}
        self._gens = [t.gen for t in self.tables]

    def _check_gens(self):
        gens = [t.gen for t in self.tables]
        if gens != self._gens:
            self._gens = gens
            self._cache.clear()

    def extent(self, addr: int, nbytes: int = 1):
        """(segment, offset, bytes available from addr to the end of its allocation)."""
        r = self.pm.resolve(addr, max(nbytes, 1))
        if r is None:
            raise MemoryFault(f"address {addr:#x} (+{nbytes}) is outside every aperture")
        seg, off, region = r
        if region < 0:
            base, size = next((b, s) for (b, s, _sg, _o, rg) in self.pm.apertures
                              if b <= addr < b + s)
            return seg, off, base + size - addr
        hit = self.tables[region].lookup(addr)
        if hit is None:
            raise MemoryFault(f"address {addr:#x} is not inside a live allocation")
        base, size, _kind, _owner = hit
        if addr + nbytes > base + size:
            raise MemoryFault(f"access [{addr:#x}, +{nbytes}) runs past the allocation "
                              f"[{base:#x}, +{size})")
        return seg, off, base + size - addr

    def array(self, addr: int, dtype) -> np.ndarray | None:
        """The pointer as a numpy array from ``addr`` to the end of its allocation (None for null)."""
        if addr == 0:
            return None
        self._check_gens()
        key = (addr, dtype)
        v = self._cache.get(key)
        if v is not None:
            return v
        dt = np.dtype(dtype)
        if addr % dt.itemsize:
            raise MemoryFault(f"pointer {addr:#x} is not aligned to its {dt.itemsize}-byte element")
        seg, off, avail = self.extent(addr, dt.itemsize)
        v = np.frombuffer(seg.buf, dtype=dt, count=avail // dt.itemsize, offset=off)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = v
        return v

    def bytes(self, addr: int, nbytes: int) -> np.ndarray:
        """Exactly ``nbytes`` bytes at ``addr`` as a u8 view (for copies and fills)."""
        self._check_gens()
        seg, off, _avail = self.extent(addr, nbytes)
        return seg.u8[off:off + nbytes]

    def reclaim_dead(self, regions) -> int:
        return sum(self.tables[r].reclaim_dead() for r in regions)
