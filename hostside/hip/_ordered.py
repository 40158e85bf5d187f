"""The stream-ordered allocator: hipMallocAsync, hipFreeAsync and each device's default memory pool
(hipDeviceGetDefaultMemPool, hipMemPoolTrimTo, hipMemPoolSetAttribute / GetAttribute).

hipMallocAsync allocates at the call (the memory may be used by any work submitted after it); a block
whose free is still pending on the same stream is handed out again first, as CLR's pools do.
hipFreeAsync records a marker on the stream with a signal of its own and keeps the block in the
pool's list of pending frees; the block goes back to the device only once that signal reads 0, that
is once everything submitted to the stream before the free has finished. Pending frees are reaped at
the next stream-ordered call (hipMallocAsync, hipFreeAsync, hipMemPoolTrimTo, a pool attribute
read); a hipMallocAsync that finds the device full first waits for the pending frees of its device
and tries again. Work on other streams that still uses the block must be ordered before the free by
the application (an event), as in HIP. The markers' signals are reused once nobody can wait on them
(``_order.reusable``).
"""
from __future__ import annotations

import enum
import threading

import numpy as np

from shm_layout import layouts as L

from ..hsa import HsaError
from ._context import _get_stream, _resolve, _st
from ._errors import _api, _raise, hipError_t
from ._memory import hipFree
from ._order import fresh_signal, sweep_buried

__all__ = ["hipMemPool_t", "hipMemPoolAttr", "hipMemPoolReuseFollowEventDependencies",
           "hipMemPoolReuseAllowOpportunistic", "hipMemPoolReuseAllowInternalDependencies",
           "hipMemPoolAttrReleaseThreshold", "hipMemPoolAttrReservedMemCurrent", "hipMemPoolAttrReservedMemHigh",
           "hipMemPoolAttrUsedMemCurrent", "hipMemPoolAttrUsedMemHigh", "hipMallocAsync", "hipFreeAsync",
           "hipDeviceGetDefaultMemPool", "hipDeviceGetMemPool", "hipMemPoolTrimTo", "hipMemPoolSetAttribute",
           "hipMemPoolGetAttribute"]


class hipMemPoolAttr(enum.IntEnum):
    """hipMemPoolAttr with hip_runtime_api.h's values."""
    hipMemPoolReuseFollowEventDependencies = 0x1
    hipMemPoolReuseAllowOpportunistic = 0x2
    hipMemPoolReuseAllowInternalDependencies = 0x3
    hipMemPoolAttrReleaseThreshold = 0x4
    hipMemPoolAttrReservedMemCurrent = 0x5
    hipMemPoolAttrReservedMemHigh = 0x6
    hipMemPoolAttrUsedMemCurrent = 0x7
    hipMemPoolAttrUsedMemHigh = 0x8


_A = hipMemPoolAttr
hipMemPoolReuseFollowEventDependencies = _A.hipMemPoolReuseFollowEventDependencies
hipMemPoolReuseAllowOpportunistic = _A.hipMemPoolReuseAllowOpportunistic
hipMemPoolReuseAllowInternalDependencies = _A.hipMemPoolReuseAllowInternalDependencies
hipMemPoolAttrReleaseThreshold = _A.hipMemPoolAttrReleaseThreshold
hipMemPoolAttrReservedMemCurrent = _A.hipMemPoolAttrReservedMemCurrent
hipMemPoolAttrReservedMemHigh = _A.hipMemPoolAttrReservedMemHigh
hipMemPoolAttrUsedMemCurrent = _A.hipMemPoolAttrUsedMemCurrent
hipMemPoolAttrUsedMemHigh = _A.hipMemPoolAttrUsedMemHigh
_RETIRED_MAX = 64       # signals of reaped frees kept for the next markers


class hipMemPool_t:
    """A memory pool of a device (its default pool, or one hipMemPoolCreate made: ``props``): what it
    has handed out (``used``), what waits for its stream (``pending``: bytes of frees not yet passed),
    the attributes HIP lets one set and the access other devices were given (``access``)."""

    def __init__(self, device: int, props=None):
        self.device = device
        self.props = props              # the hipMemPoolProps of a created pool (None: the default pool)
        self.access: dict[int, int] = {}    # device -> hipMemAccessFlags set by hipMemPoolSetAccess
        self.destroyed = False          # hipMemPoolDestroy'ed (its outstanding blocks stay valid)
        self.used = self.used_high = self.reserved_high = self.pending = 0
        self.release_threshold = 0
        self.reuse = {_A.hipMemPoolReuseFollowEventDependencies: 1, _A.hipMemPoolReuseAllowOpportunistic: 1,
                      _A.hipMemPoolReuseAllowInternalDependencies: 1}

    def __repr__(self):
        kind = "default" if self.props is None else "created"
        return f"<hipMemPool_t {kind} device={self.device} used={self.used} pending={self.pending}>"


class _Ordered:
    """Per-process state of the allocator (kept in the HIP state: hipDeviceReset drops it)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pools: dict[int, hipMemPool_t] = {}         # device -> its default pool
        self.current: dict[int, hipMemPool_t] = {}       # device -> pool set by hipDeviceSetMemPool
        self.created: set = set()       # the live pools hipMemPoolCreate made
        self.blocks: dict[int, tuple[hipMemPool_t, int]] = {}     # live hipMallocAsync block -> (pool, bytes)
        self.frees: list = []           # pending: (ptr, pool, bytes, signal, waiters, stream's VirtualGPU)
        self.freeing: set = set()       # their pointers
        self.retired: list = []         # (signal, waiters, VirtualGPU) of reaped frees, for reuse


#: graph memory nodes' hooks, set when ``_graph_mem_run`` is imported (it imports this module):
#: (capture_malloc(stream, pool, size), capture_free(stream, ptr), is_graph_address(ptr), free_async(ptr, vgpu))
graph_mem = None


def _ord() -> _Ordered:
    st = _st()
    o = getattr(st, "ordered", None)
    if o is None:
        with st.lock:
            o = getattr(st, "ordered", None)
            if o is None:
                o = st.ordered = _Ordered()
    return o


def _pool(o: _Ordered, device: int) -> hipMemPool_t:
    p = o.pools.get(device)
    if p is None:
        p = o.pools.setdefault(device, hipMemPool_t(device))
    return p


def _passed(sig, v) -> bool:
    """The free's marker has been passed, or its stream failed (it runs nothing more)."""
    if sig.load() == 0:
        return True
    try:
        v.check()
    except HsaError:
        return True
    return False


def _reap(o: _Ordered) -> None:
    """Give back to the device every pending free whose marker has been passed."""
    if not o.frees:
        return
    rt = _st().rt
    with o.lock:
        done = [f for f in o.frees if _passed(f[3], f[5])]
        if not done:
            return
        gone = {id(f) for f in done}
        o.frees = [f for f in o.frees if id(f) not in gone]
        for ptr, pool, size, sig, ws, v in done:
            if ptr:                 # (0: the block was handed out again on its stream, see _take_pending)
                o.freeing.discard(ptr)
                pool.pending -= size
                try:
                    rt.free(ptr)
                except HsaError:    # freed meanwhile by hipFree: nothing to give back
                    pass
            o.retired.append((sig, ws, v))
        extra = o.retired[_RETIRED_MAX:]
        del o.retired[_RETIRED_MAX:]
    if extra:
        sweep_buried(extra)


def _wait_frees(o: _Ordered, device: int) -> None:
    """Wait for the pending frees of ``device`` (the allocator ran out of memory)."""
    with o.lock:
        waits = [(sig, v) for _p, pool, _n, sig, _ws, v in o.frees if pool.device == device]
    for sig, v in waits:
        if not _passed(sig, v):
            try:
                v.sync_signal(sig)
            except HsaError:        # that stream failed: its free is reaped as passed
                pass
    _reap(o)


def _stream_arg(stream, api: str):
    """The stream a hipMallocAsync/hipFreeAsync names: a raw handle no stream has is
    hipErrorInvalidHandle (CLR's hip::isValid). On a capturing stream the call becomes a graph memory
    node (``_graph_mem_run``), as CLR's STREAM_CAPTURE does."""
    if type(stream) is int and stream not in (0, 1, 2):
        _raise(hipError_t.hipErrorInvalidHandle, f"{api}: {stream:#x} is not the handle of a live stream")
    return _resolve(stream, False)


def _size_arg(size) -> int:
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a non-negative int, not {size!r}")
    return int(size)


def _drop_stale(o: _Ordered, ptr: int) -> None:
    """Forget the block ``ptr`` if hipFree freed it behind the pool's back (caller holds the lock)."""
    blk = o.blocks.pop(ptr, None)
    if blk is not None:
        blk[0].used -= blk[1]


def prune(o: _Ordered, pool: hipMemPool_t) -> None:
    """Drop the blocks of ``pool`` that hipFree gave back to the device (they no longer count)."""
    rt = _st().rt
    with o.lock:
        for ptr, (p, n) in list(o.blocks.items()):
            if p is pool:
                a = rt.pointer_info(ptr)
                if a is None or a.base != ptr or a.size != n:
                    _drop_stale(o, ptr)


def _take_pending(o: _Ordered, pool: hipMemPool_t, size: int, v) -> int:
    """The smallest block of ``pool`` of at least ``size`` bytes whose free is pending on the stream of
    VirtualGPU ``v``, made live again (0 if none). As CLR's pools do, such a block may be handed out
    before the free is passed: work submitted to that stream after the allocation runs after the work
    before the free. Its marker stays in ``o.frees`` (ptr 0) until passed, for its signal."""
    with o.lock:
        best = None
        for i, f in enumerate(o.frees):
            if f[0] and f[1] is pool and f[5] is v and f[2] >= size and (best is None or f[2] < o.frees[best][2]):
                best = i
        if best is None:
            return 0
        ptr, _pool, n, sig, ws, _v = o.frees[best]
        o.frees[best] = (0, pool, 0, sig, ws, v)
        o.freeing.discard(ptr)
        pool.pending -= n
        o.blocks[ptr] = (pool, n)
        pool.used += n
        pool.used_high = max(pool.used_high, pool.used)
    return ptr


def allocate(pool: hipMemPool_t, size: int, api: str, stream=None) -> int:
    """``size`` (> 0) bytes of device memory of the pool's device, accounted to ``pool``: a block of the
    pool freed on ``stream`` (a hipStream_t) whose free is still pending if there is one
    (``_take_pending``), else new memory. The pool's ``maxSize`` (if any) bounds what it has
    reserved; the device full or the bound reached, the pending frees of the device are waited for
    first, then hipErrorOutOfMemory."""
    o = _ord()
    _reap(o)
    if stream is not None and o.frees:
        ptr = _take_pending(o, pool, size, stream.vgpu)
        if ptr:
            return ptr
    rt = _st().rt
    cap = pool.props.maxSize if pool.props is not None else 0

    def attempt():
        if cap and pool.used + pool.pending + size > cap:
            raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, f"the pool's maxSize ({cap}) would be exceeded")
        return rt.allocate(pool.device, size, L.ALLOC_DEVICE)
    try:
        ptr = attempt()
    except HsaError as exc:
        if exc.status != L.HSA_STATUS_ERROR_OUT_OF_RESOURCES:
            raise
        _wait_frees(o, pool.device)
        try:
            ptr = attempt()
        except HsaError as exc2:
            _raise(hipError_t.hipErrorOutOfMemory, f"{api}({size}): {exc2}", exc2)
    n = rt.pointer_info(ptr).size
    with o.lock:
        _drop_stale(o, ptr)             # an address hipFree gave back and the device handed out again
        o.blocks[ptr] = (pool, n)
        pool.used += n
        pool.used_high = max(pool.used_high, pool.used)
        pool.reserved_high = max(pool.reserved_high, pool.used + pool.pending)
    return ptr


def current_pool(o: _Ordered, device: int) -> hipMemPool_t:
    """The pool hipMallocAsync takes ``device``'s memory from (hipDeviceSetMemPool's, else the default)."""
    with o.lock:
        p = o.current.get(device)
        return p if p is not None else _pool(o, device)


@_api
def hipMallocAsync(size: int, stream=None) -> int:
    """``size`` bytes of device memory of the stream's device, from the device's current pool
    (hipDeviceSetMemPool's, else its default pool), usable by work submitted after the call (on any
    stream). Size 0 gives 0 (the null pointer). A stream that is not live is hipErrorInvalidHandle;
    when the device is full (or a created pool's maxSize reached) the pending frees of the device
    are waited for first, then hipErrorOutOfMemory."""
    size = _size_arg(size)
    s = _stream_arg(stream, "hipMallocAsync")
    if size == 0:
        return 0
    if s.capture is not None:
        return graph_mem[0](s, current_pool(_ord(), s.device), size)
    return allocate(current_pool(_ord(), s.device), size, "hipMallocAsync", s)


@_api
def hipFreeAsync(ptr: int, stream=None) -> None:
    """Free ``ptr`` once the stream's work submitted before this call has finished (a marker with a
    signal of its own: see the module docstring); returns at once. A null pointer, one that is not
    the base of a live device allocation, or a second free of the same block is
    hipErrorInvalidValue; a stream that is not live hipErrorInvalidHandle. Memory hipMalloc
    returned is freed by hipFree (synchronously), as CLR falls back to it."""
    if not isinstance(ptr, (int, np.integer)) or isinstance(ptr, bool) or not ptr:
        _raise(hipError_t.hipErrorInvalidValue, f"ptr must be a device pointer, not {ptr!r}")
    s = _stream_arg(stream, "hipFreeAsync")
    ptr = int(ptr)
    if s.capture is not None:
        return graph_mem[1](s, ptr)
    if graph_mem[2](ptr):
        return graph_mem[3](ptr, _get_stream(stream).vgpu)
    o = _ord()
    _reap(o)
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent < 0 or a.kind != L.ALLOC_DEVICE:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not the base of a live device allocation")
    with o.lock:
        if ptr in o.freeing:
            _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} was freed already (hipFreeAsync)")
        blk = o.blocks.get(ptr)
    if blk is None or blk[1] != a.size:
        hipFree(ptr)                    # CLR's fallback for memory that is not from a pool
        return
    s = _get_stream(stream)
    v = s.vgpu
    with o.lock:
        if ptr in o.freeing:            # another thread freed it meanwhile
            _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} was freed already (hipFreeAsync)")
        o.freeing.add(ptr)
        pool, n = o.blocks.pop(ptr)
        sig = fresh_signal(o.retired, rt)
    waiters: list = []
    try:
        v.marker(signal=sig, waiters=waiters)
    except BaseException:
        with o.lock:
            o.freeing.discard(ptr)
            o.blocks[ptr] = (pool, n)
            o.retired.append((sig, waiters, None))
        raise
    with o.lock:
        pool.used -= n
        pool.pending += n
        o.frees.append((ptr, pool, n, sig, waiters, v))


def device_arg(device, err=hipError_t.hipErrorInvalidDevice) -> int:
    n = len(_st().rt.agents)
    if not isinstance(device, (int, np.integer)) or isinstance(device, bool) or not 0 <= device < n:
        _raise(err, f"device must be in [0, {n}), not {device!r}")
    return int(device)


@_api
def hipDeviceGetDefaultMemPool(device: int) -> hipMemPool_t:
    """The pool hipMallocAsync takes ``device``'s memory from; a bad device is hipErrorInvalidDevice."""
    d = device_arg(device)
    o = _ord()
    with o.lock:
        return _pool(o, d)


@_api
def hipDeviceGetMemPool(device: int) -> hipMemPool_t:
    """The device's current pool: the one hipDeviceSetMemPool set, else (and once that pool is
    destroyed) its default pool. A bad device is hipErrorInvalidValue, as in CLR."""
    return current_pool(_ord(), device_arg(device, hipError_t.hipErrorInvalidValue))


def pool_arg(pool) -> hipMemPool_t:
    """``pool`` as a live hipMemPool_t: anything else (None, a destroyed pool) is hipErrorInvalidValue."""
    o = _ord()
    if (type(pool) is not hipMemPool_t or pool.destroyed
            or (pool not in o.created if pool.props is not None else o.pools.get(pool.device) is not pool)):
        _raise(hipError_t.hipErrorInvalidValue, f"mem_pool must be a live hipMemPool_t, not {pool!r}")
    return pool


@_api
def hipMemPoolTrimTo(mem_pool, minBytesToHold: int) -> None:
    """Give back the pool's freed memory whose streams have passed the free. The pool keeps no
    freed memory beyond that (it goes back to the device once passed), so ``minBytesToHold`` only
    needs to be a non-negative int."""
    pool_arg(mem_pool)
    if not isinstance(minBytesToHold, (int, np.integer)) or minBytesToHold < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"minBytesToHold must be a non-negative int, not {minBytesToHold!r}")
    _reap(_ord())


@_api
def hipMemPoolSetAttribute(mem_pool, attr, value: int) -> None:
    """Set a pool attribute as CLR does: the three reuse flags (ints, recorded), the release
    threshold (bytes, recorded: freed memory goes back to the device once passed whatever it is),
    the two high watermarks (only 0, which sets them to 0, as CLR). The current sizes are read-only and an
    unknown attribute is hipErrorInvalidValue."""
    pool = pool_arg(mem_pool)
    try:
        a = hipMemPoolAttr(attr)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"attr must be a hipMemPoolAttr, not {attr!r}")
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"value must be a non-negative int, not {value!r}")
    o = _ord()
    with o.lock:
        if a in pool.reuse:
            pool.reuse[a] = int(value)
        elif a == _A.hipMemPoolAttrReleaseThreshold:
            pool.release_threshold = int(value)
        elif a in (_A.hipMemPoolAttrReservedMemHigh, _A.hipMemPoolAttrUsedMemHigh):
            if value != 0:
                _raise(hipError_t.hipErrorInvalidValue, f"{a.name} can only be reset to 0, not {value}")
            if a == _A.hipMemPoolAttrUsedMemHigh:     # CLR sets the watermark to 0 (not to the current size)
                pool.used_high = 0
            else:
                pool.reserved_high = 0
        else:
            _raise(hipError_t.hipErrorInvalidValue, f"{a.name} is read-only")


@_api
def hipMemPoolGetAttribute(mem_pool, attr) -> int:
    """A pool attribute: the reuse flags (1 at first), the release threshold (0 at first), the
    bytes reserved (handed out plus pending frees) and used (handed out), and their high watermarks
    since the last reset. Pending frees already passed are reaped first."""
    pool = pool_arg(mem_pool)
    try:
        a = hipMemPoolAttr(attr)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"attr must be a hipMemPoolAttr, not {attr!r}")
    o = _ord()
    _reap(o)
    prune(o, pool)
    with o.lock:
        if a in pool.reuse:
            return pool.reuse[a]
        return {_A.hipMemPoolAttrReleaseThreshold: pool.release_threshold,
                _A.hipMemPoolAttrReservedMemCurrent: pool.used + pool.pending,
                _A.hipMemPoolAttrReservedMemHigh: pool.reserved_high,
                _A.hipMemPoolAttrUsedMemCurrent: pool.used,
                _A.hipMemPoolAttrUsedMemHigh: pool.used_high}[a]
