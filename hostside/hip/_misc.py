"""The smaller runtime calls, with CLR's checks and error codes: hipInit, device names, total memory,
flags, limits, cache configurations, PCI bus ids and hipChooseDevice; the single-attribute pointer
query and hipMemGetAddressRange. (Function attributes are in ``_funcattr``, occupancy in ``_occupancy``.)

Values are returned (the C out-pointers are dropped, so CLR's "null out-pointer" errors have no
Python form). Per-device settings (flags, limits, cache configuration) live in the process's HIP
state, so hipDeviceReset forgets them, as CLR's device reset does.
"""
from __future__ import annotations

import enum
import re

import numpy as np

from shm_layout import layouts as L

from ._context import _current_device, _st
from ._device import DEVICE_MAJOR, DEVICE_MINOR, _check_device, _properties
from ._errors import _api, _raise, hipError_t
from ._memory import _host_info, _managed, hipMemoryTypeDevice, hipMemoryTypeHost
from ._module import hipFunction_t

__all__ = ["hipInit", "hipDeviceGetName", "hipDeviceTotalMem", "hipDeviceGet", "hipDeviceComputeCapability",
           "hipMemPtrGetInfo",
           "hipSetDeviceFlags", "hipGetDeviceFlags",
           "hipDeviceScheduleAuto", "hipDeviceScheduleSpin", "hipDeviceScheduleYield",
           "hipDeviceScheduleBlockingSync", "hipDeviceScheduleMask", "hipDeviceMapHost", "hipDeviceLmemResizeToMax",
           "hipLimit_t", "hipLimitStackSize", "hipLimitPrintfFifoSize", "hipLimitMallocHeapSize",
           "hipDeviceGetLimit", "hipDeviceSetLimit", "hipFuncCache_t", "hipFuncCachePreferNone",
           "hipFuncCachePreferShared", "hipFuncCachePreferL1", "hipFuncCachePreferEqual",
           "hipDeviceSetCacheConfig", "hipDeviceGetCacheConfig", "hipFuncSetCacheConfig", "hipChooseDevice",
           "hipDeviceGetPCIBusId", "hipDeviceGetByPCIBusId", "hipPointer_attribute", "hipPointerGetAttribute",
           "hipMemGetAddressRange"]


def _int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _settings(device: int) -> dict:
    """This process's settings of ``device`` (flags, limits, cache configuration), kept in the HIP
    state (hipDeviceReset forgets them)."""
    st = _st()
    d = getattr(st, "misc_settings", None)
    if d is None:
        d = st.misc_settings = {}
    s = d.get(device)
    if s is None:
        s = d.setdefault(device, {"flags": hipDeviceScheduleAuto, "cache": hipFuncCachePreferNone,
                                  "stack": STACK_SIZE_DEFAULT, "heap": HEAP_SIZE_DEFAULT})
    return s


@_api
def hipInit(flags: int = 0) -> None:
    """Start the runtime (every other call does so too). ``flags`` must be 0 (hipErrorInvalidValue)."""
    if not _int(flags) or flags != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0, not {flags!r}")
    _st()


@_api
def hipDeviceGetName(*args) -> str:
    """``hipDeviceGetName(device)`` or ``hipDeviceGetName(len, device)`` (C order, the out-buffer
    dropped): the device's name, cut to ``len - 1`` characters as CLR copies it into a buffer of
    ``len`` bytes. A bad device is hipErrorInvalidDevice (checked first), ``len <= 0``
    hipErrorInvalidValue."""
    if len(args) == 1:
        length, device = None, args[0]
    elif len(args) == 2:
        length, device = args
    else:
        _raise(hipError_t.hipErrorInvalidValue, f"hipDeviceGetName takes (device) or (len, device), not {args!r}")
    rt = _st().rt
    _check_device(rt, device)
    name = rt.agents[int(device)].name
    if length is None:
        return name
    if not _int(length) or length <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"len must be a positive int, not {length!r}")
    return name[:int(length) - 1]


@_api
def hipDeviceTotalMem(device: int) -> int:
    """Bytes of ``device``'s memory (hipDeviceProp_t.totalGlobalMem); a bad device is
    hipErrorInvalidDevice."""
    rt = _st().rt
    _check_device(rt, device)
    return int(rt.pm.topo.memory_bytes)


@_api
def hipDeviceGet(ordinal: int) -> int:
    """The driver API's device handle of device ``ordinal`` (the ordinal itself, as in CLR); a bad
    ordinal is hipErrorInvalidDevice."""
    _check_device(_st().rt, ordinal)
    return int(ordinal)


@_api
def hipDeviceComputeCapability(device: int) -> tuple[int, int]:
    """(major, minor) of ``device`` (hipDeviceProp_t.major/minor); a bad device is hipErrorInvalidDevice."""
    _check_device(_st().rt, device)
    return DEVICE_MAJOR, DEVICE_MINOR


# -- device flags ------------------------------------------------------------------------------------
#: hipSetDeviceFlags' flags (hip_runtime_api.h)
hipDeviceScheduleAuto, hipDeviceScheduleSpin, hipDeviceScheduleYield = 0x0, 0x1, 0x2
hipDeviceScheduleBlockingSync, hipDeviceScheduleMask = 0x4, 0x7
hipDeviceMapHost, hipDeviceLmemResizeToMax = 0x8, 0x10
_SCHEDULES = (hipDeviceScheduleAuto, hipDeviceScheduleSpin, hipDeviceScheduleYield, hipDeviceScheduleBlockingSync)


@_api
def hipSetDeviceFlags(flags: int) -> None:
    """Set the current device's flags: at most one hipDeviceSchedule* (Auto 0, Spin 1, Yield 2,
    BlockingSync 4), OR'ed with hipDeviceMapHost and hipDeviceLmemResizeToMax. As in CLR only the
    schedule part is kept (hipGetDeviceFlags reports it; host mapping is always on); another bit or
    two schedules is hipErrorInvalidValue. hdemu's waits block after a short spin whatever the
    schedule."""
    if not _int(flags) or not 0 <= flags < 2**32:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be an unsigned int, not {flags!r}")
    if flags & hipDeviceScheduleMask not in _SCHEDULES:
        _raise(hipError_t.hipErrorInvalidValue, f"flags {flags:#x} name more than one hipDeviceSchedule* mode")
    if flags & ~(hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax):
        _raise(hipError_t.hipErrorInvalidValue, f"flags {flags:#x} has bits no hipDevice* flag defines")
    _settings(_current_device())["flags"] = int(flags) & hipDeviceScheduleMask


@_api
def hipGetDeviceFlags() -> int:
    """The current device's schedule flag set by hipSetDeviceFlags (hipDeviceScheduleAuto at first)."""
    return _settings(_current_device())["flags"]


# -- limits ------------------------------------------------------------------------------------------
class hipLimit_t(enum.IntEnum):
    """hipLimit_t with hip_runtime_api.h's values (hipLimitRange is the end marker)."""
    hipLimitStackSize = 0x0
    hipLimitPrintfFifoSize = 0x1
    hipLimitMallocHeapSize = 0x2
    hipLimitRange = 0x3


hipLimitStackSize = hipLimit_t.hipLimitStackSize
hipLimitPrintfFifoSize = hipLimit_t.hipLimitPrintfFifoSize
hipLimitMallocHeapSize = hipLimit_t.hipLimitMallocHeapSize
#: ROCclr's defaults: 1 KiB of stack per work-item, an 8 MiB device heap (HIP_INITIAL_DM_SIZE)
STACK_SIZE_DEFAULT, HEAP_SIZE_DEFAULT = 1024, 8 << 20
#: the largest stack a work-item can have (COMPUTE_TMPRING_SIZE.WAVE_SIZE: 128 KiB - 16 per lane)
STACK_SIZE_MAX = (128 << 10) - 16
_LIMIT_KEY = {hipLimitStackSize: "stack", hipLimitMallocHeapSize: "heap"}


def _limit(limit):
    """The settings key of ``limit``: as CLR, a value at or past hipLimitRange is
    hipErrorInvalidValue; a negative one, or hipLimitPrintfFifoSize (ROCm has no printf FIFO
    limit), hipErrorUnsupportedLimit."""
    if not _int(limit):
        _raise(hipError_t.hipErrorInvalidValue, f"limit must be a hipLimit_t, not {limit!r}")
    if limit >= hipLimit_t.hipLimitRange:
        _raise(hipError_t.hipErrorInvalidValue, f"limit {limit!r} is not a hipLimit_t")
    key = _LIMIT_KEY.get(int(limit))
    if key is None:
        _raise(hipError_t.hipErrorUnsupportedLimit, f"limit {limit!r} is not supported on AMD devices")
    return key


@_api
def hipDeviceGetLimit(limit) -> int:
    """The current device's hipLimitStackSize (bytes per work-item, 1024 at first) or
    hipLimitMallocHeapSize (8 MiB at first). hipLimitPrintfFifoSize or a negative limit is
    hipErrorUnsupportedLimit (as CLR), a value past the enum hipErrorInvalidValue."""
    return _settings(_current_device())[_limit(limit)]


@_api
def hipDeviceSetLimit(limit, value: int) -> None:
    """Set hipLimitStackSize (rounded up to 16; over 128 KiB - 16 is hipErrorInvalidValue) or
    hipLimitMallocHeapSize (at least the device's memory is hipErrorInvalidValue) for the current
    device. Stored and reported; emulated kernels have no stack or heap to resize."""
    key = _limit(limit)
    if not _int(value) or value < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"value must be a non-negative int, not {value!r}")
    value = int(value)
    if key == "stack":
        if value > STACK_SIZE_MAX:
            _raise(hipError_t.hipErrorInvalidValue, f"a stack of {value} bytes is over {STACK_SIZE_MAX}")
        value = -(-value // 16) * 16
    elif value >= _st().rt.pm.topo.memory_bytes:
        _raise(hipError_t.hipErrorInvalidValue, f"a heap of {value} bytes does not fit the device's memory")
    _settings(_current_device())[key] = value


# -- cache configuration -----------------------------------------------------------------------------
class hipFuncCache_t(enum.IntEnum):
    hipFuncCachePreferNone = 0
    hipFuncCachePreferShared = 1
    hipFuncCachePreferL1 = 2
    hipFuncCachePreferEqual = 3


hipFuncCachePreferNone = hipFuncCache_t.hipFuncCachePreferNone
hipFuncCachePreferShared = hipFuncCache_t.hipFuncCachePreferShared
hipFuncCachePreferL1 = hipFuncCache_t.hipFuncCachePreferL1
hipFuncCachePreferEqual = hipFuncCache_t.hipFuncCachePreferEqual


def _cache(cfg) -> hipFuncCache_t:
    if not _int(cfg) or cfg not in hipFuncCache_t._value2member_map_:
        _raise(hipError_t.hipErrorInvalidValue, f"cacheConfig must be a hipFuncCache_t, not {cfg!r}")
    return hipFuncCache_t(int(cfg))


@_api
def hipDeviceSetCacheConfig(cacheConfig) -> None:
    """Record the current device's preferred cache configuration (a hipFuncCache_t; anything else
    is hipErrorInvalidValue). The emulated device has no L1/LDS split to change."""
    _settings(_current_device())["cache"] = _cache(cacheConfig)


@_api
def hipDeviceGetCacheConfig() -> hipFuncCache_t:
    """The configuration hipDeviceSetCacheConfig recorded (hipFuncCachePreferNone at first)."""
    return _settings(_current_device())["cache"]


@_api
def hipFuncSetCacheConfig(func, cacheConfig) -> None:
    """Accepted and ignored, as in CLR: no function is hipErrorInvalidDeviceFunction, a value that
    is not a hipFuncCache_t hipErrorInvalidValue."""
    if func is None or func == 0:
        _raise(hipError_t.hipErrorInvalidDeviceFunction, "func is a null function")
    _cache(cacheConfig)
    if type(func) is not hipFunction_t:
        _raise(hipError_t.hipErrorInvalidDeviceFunction, f"func must be a hipFunction_t, not {func!r}")


# -- choosing devices, PCI ids -----------------------------------------------------------------------
#: the properties hipChooseDevice compares (CLR's list): a device matches when each requested
#: (non-zero) one is at least the requested value
_CHOOSE_KEYS = ("major", "minor", "totalGlobalMem", "sharedMemPerBlock", "maxThreadsPerBlock", "totalConstMem",
                "multiProcessorCount", "maxThreadsPerMultiProcessor", "memoryClockRate", "memoryBusWidth",
                "l2CacheSize", "regsPerBlock", "maxSharedMemoryPerMultiProcessor", "warpSize")


@_api
def hipChooseDevice(prop) -> int:
    """The device that best matches ``prop`` (a dict or hipDeviceProp_t; missing keys are 0): as in
    CLR, of the devices whose properties reach every non-zero requested value the one matching the
    most, else device 0. ``prop`` None is hipErrorInvalidValue."""
    if prop is None or not hasattr(prop, "get"):
        _raise(hipError_t.hipErrorInvalidValue, f"prop must be a dict of device properties, not {prop!r}")
    rt = _st().rt
    best, most = 0, 0
    want = {k: prop.get(k, 0) or 0 for k in _CHOOSE_KEYS}
    for i in range(len(rt.agents)):
        p = _properties(rt, i)
        asked = [k for k, v in want.items() if v != 0]
        matched = sum(1 for k in asked if p[k] >= want[k])
        if matched == len(asked) and matched > most:
            best, most = i, matched
    return best


def _bus_id(p) -> str:
    return f"{p['pciDomainID']:04x}:{p['pciBusID']:02x}:{p['pciDeviceID']:02x}.0"


@_api
def hipDeviceGetPCIBusId(*args) -> str:
    """``hipDeviceGetPCIBusId(device)`` or ``(len, device)``: "domain:bus:device.function" in hex,
    as CLR prints it from hipDeviceProp_t's pciDomainID, pciBusID and pciDeviceID (function 0):
    device 1 is "0000:01:00.0". A bad device is hipErrorInvalidDevice; ``len`` of 12 or less (no
    room for the 12 characters and the terminator) hipErrorInvalidValue."""
    if len(args) == 1:
        length, device = 13, args[0]
    elif len(args) == 2:
        length, device = args
    else:
        _raise(hipError_t.hipErrorInvalidValue, f"hipDeviceGetPCIBusId takes (device) or (len, device), not {args!r}")
    rt = _st().rt
    _check_device(rt, device)
    if not _int(length) or length <= 12:
        _raise(hipError_t.hipErrorInvalidValue, f"len must be at least 13, not {length!r}")
    return _bus_id(_properties(rt, int(device)))


_BUS_RE = re.compile(r"\s*([0-9a-fA-F]{1,4}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-9a-fA-F])")


@_api
def hipDeviceGetByPCIBusId(pciBusId: str) -> int:
    """The device whose hipDeviceGetPCIBusId is ``pciBusId`` (parsed as CLR's "%04x:%02x:%02x.%01x");
    a string that does not parse or names no device is hipErrorInvalidValue."""
    if not isinstance(pciBusId, (str, bytes)):
        _raise(hipError_t.hipErrorInvalidValue, f"pciBusId must be a string, not {pciBusId!r}")
    text = pciBusId.decode(errors="replace") if isinstance(pciBusId, bytes) else pciBusId
    m = _BUS_RE.match(text)
    rt = _st().rt
    if m is not None:
        dom, bus, dev, fn = (int(g, 16) for g in m.groups())
        for i in range(len(rt.agents)):
            p = _properties(rt, i)
            if (p["pciDomainID"], p["pciBusID"], p["pciDeviceID"], 0) == (dom, bus, dev, fn):
                return i
    _raise(hipError_t.hipErrorInvalidValue, f"no device has PCI bus id {text!r}")


# -- pointers ----------------------------------------------------------------------------------------
class hipPointer_attribute(enum.IntEnum):
    """hipPointer_attribute with hip_runtime_api.h's values."""
    HIP_POINTER_ATTRIBUTE_CONTEXT = 1
    HIP_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
    HIP_POINTER_ATTRIBUTE_DEVICE_POINTER = 3
    HIP_POINTER_ATTRIBUTE_HOST_POINTER = 4
    HIP_POINTER_ATTRIBUTE_P2P_TOKENS = 5
    HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6
    HIP_POINTER_ATTRIBUTE_BUFFER_ID = 7
    HIP_POINTER_ATTRIBUTE_IS_MANAGED = 8
    HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
    HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE = 10
    HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11
    HIP_POINTER_ATTRIBUTE_RANGE_SIZE = 12
    HIP_POINTER_ATTRIBUTE_MAPPED = 13
    HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14
    HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15
    HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16
    HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17


_PA = hipPointer_attribute
_NOT_SUPPORTED = {_PA.HIP_POINTER_ATTRIBUTE_CONTEXT, _PA.HIP_POINTER_ATTRIBUTE_P2P_TOKENS,
                  _PA.HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE, _PA.HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                  _PA.HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, _PA.HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE}


def _allocation(rt, ptr):
    """The live hipMalloc/hipHostMalloc allocation containing int ``ptr``, or None."""
    a = rt.pointer_info(int(ptr))
    if a is None or a.kind not in (L.ALLOC_DEVICE, L.ALLOC_HOST):
        return None
    return a


def _buffer_id(rt, base: int) -> int:
    """A unique id for the allocation at ``base`` (HIP_POINTER_ATTRIBUTE_BUFFER_ID), given on first ask."""
    ids = getattr(rt, "_hip_buffer_ids", None)
    if ids is None:
        ids = rt._hip_buffer_ids = {}
    key = (base, rt.pointer_info(base).size)
    if key not in ids:
        ids[key] = len(ids) + 1
    return ids[key]


@_api
def hipPointerGetAttribute(attribute, ptr):
    """One attribute of ``ptr`` (C's ``data`` out-pointer dropped), as CLR reports it:
    MEMORY_TYPE (hipMemoryTypeDevice or hipMemoryTypeHost), DEVICE_POINTER (``ptr`` itself),
    HOST_POINTER (pinned memory: ``ptr``; device memory: hipErrorInvalidValue), DEVICE_ORDINAL,
    RANGE_START_ADDR / RANGE_SIZE (the allocation, sizes rounded up to 256 bytes), BUFFER_ID,
    IS_MANAGED (True for hipMallocManaged memory), SYNC_MEMOPS (False), MAPPED (True), ACCESS_FLAGS (0). A pointer no allocation
    contains is hipErrorInvalidValue (ACCESS_FLAGS: 0); CONTEXT, P2P_TOKENS, IPC, handle types, RDMA
    and MEMPOOL_HANDLE are hipErrorNotSupported; an unknown attribute or a null pointer
    hipErrorInvalidValue."""
    if ptr is None or (_int(ptr) and not ptr):
        _raise(hipError_t.hipErrorInvalidValue, "ptr is a null pointer")
    try:
        attr = hipPointer_attribute(attribute)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"attribute must be a hipPointer_attribute, not {attribute!r}")
    if attr in _NOT_SUPPORTED:
        _raise(hipError_t.hipErrorNotSupported, f"{attr.name} is not supported by HIP on AMD")
    rt = _st().rt
    a = _allocation(rt, ptr) if _int(ptr) else None
    if a is None:
        if attr == _PA.HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS:
            return 0
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr!r} is not in memory hipMalloc or hipHostMalloc returned")
    ptr, host = int(ptr), a.agent < 0
    if attr == _PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE:
        return hipMemoryTypeHost if host else hipMemoryTypeDevice
    if attr == _PA.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER:
        return ptr
    if attr == _PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER:
        if not host:
            _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is device memory: it has no host pointer")
        return ptr
    if attr == _PA.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        return _host_info(rt).get(a.base, (0, 0))[0] if host else a.agent
    if attr == _PA.HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        return a.base
    if attr == _PA.HIP_POINTER_ATTRIBUTE_RANGE_SIZE:
        return a.size
    if attr == _PA.HIP_POINTER_ATTRIBUTE_BUFFER_ID:
        return _buffer_id(rt, a.base)
    if attr == _PA.HIP_POINTER_ATTRIBUTE_MAPPED:
        return True
    if attr == _PA.HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        return 0
    if attr == _PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED:
        return a.base in _managed(rt)       # hipMallocManaged memory (as hipPointerGetAttributes' isManaged)
    return False            # SYNC_MEMOPS


@_api
def hipMemGetAddressRange(dptr) -> tuple[int, int]:
    """(base, size) of the hipMalloc or hipHostMalloc allocation that contains ``dptr`` (its base or
    any byte inside it; sizes are whole multiples of 256 bytes, as hdemu allocates). A pointer no
    allocation contains (null, freed, past the end) is hipErrorNotFound, as in CLR."""
    if not _int(dptr):
        _raise(hipError_t.hipErrorNotFound, f"{dptr!r} is not a device or pinned host pointer")
    a = _allocation(_st().rt, dptr) if dptr else None
    if a is None:
        _raise(hipError_t.hipErrorNotFound, f"no allocation contains {int(dptr):#x}")
    return a.base, a.size


@_api
def hipMemPtrGetInfo(ptr) -> int:
    """Bytes of the allocation that contains ``ptr`` (hdemu's size: a whole multiple of 256 bytes);
    a pointer no allocation contains is hipErrorInvalidValue, as in CLR."""
    a = _allocation(_st().rt, ptr) if _int(ptr) and ptr else None
    if a is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr!r} is not a pointer into a live allocation")
    return a.size
