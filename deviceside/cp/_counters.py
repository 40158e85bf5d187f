"""The counter unit of the emulated GPU (layout and counter list: ``shm_layout.counters``).

A dispatch packet whose ``reserved2`` holds the address of a ``counter_request`` block asks for
counters. The AQL engine's ``run_dispatch`` calls ``begin`` before the kernel (only when reserved2 is
non-zero: the hot path pays one integer test) and ``finish`` after it, before the completion signal.
``finish`` computes the requested counters and writes at most ``counter_slots`` of them; ``n_written``
is stored last.

The byte-level counters (BYTES_WRITTEN, ELEMENTS_WRITTEN, LINES_WRITTEN) compare the extents of the
pointer arguments (and the module's device globals) before and after the kernel, so ``begin`` copies
those extents when one of them is requested; OUTPUT_CRC32 hashes them after the kernel. Both are
bounded by ``SCAN_MAX_BYTES`` per dispatch. The request block must be fine-grained host memory owned by
the queue's owner; a value too large for its u64 slot (huge segment sizes) is stored modulo 2**64.
"""
from __future__ import annotations

import zlib

import numpy as np

from shm_layout import counters as C
from shm_layout import layouts as L

from ._memory import MemoryFault
from ._ring import PacketError

__all__ = ["CounterUnit"]

_U64_MASK = (1 << 64) - 1
# bound once: a kernel module that replaces numpy attributes does not change the counter unit
_count_nonzero, _ndarray, _uint8 = np.count_nonzero, np.ndarray, np.uint8
_BYTE_LEVEL = {C.COUNTER_IDS[n] for n in ("BYTES_WRITTEN", "ELEMENTS_WRITTEN", "LINES_WRITTEN",
                                           "INSTRUCTIONS")}


class _State:
    __slots__ = ("rec", "ids", "n", "extents", "sizes", "pre", "args", "kernel")


class CounterUnit:
    """The counters of one agent: ``begin`` / ``finish`` around each dispatch that asks for them."""

    def __init__(self, mem, topo):
        self.mem = mem
        self.host_pool_end = L.HOST_POOL_BASE + topo.host_pool_bytes
        self.slots = int(topo.cfg.get("counter_slots", C.DEFAULT_SLOTS))
        self.dispatches = 0

    @staticmethod
    def _fault(msg):
        return PacketError(L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, msg)

    def begin(self, addr: int, kernel, args, pid: int) -> _State:
        """Read the request block at ``addr`` (an allocation of ``pid``, the queue's owner); copy the
        extents the kernel may change if needed."""
        if addr < L.HOST_POOL_BASE or addr >= self.host_pool_end:
            raise self._fault(f"counter request block {addr:#x} (reserved2) is not fine-grained host memory")
        try:
            raw = self.mem.bytes(addr, C.REQUEST_BYTES, pid)
        except MemoryFault as f:
            raise PacketError(f.status, f"counter request block (reserved2): {f}") from None
        st = _State()
        st.rec = raw.view(C.counter_request)
        n = min(int(st.rec["n_slots"][0]), C.MAX_SLOTS, self.slots)
        st.n = n
        st.ids = [int(i) for i in st.rec["ids"][0][:n]]
        st.kernel = kernel
        st.args = args
        ext, sizes, seen = [], [], set()
        for a in list(args) + list(kernel.module.get("__hdemu_device_globals__", ())):
            if isinstance(a, _ndarray):
                key = (a.__array_interface__["data"][0], a.nbytes)
                if key not in seen:
                    seen.add(key)
                    ext.append(a.reshape(-1).view(_uint8))
                    sizes.append(a.itemsize)
        budget, cut = C.SCAN_MAX_BYTES, []
        for e in ext:
            if budget <= 0:
                break
            cut.append(e[:budget])
            budget -= len(cut[-1])
        st.extents = cut
        st.sizes = sizes[:len(cut)]
        st.pre = [e.copy() for e in cut] if _BYTE_LEVEL.intersection(st.ids) else None
        return st

    def finish(self, st: _State, grid, block, group_segment: int, private_segment: int, did: int) -> None:
        """Compute the counters of the dispatch and write the requested ones."""
        self.dispatches += 1
        v = {}
        (gx, gy, gz), (wx, wy, wz) = grid, block
        wg = waves = 0
        for cx, nx in _parts(gx, wx):
            for cy, ny in _parts(gy, wy):
                for cz, nz in _parts(gz, wz):
                    cnt = nx * ny * nz
                    wg += cnt
                    waves += cnt * (-(-(cx * cy * cz) // 64))
        items = gx * gy * gz
        sig = st.kernel.sig
        ptrs = [a for a in st.args if isinstance(a, _ndarray)]
        v[0], v[1], v[2] = wg, waves, items
        v[3] = waves * 64 - items
        v[5] = sig.size
        v[6] = len(ptrs)
        v[7] = sum(1 for (_n, _t, p) in sig.args if not p)
        v[8] = sum(a.nbytes for a in ptrs)
        v[9] = sum(min(a.nbytes, items * a.itemsize) for a in ptrs)
        if st.pre is not None:
            bw = ew = lw = 0
            for pre, post, a in zip(st.pre, st.extents, st.sizes):
                neq = pre != post
                nb = int(_count_nonzero(neq))
                if not nb:
                    continue
                bw += nb
                m = len(neq) - len(neq) % a
                ew += int(_count_nonzero(neq[:m].reshape(-1, a).any(axis=1))) + int(neq[m:].any())
                m = len(neq) - len(neq) % 64
                lw += int(_count_nonzero(neq[:m].reshape(-1, 64).any(axis=1))) + int(neq[m:].any())
            v[10], v[11], v[12] = bw, ew, lw
            v[4] = waves * (8 + 2 * len(sig.args)) + (v[9] + bw) // 256
        v[13] = group_segment * wg
        v[14] = private_segment * items
        if 15 in st.ids:
            crc = 0
            for e in st.extents:
                crc = zlib.crc32(e, crc)
            v[15] = crc
        rec = st.rec
        out = rec["out"][0]
        for j, cid in enumerate(st.ids):
            out[j] = v.get(cid, C.INVALID_VALUE) & _U64_MASK
        rec["dispatch_id"] = did
        rec["n_written"] = st.n


def _parts(g: int, b: int):
    """(items per workgroup along an axis, workgroups with that many items)."""
    out = [(b, g // b)] if g >= b else []
    if g % b:
        out.append((g % b, 1))
    return out
