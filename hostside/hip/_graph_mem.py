"""Graph memory nodes, as CLR's hip_graph.cpp / hip_graph_internal.hpp (GraphMemAllocNode,
GraphMemFreeNode) with HIP_MEM_POOL_USE_VM on (its default on Linux with virtual memory support).

* ``hipGraphAddMemAllocNode`` reserves the node's address at once (CLR's ReserveAddress): hdemu
  allocates a device block of ``bytesize`` on the location's device that stays the node's address
  until the last graph or exec holding the node is destroyed. No pool memory is used yet.
* When ``hipGraphLaunch`` enqueues the graph, each alloc node takes a chunk of the graph's device's
  *graph memory pool* (reusing a freed chunk of the same stream, or one whose stream has passed its
  free) and maps it at its address; each free node gives the chunk mapped at its address back to the
  pool's free list, with a marker on the launch stream saying when the graph is done with it
  (CLR's VirtualMemAllocNode / VirtualMemFreeNode commands, submitted at enqueue).
* hipFreeAsync / hipFree of such an address give its chunk back the same way (CLR's pool lookup).
* The pool's attributes (hipDeviceGetGraphMemAttribute) count chunks: used = mapped or leaked ones,
  reserved = used + freed ones not yet released. Freed chunks are released once their marker has
  been passed (CLR releases them at the next synchronisation); hipDeviceGraphMemTrim does the same.

The chunks are bookkeeping: the data lives in the reserved block, which is why hdemu does not fault
on a use of the address outside alloc .. free (CLR does: the address is not mapped there).
"""
from __future__ import annotations

import copy
import enum
import threading
from dataclasses import dataclass, field

import numpy as np

from shm_layout import layouts as L

from ..hsa import HsaError
from ._context import _st
from . import _context
from ._errors import _api, _is_int, _raise, hipError_t
from ._graph_types import _T, _any_node, _graph
from ._mempool import (hipMemAccessDesc, hipMemAccessFlagsProtReadWrite, hipMemAllocationTypePinned,
                       hipMemLocation, hipMemLocationTypeDevice, hipMemPoolProps)
from ._order import bury, fresh_signal, sweep_buried

__all__ = ["hipGraphMemAttributeType", "hipGraphMemAttrUsedMemCurrent", "hipGraphMemAttrUsedMemHigh",
           "hipGraphMemAttrReservedMemCurrent", "hipGraphMemAttrReservedMemHigh", "hipMemAllocNodeParams",
           "hipGraphAddMemAllocNode", "hipGraphMemAllocNodeGetParams", "hipGraphAddMemFreeNode",
           "hipGraphMemFreeNodeGetParams", "hipDeviceGetGraphMemAttribute", "hipDeviceSetGraphMemAttribute",
           "hipDeviceGraphMemTrim"]

T_ALLOC, T_FREE = _T.hipGraphNodeTypeMemAlloc, _T.hipGraphNodeTypeMemFree
MEM_TYPES = (T_ALLOC, T_FREE)


class hipGraphMemAttributeType(enum.IntEnum):
    """hipGraphMemAttributeType with hip_runtime_api.h's values."""
    hipGraphMemAttrUsedMemCurrent = 0
    hipGraphMemAttrUsedMemHigh = 1
    hipGraphMemAttrReservedMemCurrent = 2
    hipGraphMemAttrReservedMemHigh = 3


_GA = hipGraphMemAttributeType
hipGraphMemAttrUsedMemCurrent = _GA.hipGraphMemAttrUsedMemCurrent
hipGraphMemAttrUsedMemHigh = _GA.hipGraphMemAttrUsedMemHigh
hipGraphMemAttrReservedMemCurrent = _GA.hipGraphMemAttrReservedMemCurrent
hipGraphMemAttrReservedMemHigh = _GA.hipGraphMemAttrReservedMemHigh


@dataclass
class hipMemAllocNodeParams:
    """hipMemAllocNodeParams: ``poolProps`` (allocType must be pinned, location a device),
    ``accessDescs`` (a list of hipMemAccessDesc, or None) and ``accessDescCount``, ``bytesize``;
    ``dptr`` is written by hipGraphAddMemAllocNode (the node's address)."""
    poolProps: hipMemPoolProps = field(default_factory=hipMemPoolProps)
    accessDescs: object = None
    accessDescCount: int = 0
    bytesize: int = 0
    dptr: int = 0


class _VA:
    """The address an alloc node reserved: a device block, shared by the node's copies (child graph
    copies, execs), freed when the last of them goes (CLR's va_ reference count). ``alloc`` is the
    runtime's record of the block: once ``rt`` no longer holds that very record at ``ptr`` (a hipFree
    gave the block back, maybe reallocated since; a hipDeviceReset closed ``rt``), the address is no
    longer the node's (``gone``) and nothing frees it in its name."""

    __slots__ = ("ptr", "size", "refs", "dead", "rt", "alloc")

    def __init__(self, ptr, size, rt=None, alloc=None):
        self.ptr, self.size, self.refs, self.dead = ptr, size, 1, False
        self.rt, self.alloc = rt, alloc

    def gone(self) -> bool:
        if not self.dead and (self.rt.closed or self.rt.pointer_info(self.ptr) is not self.alloc):
            self.dead = True
        return self.dead


class AllocSpec:
    """An alloc node's parameters (a copy of what was given, dptr included) and its address."""

    __slots__ = ("params", "va", "device")

    def __init__(self, params, va, device):
        self.params, self.va, self.device = params, va, device


class FreeSpec:
    __slots__ = ("dptr",)

    def __init__(self, dptr):
        self.dptr = dptr


class _Pool:
    """A device's graph memory pool (CLR's Device::graph_mem_pool_): chunks in use (``busy``: chunk ->
    bytes) and freed ones not yet released (``free``: [chunk, bytes, VirtualGPU, marker signal])."""

    def __init__(self, device):
        self.device = device
        self.busy: dict[int, int] = {}
        self.free: list = []
        self.used_high = self.reserved_high = 0

    def used(self):
        return sum(self.busy.values())

    def reserved(self):
        return self.used() + sum(f[1] for f in self.free)


class _State:
    def __init__(self):
        self.lock = threading.RLock()
        self.pools: dict[int, _Pool] = {}
        self.mapped: dict[int, tuple] = {}      # address -> (pool, chunk, _VA) mapped there
        self.ptr_sets: list = []                # owners (graphs, execs) of memAllocNodePtrs_ sets
        self.chunks = 0
        self.retired: list = []                 # (signal, waiters, VirtualGPU) of passed free markers


def _gm() -> _State:
    st = _st()
    s = getattr(st, "graph_mem", None)
    if s is None:
        with st.lock:
            s = getattr(st, "graph_mem", None)
            if s is None:
                s = st.graph_mem = _State()
    return s


def _gm_existing():
    """The graph memory state of the live HIP state, or None (none made yet, or a hipDeviceReset
    since): what a destroy looks at, never bringing a runtime up to do so."""
    st = _context._state
    if st is None or st.rt.closed:
        return None
    return getattr(st, "graph_mem", None)


def _pool(s: _State, device: int) -> _Pool:
    return s.pools.setdefault(device, _Pool(device))


def _device_arg(device) -> int:
    n = len(_st().rt.agents)
    if not _is_int(device) or not 0 <= device < n:
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {n}), not {device!r}")
    return int(device)


# -- the pool ----------------------------------------------------------------------------------------
def _passed(sig, v) -> bool:
    if sig is None or sig.destroyed or sig.load() == 0:     # destroyed: swept once passed
        return True
    try:
        v.check(alive=False)        # a failed stream never passes it: as passed (no /proc look per entry)
    except HsaError:
        return True
    return False


def _release(s: _State) -> None:
    """Release the freed chunks whose free the device has passed (and notice addresses hipFree gave
    back to the device: their chunk is freed, as CLR's hipFree does through the pool)."""
    with s.lock:
        for addr, (_p, _c, va) in list(s.mapped.items()):
            if va.gone():
                _free_chunk(s, addr, None, None)
        done = []
        for pool in s.pools.values():
            keep = []
            for f in pool.free:
                (done if _passed(f[3], f[2]) else keep).append(f)
            pool.free = keep
        retired = _markers(done)
    if retired:
        sweep_buried(retired)


def _markers(entries) -> list:
    """(signal, waiters, VirtualGPU) of the free markers of ``entries`` (free-list entries), each
    signal once (a launch's frees share one marker)."""
    seen, out = set(), []
    for f in entries:
        if f[3] is not None and f[4] is not None and id(f[3]) not in seen:
            seen.add(id(f[3]))
            out.append((f[3], f[4], f[2]))
    return out


def _alloc_chunk(s: _State, pool: _Pool, size: int, v) -> int:
    """CLR's MemoryPool::AllocateMemory: a freed chunk of at least ``size`` bytes that is safe to reuse
    (freed on this stream, or passed), smallest first, else a new one."""
    best = None
    for i, f in enumerate(pool.free):
        if f[1] >= size and (f[2] is v or _passed(f[3], f[2])) and (best is None or f[1] < pool.free[best][1]):
            best = i
    if best is not None:
        f = pool.free.pop(best)
        chunk, n = f[:2]
        bury(_markers([f]))             # its free marker, maybe still ahead: swept once passed
    else:
        s.chunks += 1
        chunk, n = s.chunks, size
    pool.busy[chunk] = n
    pool.used_high = max(pool.used_high, pool.used())
    pool.reserved_high = max(pool.reserved_high, pool.reserved())
    return chunk


def _free_chunk(s: _State, addr: int, v, marker) -> bool:
    """Unmap the chunk at ``addr`` into its pool's free list; False if nothing is mapped there."""
    m = s.mapped.pop(addr, None)
    if m is None:
        return False
    pool, chunk = m[:2]
    n = pool.busy.pop(chunk, None)
    if n is not None:
        pool.free.append([chunk, n, v, None, None] if marker is None else [chunk, n, v] + marker)
    return True


def _marker(s: _State, v) -> list:
    """[signal, waiters] of a marker on ``v`` that completes once the stream's earlier work has."""
    rt = _st().rt
    with s.lock:
        sig = fresh_signal(s.retired, rt)
    ws: list = []
    v.marker(signal=sig, waiters=ws)
    return [sig, ws]


def is_graph_address(ptr) -> bool:
    """``ptr`` is an address an alloc node has a chunk mapped at (hipFreeAsync routes it here); not
    once hipFree gave the node's block back (a hipMalloc may have it now)."""
    st = _st()
    s = getattr(st, "graph_mem", None)
    if s is None:
        return False
    with s.lock:
        m = s.mapped.get(ptr)
        return m is not None and not m[2].gone()


def free_async(ptr: int, v) -> None:
    """hipFreeAsync of a graph allocation on the stream of VirtualGPU ``v``: its chunk goes back to
    the graph pool, released once the stream has passed this point."""
    s = _gm()
    marker = _marker(s, v)
    with s.lock:
        freed = _free_chunk(s, ptr, v, marker)
    if not freed:                       # another thread freed it meanwhile: the marker is nobody's
        bury([(marker[0], marker[1], v)])


# -- node creation ------------------------------------------------------------------------------------
def _reserve(size: int, device: int) -> _VA:
    rt = _st().rt
    try:
        ptr = rt.allocate(device, size, L.ALLOC_DEVICE)
    except HsaError as exc:
        _raise(hipError_t.hipErrorOutOfMemory, f"cannot reserve {size} bytes for the allocation: {exc}", exc)
    a = rt.pointer_info(ptr)
    return _VA(ptr, a.size, rt, a)


def _unref(va: _VA) -> None:
    va.refs -= 1
    if va.refs == 0 and not va.gone():
        va.dead = True
        try:
            va.rt.free(va.ptr)
        except HsaError:            # hipFree gave it back meanwhile
            pass


def _copy_params(p: hipMemAllocNodeParams) -> hipMemAllocNodeParams:
    return copy.deepcopy(p)


def _new_alloc(g, deps, params: hipMemAllocNodeParams, ptr_set: bool):
    loc = params.poolProps.location
    va = _reserve(int(params.bytesize), int(loc.id))
    spec = AllocSpec(None, va, g.device if g.device is not None else int(loc.id))
    try:
        n = g._add(T_ALLOC, deps, spec)
    except BaseException:
        _unref(va)
        raise
    params.dptr = va.ptr
    spec.params = _copy_params(params)
    s = _gm()
    with s.lock:
        if g not in s.ptr_sets:
            s.ptr_sets.append(g)
        if ptr_set:
            g.__dict__.setdefault("_mem_ptrs", set()).add(va.ptr)
        g.__dict__.setdefault("_mem_specs", []).append(spec)
    return n


@_api
def hipGraphAddMemAllocNode(graph, dependencies, pNodeParams: hipMemAllocNodeParams):
    """An alloc node: its address is reserved now and written to ``pNodeParams.dptr`` (as CLR does);
    the memory is taken from the graph memory pool when a launch enqueues the node. As in CLR: no
    graph or parameters, bytesize 0, an allocType that is not pinned or a location that is not a
    device (dptr then set to 0), or a device that does not exist, is hipErrorInvalidValue."""
    if graph is None or not isinstance(pNodeParams, hipMemAllocNodeParams):
        _raise(hipError_t.hipErrorInvalidValue, "need a graph and a hipMemAllocNodeParams")
    p = pNodeParams
    props = p.poolProps
    loc = getattr(props, "location", None)
    if (not _is_int(p.bytesize) or p.bytesize <= 0 or not isinstance(props, hipMemPoolProps)
            or props.allocType != hipMemAllocationTypePinned or not isinstance(loc, hipMemLocation)
            or loc.type != hipMemLocationTypeDevice):
        p.dptr = 0
        _raise(hipError_t.hipErrorInvalidValue, "bytesize must be > 0, poolProps.allocType pinned and "
                                                "poolProps.location a device")
    n_dev = len(_st().rt.agents)
    if not _is_int(loc.id) or not 0 <= loc.id < n_dev:
        _raise(hipError_t.hipErrorInvalidValue, f"poolProps.location.id must be in [0, {n_dev}), not {loc.id!r}")
    p.dptr = 0
    return _new_alloc(_graph(graph), dependencies, p, True)


@_api
def hipGraphMemAllocNodeGetParams(node) -> hipMemAllocNodeParams:
    """A copy of the alloc node's parameters (dptr included); anything but a live alloc node is
    hipErrorInvalidValue."""
    n = _any_node(node)
    if n.type != T_ALLOC:
        _raise(hipError_t.hipErrorInvalidValue, f"{n!r} is not a mem alloc node")
    return _copy_params(n.spec.params)


def _free_ptr_arg(dev_ptr):
    if dev_ptr is None or isinstance(dev_ptr, bool) or not isinstance(dev_ptr, (int, np.integer)) or not dev_ptr:
        _raise(hipError_t.hipErrorInvalidValue, f"dev_ptr must be a device address, not {dev_ptr!r}")
    return int(dev_ptr)


@_api
def hipGraphAddMemFreeNode(graph, dependencies, dev_ptr: int):
    """A free node of ``dev_ptr``, the address of an alloc node (of this graph or another): the chunk
    mapped there goes back to the graph memory pool when a launch enqueues the node. As in CLR, an
    address is freed by one free node only: one that no graph (nor exec) allocates without a free
    node yet, or no graph, is hipErrorInvalidValue."""
    if graph is None:
        _raise(hipError_t.hipErrorInvalidValue, "graph is null")
    ptr = _free_ptr_arg(dev_ptr)
    s = _gm()
    with s.lock:
        owner = next((o for o in s.ptr_sets if ptr in o.__dict__.get("_mem_ptrs", ())), None)
        if owner is None:
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{ptr:#x} is not the address of an alloc node still without a free node")
        owner._mem_ptrs.discard(ptr)
    try:
        if _st().rt.pointer_info(ptr) is None:
            _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a live allocation")
        return _graph(graph)._add(T_FREE, dependencies, FreeSpec(ptr))
    except BaseException:               # a failed call leaves the address free-able, as it was
        with s.lock:
            owner._mem_ptrs.add(ptr)
        raise


@_api
def hipGraphMemFreeNodeGetParams(node) -> int:
    """The address a free node frees; anything but a live free node is hipErrorInvalidValue."""
    n = _any_node(node)
    if n.type != T_FREE:
        _raise(hipError_t.hipErrorInvalidValue, f"{n!r} is not a mem free node")
    return n.spec.dptr


# -- attributes -----------------------------------------------------------------------------------------
def _attr_arg(attr):
    try:
        return hipGraphMemAttributeType(attr)
    except (ValueError, TypeError):
        _raise(hipError_t.hipErrorInvalidValue, f"attr must be a hipGraphMemAttributeType, not {attr!r}")


@_api
def hipDeviceGetGraphMemAttribute(device: int, attr) -> int:
    """The device's graph memory pool's bytes used (chunks mapped, or never freed) or reserved (used
    plus freed chunks not yet released), or their high watermarks since the last reset. As in CLR: a
    bad device is hipErrorInvalidDevice, an unknown attribute hipErrorInvalidValue."""
    d = _device_arg(device)
    a = _attr_arg(attr)
    s = _gm()
    _release(s)
    with s.lock:
        p = _pool(s, d)
        return {_GA.hipGraphMemAttrUsedMemCurrent: p.used(), _GA.hipGraphMemAttrUsedMemHigh: p.used_high,
                _GA.hipGraphMemAttrReservedMemCurrent: p.reserved(),
                _GA.hipGraphMemAttrReservedMemHigh: p.reserved_high}[a]


@_api
def hipDeviceSetGraphMemAttribute(device: int, attr, value) -> None:
    """Reset a high watermark (hipGraphMemAttrUsedMemHigh or ReservedMemHigh) to 0, as CLR's
    MemoryPool::SetAttribute: a value other than 0, another attribute, or no value is
    hipErrorInvalidValue; a bad device hipErrorInvalidDevice (checked first)."""
    d = _device_arg(device)
    if value is None:
        _raise(hipError_t.hipErrorInvalidValue, "value is null")
    a = _attr_arg(attr)
    if a not in (_GA.hipGraphMemAttrUsedMemHigh, _GA.hipGraphMemAttrReservedMemHigh):
        _raise(hipError_t.hipErrorInvalidValue, f"{a.name} cannot be set")
    if not _is_int(value) or value != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{a.name} can only be reset to 0, not {value!r}")
    s = _gm()
    with s.lock:
        p = _pool(s, d)
        if a == _GA.hipGraphMemAttrUsedMemHigh:
            p.used_high = 0
        else:
            p.reserved_high = 0


@_api
def hipDeviceGraphMemTrim(device: int) -> None:
    """Release the device's freed graph memory whose free has been passed (CLR's TrimTo(0)); a bad
    device is hipErrorInvalidDevice."""
    _device_arg(device)
    _release(_gm())
