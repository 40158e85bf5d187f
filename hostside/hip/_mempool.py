"""Created memory pools, as CLR's hip_mempool.cpp: hipMemPoolCreate / hipMemPoolDestroy,
hipMallocFromPoolAsync, hipDeviceSetMemPool (hipDeviceGetMemPool and hipMallocAsync then use the
pool) and hipMemPoolSetAccess / hipMemPoolGetAccess.

A created pool is a ``hipMemPool_t`` of ``_ordered`` with its ``hipMemPoolProps``: its blocks are
device memory of the location's device, handed out and given back exactly as the default pool's
(hipFreeAsync's marker, pending frees reaped once passed; hipFree frees at once). Destroying a pool
with outstanding blocks succeeds, as in CLR (the pool object lives on while they do): the blocks stay
usable and are freed by hipFreeAsync / hipFree; the pool handle itself is no longer valid (any call
taking it is hipErrorInvalidValue) and a device whose current pool it was goes back to its default
pool. The access flags are recorded (every device reaches every device's memory in hdemu) and
reported back as CLR does.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ._context import _st
from ._errors import _api, _is_int, _raise, hipError_t
from . import _ordered
from ._ordered import (_ord, _reap, _stream_arg, _size_arg, allocate, device_arg, hipMemPool_t, pool_arg,
                       prune)

__all__ = ["hipMemAllocationType", "hipMemAllocationTypeInvalid", "hipMemAllocationTypePinned",
           "hipMemAllocationTypeMax", "hipMemAllocationHandleType", "hipMemHandleTypeNone",
           "hipMemHandleTypePosixFileDescriptor", "hipMemHandleTypeWin32", "hipMemHandleTypeWin32Kmt",
           "hipMemLocationType", "hipMemLocationTypeInvalid", "hipMemLocationTypeNone", "hipMemLocationTypeDevice",
           "hipMemLocationTypeHost", "hipMemLocationTypeHostNuma", "hipMemLocationTypeHostNumaCurrent",
           "hipMemAccessFlags", "hipMemAccessFlagsProtNone", "hipMemAccessFlagsProtRead",
           "hipMemAccessFlagsProtReadWrite", "hipMemLocation", "hipMemPoolProps", "hipMemAccessDesc",
           "hipMemPoolCreate", "hipMemPoolDestroy", "hipMallocFromPoolAsync", "hipDeviceSetMemPool",
           "hipMemPoolSetAccess", "hipMemPoolGetAccess"]


class hipMemAllocationType(enum.IntEnum):
    """hipMemAllocationType with hip_runtime_api.h's values."""
    hipMemAllocationTypeInvalid = 0x0
    hipMemAllocationTypePinned = 0x1
    hipMemAllocationTypeMax = 0x7FFFFFFF


class hipMemAllocationHandleType(enum.IntEnum):
    """hipMemAllocationHandleType with hip_runtime_api.h's values."""
    hipMemHandleTypeNone = 0x0
    hipMemHandleTypePosixFileDescriptor = 0x1
    hipMemHandleTypeWin32 = 0x2
    hipMemHandleTypeWin32Kmt = 0x4


class hipMemLocationType(enum.IntEnum):
    """hipMemLocationType with hip_runtime_api.h's values (None is an alias of Invalid)."""
    hipMemLocationTypeInvalid = 0
    hipMemLocationTypeNone = 0
    hipMemLocationTypeDevice = 1
    hipMemLocationTypeHost = 2
    hipMemLocationTypeHostNuma = 3
    hipMemLocationTypeHostNumaCurrent = 4


class hipMemAccessFlags(enum.IntEnum):
    """hipMemAccessFlags with hip_runtime_api.h's values."""
    hipMemAccessFlagsProtNone = 0
    hipMemAccessFlagsProtRead = 1
    hipMemAccessFlagsProtReadWrite = 3


hipMemAllocationTypeInvalid = hipMemAllocationType.hipMemAllocationTypeInvalid
hipMemAllocationTypePinned = hipMemAllocationType.hipMemAllocationTypePinned
hipMemAllocationTypeMax = hipMemAllocationType.hipMemAllocationTypeMax
hipMemHandleTypeNone = hipMemAllocationHandleType.hipMemHandleTypeNone
hipMemHandleTypePosixFileDescriptor = hipMemAllocationHandleType.hipMemHandleTypePosixFileDescriptor
hipMemHandleTypeWin32 = hipMemAllocationHandleType.hipMemHandleTypeWin32
hipMemHandleTypeWin32Kmt = hipMemAllocationHandleType.hipMemHandleTypeWin32Kmt
hipMemLocationTypeInvalid = hipMemLocationType.hipMemLocationTypeInvalid
hipMemLocationTypeNone = hipMemLocationType.hipMemLocationTypeNone
hipMemLocationTypeDevice = hipMemLocationType.hipMemLocationTypeDevice
hipMemLocationTypeHost = hipMemLocationType.hipMemLocationTypeHost
hipMemLocationTypeHostNuma = hipMemLocationType.hipMemLocationTypeHostNuma
hipMemLocationTypeHostNumaCurrent = hipMemLocationType.hipMemLocationTypeHostNumaCurrent
hipMemAccessFlagsProtNone = hipMemAccessFlags.hipMemAccessFlagsProtNone
hipMemAccessFlagsProtRead = hipMemAccessFlags.hipMemAccessFlagsProtRead
hipMemAccessFlagsProtReadWrite = hipMemAccessFlags.hipMemAccessFlagsProtReadWrite


@dataclass
class hipMemLocation:
    """hipMemLocation: ``type`` (a hipMemLocationType) and ``id`` (the device, for a device location).
    The defaults are a zeroed struct's."""
    type: int = hipMemLocationTypeInvalid
    id: int = 0


@dataclass
class hipMemPoolProps:
    """hipMemPoolProps as hip_runtime_api.h declares it; the defaults are a zeroed struct's (``hipMemPoolProps
    prop{}``). ``maxSize`` (bytes, 0: no bound) bounds what the pool reserves."""
    allocType: int = hipMemAllocationTypeInvalid
    handleTypes: int = hipMemHandleTypeNone
    location: hipMemLocation = field(default_factory=hipMemLocation)
    win32SecurityAttributes: object = None
    maxSize: int = 0
    reserved: bytes = bytes(56)


@dataclass
class hipMemAccessDesc:
    """hipMemAccessDesc: the ``location`` a device accesses the pool from, and its ``flags``."""
    location: hipMemLocation = field(default_factory=hipMemLocation)
    flags: int = hipMemAccessFlagsProtNone


def _location_arg(loc, what: str) -> hipMemLocation:
    if not isinstance(loc, hipMemLocation) or not _is_int(loc.type) or not _is_int(loc.id):
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be a hipMemLocation, not {loc!r}")
    return loc


@_api
def hipMemPoolCreate(poolProps) -> hipMemPool_t:
    """A new memory pool with the properties ``poolProps`` (a hipMemPoolProps, copied), checked as CLR
    does: allocType must be hipMemAllocationTypePinned, location a device location of an existing
    device (anything else, like None for props, is hipErrorInvalidValue); handleTypes and maxSize are
    recorded (hdemu exports no pool: the handle types change nothing). hipDeviceSetMemPool makes it a
    device's current pool; hipMemPoolDestroy destroys it."""
    if not isinstance(poolProps, hipMemPoolProps):
        _raise(hipError_t.hipErrorInvalidValue, f"poolProps must be a hipMemPoolProps, not {poolProps!r}")
    if not _is_int(poolProps.allocType) or poolProps.allocType != hipMemAllocationTypePinned:
        _raise(hipError_t.hipErrorInvalidValue,
               f"allocType must be hipMemAllocationTypePinned, not {poolProps.allocType!r}")
    loc = _location_arg(poolProps.location, "poolProps.location")
    n = len(_st().rt.agents)
    if loc.type != hipMemLocationTypeDevice or not 0 <= loc.id < n:
        _raise(hipError_t.hipErrorInvalidValue,
               f"the pool's location must be a device in [0, {n}), not type {loc.type!r} id {loc.id!r}")
    if not _is_int(poolProps.handleTypes) or not 0 <= poolProps.handleTypes < 2**32:
        _raise(hipError_t.hipErrorInvalidValue, f"handleTypes must be a hipMemAllocationHandleType, "
                                                f"not {poolProps.handleTypes!r}")
    if not _is_int(poolProps.maxSize) or poolProps.maxSize < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"maxSize must be a non-negative int, not {poolProps.maxSize!r}")
    props = hipMemPoolProps(int(poolProps.allocType), int(poolProps.handleTypes),
                            hipMemLocation(int(loc.type), int(loc.id)), poolProps.win32SecurityAttributes,
                            int(poolProps.maxSize), bytes(poolProps.reserved))
    pool = hipMemPool_t(int(loc.id), props)
    o = _ord()
    with o.lock:
        o.created.add(pool)
    return pool


@_api
def hipMemPoolDestroy(mem_pool) -> None:
    """Destroy a pool hipMemPoolCreate made. Its freed memory goes back to the device once its streams
    passed the free; blocks still allocated from it stay valid until hipFreeAsync / hipFree frees them
    (CLR keeps the pool alive for them). A device whose current pool it was uses its default pool
    again. None, a pool destroyed already and a device's default pool are hipErrorInvalidValue."""
    pool = pool_arg(mem_pool)
    if pool.props is None:
        _raise(hipError_t.hipErrorInvalidValue, "a device's default memory pool cannot be destroyed")
    o = _ord()
    _reap(o)
    prune(o, pool)
    with o.lock:
        pool.destroyed = True
        o.created.discard(pool)
        if o.current.get(pool.device) is pool:
            del o.current[pool.device]


@_api
def hipMallocFromPoolAsync(size: int, mem_pool, stream=None) -> int:
    """``size`` bytes of device memory from ``mem_pool`` (of the pool's device, whatever the stream's
    device), usable by work submitted after the call, on any stream; freed by hipFreeAsync or hipFree.
    A block of the pool whose free is still pending on the same stream is reused first, as in CLR.
    Size 0 gives 0 (the null pointer). As in CLR: a pool that is not live (None, destroyed) is
    hipErrorInvalidValue, checked before the stream (a stream that is not live is
    hipErrorInvalidHandle); the device full or the pool's maxSize reached, the device's pending
    frees are waited for first, then hipErrorOutOfMemory."""
    pool = pool_arg(mem_pool)
    size = _size_arg(size)
    s = _stream_arg(stream, "hipMallocFromPoolAsync")
    if size == 0:
        return 0
    if s.capture is not None:              # CLR: STREAM_CAPTURE(hipMallocAsync, stream, mem_pool, ...)
        return _ordered.graph_mem[0](s, pool, size)
    return allocate(pool, size, "hipMallocFromPoolAsync", s)


@_api
def hipDeviceSetMemPool(device: int, mem_pool) -> None:
    """Make ``mem_pool`` the pool ``device``'s hipMallocAsync allocates from (and hipDeviceGetMemPool
    returns). As in CLR: a pool that is not live or a bad device is hipErrorInvalidValue, a pool of
    another device hipErrorInvalidDevice."""
    pool = pool_arg(mem_pool)
    d = device_arg(device, hipError_t.hipErrorInvalidValue)
    if pool.device != d:
        _raise(hipError_t.hipErrorInvalidDevice, f"the pool is device {pool.device}'s, not device {d}'s")
    o = _ord()
    with o.lock:
        if pool.props is None:
            o.current.pop(d, None)
        else:
            o.current[d] = pool


@_api
def hipMemPoolSetAccess(mem_pool, descList, count: int | None = None) -> None:
    """Set how devices access the pool's memory, one hipMemAccessDesc (or a list of ``count`` of them,
    all of ``descList`` by default). Checked as CLR does, in order: a pool that is not live or no
    list is hipErrorInvalidValue, a count above the device count hipErrorInvalidDevice; then per
    entry: a location that is not a device hipErrorInvalidValue, a device that does not exist or
    hipMemAccessFlagsProtNone hipErrorInvalidDevice, other bad flags hipErrorInvalidValue (entries
    before a bad one are applied). The pool's own device always has read-write access. Every device
    reaches every device's memory in hdemu: the flags are recorded for hipMemPoolGetAccess."""
    pool = pool_arg(mem_pool)
    if isinstance(descList, hipMemAccessDesc):
        descList = [descList]
    if descList is None or not isinstance(descList, (list, tuple)):
        _raise(hipError_t.hipErrorInvalidValue,
               f"descList must be a hipMemAccessDesc or a list of them, not {descList!r}")
    if count is None:
        count = len(descList)
    n = len(_st().rt.agents)
    if not _is_int(count) or count < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"count must be a non-negative int, not {count!r}")
    if count > n:
        _raise(hipError_t.hipErrorInvalidDevice, f"count ({count}) is above the device count ({n})")
    if count > len(descList):
        _raise(hipError_t.hipErrorInvalidValue, f"count ({count}) is above the list's length ({len(descList)})")
    o = _ord()
    for i, desc in enumerate(descList[:count]):
        if not isinstance(desc, hipMemAccessDesc) or not _is_int(desc.flags):
            _raise(hipError_t.hipErrorInvalidValue, f"descList[{i}] must be a hipMemAccessDesc, not {desc!r}")
        loc = _location_arg(desc.location, f"descList[{i}].location")
        if loc.type != hipMemLocationTypeDevice:
            _raise(hipError_t.hipErrorInvalidValue,
                   f"descList[{i}]: the location must be a device, not type {loc.type!r}")
        if not 0 <= loc.id < n:
            _raise(hipError_t.hipErrorInvalidDevice, f"descList[{i}]: device {loc.id} is not in [0, {n})")
        if desc.flags == hipMemAccessFlagsProtNone:
            _raise(hipError_t.hipErrorInvalidDevice,
                   f"descList[{i}]: hipMemAccessFlagsProtNone is hipErrorInvalidDevice in CLR")
        if not 0 < desc.flags <= hipMemAccessFlagsProtReadWrite:    # CLR lets 2 through too
            _raise(hipError_t.hipErrorInvalidValue,
                   f"descList[{i}]: flags must be hipMemAccessFlags, not {desc.flags!r}")
        if loc.id != pool.device:      # CLR leaves the owner's access alone
            with o.lock:
                pool.access[int(loc.id)] = int(desc.flags)


@_api
def hipMemPoolGetAccess(mem_pool, location) -> int:
    """How the device ``location`` (a hipMemLocation) accesses the pool's memory: what
    hipMemPoolSetAccess set, else read-write for the pool's own device and none for the others. A
    pool that is not live, no location, a location that is not a device or a device that does not
    exist is hipErrorInvalidValue, as in CLR."""
    pool = pool_arg(mem_pool)
    loc = _location_arg(location, "location")
    n = len(_st().rt.agents)
    if loc.type != hipMemLocationTypeDevice or not 0 <= loc.id < n:
        _raise(hipError_t.hipErrorInvalidValue, f"location must be a device in [0, {n}), not type {loc.type!r} "
                                                f"id {loc.id!r}")
    o = _ord()
    with o.lock:
        flags = pool.access.get(int(loc.id))
    if flags is None:
        flags = hipMemAccessFlagsProtReadWrite if loc.id == pool.device else hipMemAccessFlagsProtNone
    return hipMemAccessFlags(flags) if flags in hipMemAccessFlags._value2member_map_ else flags
