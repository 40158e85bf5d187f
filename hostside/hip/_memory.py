"""Memory: device and pinned host allocations, ``host_array``, pointer attributes and memory info,
memcpy (with a kind, or the fixed-direction HtoD/DtoH/DtoD calls) and memset (bytes, or 8/16/32-bit
elements: hipMemsetD8/D16/D32), sync and async.

Pointers are ints (device addresses). Host buffers are numpy arrays (pageable memory) or pointers
returned by ``hipHostMalloc`` (pinned, fine-grained: ``host_array(ptr, dtype, count)`` gives a numpy
view of them).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from shm_layout import layouts as L

from ..hsa import HsaError
from ._capture_rules import check_unsafe, implicit_capture_check
from ._context import _current_device, _get_stream, _null_stream, _peek_stream, _st, _synchronize_device
from ._errors import _api, _from_hsa, _raise, hipError_t

__all__ = ["hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree", "host_array", "hipMemcpyKind",
           "hipMemcpyHostToHost", "hipMemcpyHostToDevice", "hipMemcpyDeviceToHost", "hipMemcpyDeviceToDevice",
           "hipMemcpyDefault", "hipMemcpy", "hipMemcpyAsync", "hipMemset", "hipMemsetAsync",
           "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemcpyDtoD", "hipMemcpyHtoDAsync", "hipMemcpyDtoHAsync",
           "hipMemcpyDtoDAsync", "hipMemsetD8", "hipMemsetD16", "hipMemsetD32", "hipMemsetD8Async",
           "hipMemsetD16Async", "hipMemsetD32Async", "hipMemoryType", "hipMemoryTypeUnregistered",
           "hipMemoryTypeHost", "hipMemoryTypeDevice", "hipMemoryTypeManaged", "hipMemoryTypeArray",
           "hipMemoryTypeUnified", "hipInvalidDeviceId", "hipPointerAttribute_t", "hipPointerGetAttributes",
           "hipMemGetInfo", "hipMallocHost", "hipHostAlloc", "hipFreeHost", "hipMemcpyWithStream", "hipMemcpyPeer",
           "hipMemcpyPeerAsync", "hipHostMallocDefault", "hipHostMallocPortable", "hipHostMallocMapped",
           "hipHostMallocWriteCombined", "hipHostMallocUncached", "hipHostMallocNumaUser", "hipHostMallocCoherent",
           "hipHostMallocNonCoherent"]


# -- allocations -----------------------------------------------------------------------------------
@_api
def hipMalloc(size: int) -> int:
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a non-negative int, not {size!r}")
    check_unsafe("hipMalloc")
    if size == 0:
        return 0
    return _st().rt.allocate(_current_device(), int(size), L.ALLOC_DEVICE)


hipDeviceMallocDefault = 0x0
hipDeviceMallocFinegrained = 0x1
hipMallocSignalMemory = 0x2
hipDeviceMallocUncached = 0x3


@_api
def hipExtMallocWithFlags(size: int, flags: int = hipDeviceMallocDefault) -> int:
    """hipMalloc with an allocation flag: hipDeviceMallocDefault, Finegrained or Uncached (all one kind of
    memory here: every device allocation is coherent for the emulated device), or hipMallocSignalMemory:
    8 bytes, zeroed, for hipStreamWaitValue / hipStreamWriteValue, in fine-grained system memory as
    CLR's (the value of an HSA signal: the host reads and writes it directly, ``host_array``); any
    other size, 0 included, is hipErrorInvalidValue (as CLR, which checks ``sizeBytes != 8``). With the
    other flags size 0 allocates nothing and returns 0; any other flag is hipErrorInvalidValue."""
    if flags not in (hipDeviceMallocDefault, hipDeviceMallocFinegrained, hipMallocSignalMemory,
                     hipDeviceMallocUncached) or isinstance(flags, bool):
        _raise(hipError_t.hipErrorInvalidValue, f"hipExtMallocWithFlags: flags must be hipDeviceMallocDefault, "
                                                f"Finegrained, Uncached or hipMallocSignalMemory, not {flags!r}")
    if flags == hipMallocSignalMemory and size != 8:
        _raise(hipError_t.hipErrorInvalidValue, f"hipExtMallocWithFlags: signal memory is 8 bytes, not {size!r}")
    if flags != hipMallocSignalMemory:
        return hipMalloc(size)
    ptr = hipHostMalloc(size)
    if ptr:
        rt = _st().rt
        rt.host_view(ptr, 8)[:] = 0                        # a signal starts at 0
        _signal_memory(rt).add(ptr)                        # freed by hipFree, as CLR's
    return ptr


def _signal_memory(rt) -> set:
    """The bases of this runtime's hipMallocSignalMemory allocations (host-pool memory hipFree frees)."""
    d = getattr(rt, "_hip_signal_memory", None)
    if d is None:
        d = rt._hip_signal_memory = set()
    return d


def _freed_ptr(ptr, api: str) -> int:
    """``ptr`` of a free call as an int (0, or None: nothing to free, as for nullptr); anything but
    an integer is hipErrorInvalidValue."""
    if ptr is None:
        return 0
    if isinstance(ptr, bool) or not isinstance(ptr, (int, np.integer)):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: ptr must be a pointer (int), not {ptr!r}")
    return int(ptr)


@_api
def hipFree(ptr: int) -> None:
    """Synchronises the device that owns the allocation (as HIP does), then frees it. A null
    pointer frees nothing."""
    ptr = _freed_ptr(ptr, "hipFree")
    if not ptr:
        return
    check_unsafe("hipFree")
    rt = _st().rt
    a = rt.pointer_info(ptr)
    managed = _managed(rt).get(ptr)
    signal = ptr in _signal_memory(rt)
    if a is None or a.base != ptr or (a.agent < 0 and managed is None and not signal):
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipMalloc or hipMallocManaged")
    _synchronize_device(managed[0] if managed is not None else _current_device() if signal else a.agent)
    rt.free(ptr)
    _managed(rt).pop(ptr, None)
    _signal_memory(rt).discard(ptr)


#: hipHostMalloc's flags (hip_runtime_api.h): Default 0, Portable 1, Mapped 2, WriteCombined 4,
#: Uncached 0x10000000, NumaUser 0x20000000, Coherent 0x40000000, NonCoherent 0x80000000
hipHostMallocDefault, hipHostMallocPortable, hipHostMallocMapped, hipHostMallocWriteCombined = 0, 1, 2, 4
hipHostMallocUncached, hipHostMallocNumaUser = 0x10000000, 0x20000000
hipHostMallocCoherent, hipHostMallocNonCoherent = 0x40000000, 0x80000000
_HOST_MALLOC_FLAGS = (hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined | hipHostMallocUncached
                      | hipHostMallocNumaUser | hipHostMallocCoherent | hipHostMallocNonCoherent)


@_api
def hipHostMalloc(size: int, flags: int = 0) -> int:
    """Pinned, fine-grained host memory (every flag is accepted and changes nothing: the host pool is
    coherent system memory). Size 0 gives the null pointer, as HIP does."""
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a non-negative int, not {size!r}")
    if (not isinstance(flags, (int, np.integer)) or isinstance(flags, bool) or not 0 <= flags < 2**32
            or flags & ~_HOST_MALLOC_FLAGS):
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be an OR of the hipHostMalloc* flags, not {flags!r}")
    if flags & hipHostMallocCoherent and flags & hipHostMallocNonCoherent:
        _raise(hipError_t.hipErrorInvalidValue, "hipHostMallocCoherent and hipHostMallocNonCoherent exclude each other")
    if size == 0:
        return 0
    rt = _st().rt
    ptr = rt.allocate(None, int(size), L.ALLOC_HOST)
    _host_info(rt)[ptr] = (_current_device(), int(flags))     # for hipPointerGetAttributes
    return ptr


def _managed(rt) -> dict:
    """base -> (device current at hipMallocManaged, size asked for), for this runtime's managed
    allocations (``_managed`` module): host-pool memory that copies accept on either side."""
    d = getattr(rt, "_hip_managed", None)
    if d is None:
        d = rt._hip_managed = {}
    return d


def _host_info(rt) -> dict:
    """base -> (device current at hipHostMalloc, its flags), for this runtime's pinned allocations."""
    d = getattr(rt, "_hip_host_info", None)
    if d is None:
        d = rt._hip_host_info = {}
    return d


@_api
def hipHostFree(ptr: int) -> None:
    """Synchronises the device that was current at hipHostMalloc (as CLR does: work in flight may
    still read or write the memory), then frees it. A null pointer frees nothing."""
    ptr = _freed_ptr(ptr, "hipHostFree")
    if not ptr:
        return
    check_unsafe("hipHostFree")
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent >= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipHostMalloc")
    info = _host_info(rt).get(ptr)
    _synchronize_device(info[0] if info else _current_device())
    rt.free(ptr)
    _host_info(rt).pop(ptr, None)
    _signal_memory(rt).discard(ptr)


@_api
def hipMallocHost(size: int) -> int:
    """The older name of hipHostMalloc(size, 0)."""
    return hipHostMalloc(size, 0)


@_api
def hipHostAlloc(size: int, flags: int = 0) -> int:
    """The older name of hipHostMalloc."""
    return hipHostMalloc(size, flags)


@_api
def hipFreeHost(ptr: int) -> None:
    """The older name of hipHostFree."""
    hipHostFree(ptr)


def host_array(ptr: int, dtype, count: int) -> np.ndarray:
    """A numpy view of ``count`` elements of pinned host memory at ``ptr`` (from hipHostMalloc)."""
    dt = np.dtype(dtype)
    try:
        return _st().rt.host_view(ptr, count * dt.itemsize).view(dt)
    except HsaError as exc:
        raise _from_hsa(exc) from exc


# -- pointer attributes and memory info --------------------------------------------------------------
class hipMemoryType(enum.IntEnum):
    """hipMemoryType as HIP >= 6.0 numbers it (cudaMemoryType-compatible, then AMD values)."""
    hipMemoryTypeUnregistered = 0
    hipMemoryTypeHost = 1
    hipMemoryTypeDevice = 2
    hipMemoryTypeManaged = 3
    hipMemoryTypeArray = 10
    hipMemoryTypeUnified = 11


hipMemoryTypeUnregistered = hipMemoryType.hipMemoryTypeUnregistered
hipMemoryTypeHost = hipMemoryType.hipMemoryTypeHost
hipMemoryTypeDevice = hipMemoryType.hipMemoryTypeDevice
hipMemoryTypeManaged = hipMemoryType.hipMemoryTypeManaged
hipMemoryTypeArray = hipMemoryType.hipMemoryTypeArray
hipMemoryTypeUnified = hipMemoryType.hipMemoryTypeUnified
#: The ``device`` of an unregistered pointer's attributes (hip_runtime_api.h's hipInvalidDeviceId).
hipInvalidDeviceId = -2


@dataclass
class hipPointerAttribute_t:
    """What hipPointerGetAttributes reports; pointers are ints (0 is nullptr)."""
    type: hipMemoryType = hipMemoryTypeUnregistered
    device: int = hipInvalidDeviceId
    devicePointer: int = 0
    hostPointer: int = 0
    isManaged: int = 0
    allocationFlags: int = 0


@_api
def hipPointerGetAttributes(ptr) -> hipPointerAttribute_t:
    """The attributes of the allocation that contains ``ptr`` (its base or any byte inside it): a
    hipMalloc'ed pointer is hipMemoryTypeDevice on its device, a hipHostMalloc'ed one
    hipMemoryTypeHost with the device current at allocation, its flags, and the same address as host
    and device pointer (system memory is mapped for the device). A pointer hipMalloc/hipHostMalloc did
    not return (a numpy array, freed or runtime-internal memory) is hipMemoryTypeUnregistered with
    device hipInvalidDeviceId, as HIP >= 6.0 reports it (ROCm 5 failed with hipErrorInvalidValue).
    A null pointer is hipErrorInvalidValue."""
    if isinstance(ptr, (bytes, bytearray, memoryview, np.ndarray)):
        return hipPointerAttribute_t()                       # pageable host memory: not registered
    if not isinstance(ptr, (int, np.integer)) or isinstance(ptr, bool):
        _raise(hipError_t.hipErrorInvalidValue, f"ptr must be a pointer (int) or a host buffer, not {ptr!r}")
    if not ptr:
        _raise(hipError_t.hipErrorInvalidValue, "ptr is a null pointer")
    ptr = int(ptr)
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.kind not in (L.ALLOC_DEVICE, L.ALLOC_HOST):
        return hipPointerAttribute_t()
    if a.agent >= 0:
        return hipPointerAttribute_t(hipMemoryTypeDevice, a.agent, ptr, 0, 0, 0)
    if a.base in _managed(rt):
        return hipPointerAttribute_t(hipMemoryTypeManaged, _managed(rt)[a.base][0], ptr, ptr, 1, 0)
    device, flags = _host_info(rt).get(a.base, (0, 0))
    return hipPointerAttribute_t(hipMemoryTypeHost, device, ptr, ptr, 0, flags)


@_api
def hipMemGetInfo() -> tuple[int, int]:
    """(free, total) bytes of the current device's memory. The allocation table of the device is
    shared by every process on the platform, so ``free`` counts their allocations too (as on a GPU);
    allocations are whole multiples of 256 bytes."""
    rt = _st().rt
    stats = rt.device_tables[_current_device()].statistics()
    return stats.capacity_bytes - stats.used_bytes, stats.capacity_bytes


# -- copies ----------------------------------------------------------------------------------------
class hipMemcpyKind(enum.IntEnum):
    hipMemcpyHostToHost = 0
    hipMemcpyHostToDevice = 1
    hipMemcpyDeviceToHost = 2
    hipMemcpyDeviceToDevice = 3
    hipMemcpyDefault = 4


hipMemcpyHostToHost = hipMemcpyKind.hipMemcpyHostToHost
hipMemcpyHostToDevice = hipMemcpyKind.hipMemcpyHostToDevice
hipMemcpyDeviceToHost = hipMemcpyKind.hipMemcpyDeviceToHost
hipMemcpyDeviceToDevice = hipMemcpyKind.hipMemcpyDeviceToDevice
hipMemcpyDefault = hipMemcpyKind.hipMemcpyDefault


def _classify(p, size: int, what: str):
    """('pageable', u8 array) | ('pinned', addr) | ('device', addr), with bounds checked."""
    if isinstance(p, (bytes, bytearray, memoryview, np.ndarray)):
        arr = np.frombuffer(p, dtype=np.uint8) if not isinstance(p, np.ndarray) else p
        if isinstance(p, np.ndarray) and not p.flags.c_contiguous:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} host array must be C-contiguous")
        arr = arr.reshape(-1).view(np.uint8)
        if size > arr.nbytes:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} host buffer has {arr.nbytes} bytes, copy needs {size}")
        return "pageable", arr
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        _raise(hipError_t.hipErrorInvalidValue,
               f"{what} must be a device pointer (int) or a host buffer, not {type(p).__name__}")
    p = int(p)
    rt = _st().rt
    topo = rt.pm.topo
    if L.HOST_POOL_BASE <= p < L.HOST_POOL_BASE + topo.host_pool_bytes:
        table, kind = rt.host_table, "pinned"
    else:
        a = _device_of(p)
        if a is None:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} {p:#x} is not a device or pinned host pointer")
        table, kind = rt.device_tables[a], "device"
    hit = table.lookup(p)
    if hit is None or p + size > hit[0] + hit[1]:
        _raise(hipError_t.hipErrorInvalidValue,
               f"{what} [{p:#x}, +{size}) is not inside a live allocation")
    return kind, p


def _device_of(p: int):
    """The device whose memory aperture holds address ``p``, or None (not device memory)."""
    topo = _st().rt.pm.topo
    for a in range(topo.n_agents):
        if L.device_base(a) <= p < L.device_base(a) + topo.memory_bytes:
            return a
    return None


def _memory_device_stream(s, devices: set):
    """Where a copy runs (CLR's ``ihipMemcpyCommand``): one whose device memory is all on a device
    other than the stream's goes on that device's null stream, after the stream's last command (so
    after the work queued there too); a peer copy (two devices) stays on the stream."""
    if len(devices) != 1 or next(iter(devices)) == s.device:
        return s
    null_x = _null_stream(_st(), next(iter(devices)))
    s.point.wait_from(null_x.vgpu)
    return null_x


_KIND_OK = {
    hipMemcpyKind.hipMemcpyHostToHost: ({"pageable", "pinned"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyHostToDevice: ({"device"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyDeviceToHost: ({"pageable", "pinned"}, {"device"}),
    hipMemcpyKind.hipMemcpyDeviceToDevice: ({"device"}, {"device"}),
}


def _kind_allows(kind, dk: str, d, sk: str, sp) -> bool:
    """``kind`` (not hipMemcpyDefault) fits a copy from ``sk`` memory at ``sp`` to ``dk`` memory at
    ``d`` (``_classify``'s kinds and values); managed memory (pinned, from hipMallocManaged) fits
    either side of any kind, as in HIP."""
    okd, oks = _KIND_OK[kind]
    if dk in okd and sk in oks:
        return True
    rt = _st().rt

    def managed(k, p):
        a = rt.pointer_info(p) if k == "pinned" else None
        return a is not None and a.base in _managed(rt)
    return (dk in okd or managed(dk, d)) and (sk in oks or managed(sk, sp))


def _memcpy(dst, src, size: int, kind, stream, sync: bool):
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sizeBytes must be a non-negative int, not {size!r}")
    try:
        kind = hipMemcpyKind(kind)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"kind must be a hipMemcpyKind, not {kind!r}")
    s = _get_stream(stream)
    if size == 0:       # CLR's ihipMemcpy returns before it looks at the pointers (nullptr included)
        return
    dk, d = _classify(dst, size, "dst")
    sk, sp = _classify(src, size, "src")
    if kind != hipMemcpyKind.hipMemcpyDefault and not _kind_allows(kind, dk, d, sk, sp):
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"{kind.name} cannot copy from {sk} memory to {dk} memory")
    if s.capture is not None:
        return s.capture.add_memcpy(s, dst, src, size, dk, sk)
    orig = s
    s = _memory_device_stream(s, {_device_of(p) for k, p in ((dk, d), (sk, sp)) if k == "device"})
    v = s.vgpu
    rt = _st().rt
    if dk == "pageable" and sk == "pageable":
        v.synchronize()
        d[:size] = sp[:size]
    elif dk == "pageable":
        if sk == "pinned":
            v.synchronize()
            d[:size] = rt.host_view(sp, size)
        else:
            v.copy_to_host(d[:size], sp)
    elif sk == "pageable":
        if dk == "pinned":
            v.synchronize()
            rt.host_view(d, size)[:] = sp[:size]
        else:
            v.copy_from_host(d, sp[:size], wait=sync)
    elif dk == "pinned" and sk == "pinned":     # host to host: done by the host, after the stream's work
        v.synchronize()
        rt.host_view(d, size)[:] = rt.host_view(sp, size)
    else:
        sig = v.copy(d, sp, size)
        if sync:
            v.sync_signal(sig)
        else:
            v.flush()
    if s is not orig:       # the stream's later work follows the copy (CLR: a marker on the stream)
        s.point.wait_from(orig.vgpu)


@_api
def hipMemcpy(dst, src, sizeBytes: int, kind=hipMemcpyDefault) -> None:
    implicit_capture_check()        # the legacy stream during a capture: hipErrorStreamCaptureImplicit
    check_unsafe("hipMemcpy")
    _memcpy(dst, src, sizeBytes, kind, None, sync=True)


@_api
def hipMemcpyAsync(dst, src, sizeBytes: int, kind=hipMemcpyDefault, stream=None) -> None:
    _memcpy(dst, src, sizeBytes, kind, stream, sync=False)


@_api
def hipMemcpyWithStream(dst, src, sizeBytes: int, kind=hipMemcpyDefault, stream=None) -> None:
    """A copy on ``stream`` that returns once it is done (hipMemcpy on a stream of your choice)."""
    check_unsafe("hipMemcpyWithStream")
    _memcpy(dst, src, sizeBytes, kind, stream, sync=True)
    s = _peek_stream(stream)
    if s.capture is None:
        s.vgpu.synchronize()


def _peer_args(dstDevice, srcDevice, sizeBytes):
    n = len(_st().rt.agents)
    for name, d in (("dstDevice", dstDevice), ("srcDevice", srcDevice)):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 0 <= d < n:
            _raise(hipError_t.hipErrorInvalidDevice, f"{name} must be in [0, {n}), not {d!r}")


@_api
def hipMemcpyPeer(dst: int, dstDevice: int, src: int, srcDevice: int, sizeBytes: int) -> None:
    """Device-to-device copy between two devices' memory: one SDMA packet on the current device's null
    stream (the emulated devices share one address space). Host-asynchronous, as in CLR
    (``ihipMemcpy(..., isHostAsync=true, isGPUAsync=false)``): it returns once the copy is queued,
    and later work on ``dstDevice``'s null stream (and so on its blocking streams) waits for it."""
    _peer_args(dstDevice, srcDevice, sizeBytes)
    check_unsafe("hipMemcpyPeer")
    _memcpy(dst, src, sizeBytes, hipMemcpyKind.hipMemcpyDeviceToDevice, None, sync=False)
    cur = _current_device()
    if sizeBytes and dstDevice != cur:
        st = _st()
        _null_stream(st, cur).point.wait_from(_null_stream(st, dstDevice).vgpu)


@_api
def hipMemcpyPeerAsync(dst: int, dstDevice: int, src: int, srcDevice: int, sizeBytes: int, stream=None) -> None:
    _peer_args(dstDevice, srcDevice, sizeBytes)
    _memcpy(dst, src, sizeBytes, hipMemcpyKind.hipMemcpyDeviceToDevice, stream, sync=False)


# the fixed-direction copies: what each side must be; another kind of pointer is hipErrorInvalidValue
_HOST_SIDE, _DEVICE_SIDE = ("pageable", "pinned"), ("device",)
_FIXED = {"HtoD": (hipMemcpyKind.hipMemcpyHostToDevice, _DEVICE_SIDE, _HOST_SIDE),
          "DtoH": (hipMemcpyKind.hipMemcpyDeviceToHost, _HOST_SIDE, _DEVICE_SIDE),
          "DtoD": (hipMemcpyKind.hipMemcpyDeviceToDevice, _DEVICE_SIDE, _DEVICE_SIDE)}


def _memcpy_fixed(api, direction, dst, src, size, stream, sync):
    kind, okd, oks = _FIXED[direction]
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: sizeBytes must be a non-negative int, not {size!r}")
    for what, p, ok in () if size == 0 else (("dst", dst, okd), ("src", src, oks)):
        k, _ = _classify(p, size, f"{api}: {what}")
        if k not in ok:
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{api}: {what} must be {'a device' if ok is _DEVICE_SIDE else 'a host'} pointer, "
                   f"not {k} memory")
    _memcpy(dst, src, size, kind, stream, sync)


@_api
def hipMemcpyHtoD(dst: int, src, sizeBytes: int) -> None:
    """Host (pageable or pinned) to device; synchronous like hipMemcpy."""
    check_unsafe("hipMemcpyHtoD")
    _memcpy_fixed("hipMemcpyHtoD", "HtoD", dst, src, sizeBytes, None, True)


@_api
def hipMemcpyDtoH(dst, src: int, sizeBytes: int) -> None:
    check_unsafe("hipMemcpyDtoH")
    _memcpy_fixed("hipMemcpyDtoH", "DtoH", dst, src, sizeBytes, None, True)


@_api
def hipMemcpyDtoD(dst: int, src: int, sizeBytes: int) -> None:
    check_unsafe("hipMemcpyDtoD")
    _memcpy_fixed("hipMemcpyDtoD", "DtoD", dst, src, sizeBytes, None, True)


@_api
def hipMemcpyHtoDAsync(dst: int, src, sizeBytes: int, stream=None) -> None:
    _memcpy_fixed("hipMemcpyHtoDAsync", "HtoD", dst, src, sizeBytes, stream, False)


@_api
def hipMemcpyDtoHAsync(dst, src: int, sizeBytes: int, stream=None) -> None:
    _memcpy_fixed("hipMemcpyDtoHAsync", "DtoH", dst, src, sizeBytes, stream, False)


@_api
def hipMemcpyDtoDAsync(dst: int, src: int, sizeBytes: int, stream=None) -> None:
    _memcpy_fixed("hipMemcpyDtoDAsync", "DtoD", dst, src, sizeBytes, stream, False)


# -- fills -----------------------------------------------------------------------------------------
def _memset(dst, value, size, stream, sync, width=1, api="hipMemset", fit=False):
    """Fill ``size`` bytes at ``dst`` with ``value`` as ``width``-byte elements. hipMemset's value is
    an int of which the low byte is used; the hipMemsetD* values must fit their element width
    (``fit``; signed or unsigned: -2**(8w-1) <= value < 2**(8w))."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: value must be an int, not {value!r}")
    if fit:
        bits = 8 * width
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{api}: value {value!r} does not fit a {bits}-bit element")
    value = int(value) & ((1 << (8 * width)) - 1)
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: sizeBytes must be a non-negative int, not {size!r}")
    if size == 0:       # CLR's ihipMemset returns before it looks at dst (nullptr included)
        return
    dk, d = _classify(dst, size, f"{api}: dst")
    if dk == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, f"{api} needs a device or pinned host pointer")
    s = _get_stream(stream)
    if s.capture is not None:
        return s.capture.add_memset(s, d, value, size, width)
    sig = s.vgpu.fill(d, value, size // width, width)
    if sync and dk == "pinned":     # as in HIP/CUDA: a synchronous memset waits only for a host target;
        s.vgpu.sync_signal(sig)     # on device memory it is ordered on the legacy stream, not waited for
    else:
        s.vgpu.flush()


@_api
def hipMemset(dst: int, value: int, sizeBytes: int) -> None:
    implicit_capture_check()        # the legacy stream during a capture: hipErrorStreamCaptureImplicit
    check_unsafe("hipMemset")
    _memset(dst, value, sizeBytes, None, True, 1, "hipMemset")


@_api
def hipMemsetAsync(dst: int, value: int, sizeBytes: int, stream=None) -> None:
    _memset(dst, value, sizeBytes, stream, False, api="hipMemsetAsync")


def _count(api, count, width) -> int:
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: count must be a non-negative int, not {count!r}")
    return int(count) * width


@_api
def hipMemsetD8(dst: int, value: int, count: int) -> None:
    """Fill ``count`` bytes with ``value`` (synchronous)."""
    check_unsafe("hipMemsetD8")
    _memset(dst, value, _count("hipMemsetD8", count, 1), None, True, 1, "hipMemsetD8", fit=True)


@_api
def hipMemsetD16(dst: int, value: int, count: int) -> None:
    """Fill ``count`` 16-bit elements with ``value`` (synchronous)."""
    check_unsafe("hipMemsetD16")
    _memset(dst, value, _count("hipMemsetD16", count, 2), None, True, 2, "hipMemsetD16", fit=True)


@_api
def hipMemsetD32(dst: int, value: int, count: int) -> None:
    """Fill ``count`` 32-bit elements with ``value`` (synchronous)."""
    check_unsafe("hipMemsetD32")
    _memset(dst, value, _count("hipMemsetD32", count, 4), None, True, 4, "hipMemsetD32", fit=True)


@_api
def hipMemsetD8Async(dst: int, value: int, count: int, stream=None) -> None:
    _memset(dst, value, _count("hipMemsetD8Async", count, 1), stream, False, 1, "hipMemsetD8Async", fit=True)


@_api
def hipMemsetD16Async(dst: int, value: int, count: int, stream=None) -> None:
    _memset(dst, value, _count("hipMemsetD16Async", count, 2), stream, False, 2, "hipMemsetD16Async", fit=True)


@_api
def hipMemsetD32Async(dst: int, value: int, count: int, stream=None) -> None:
    _memset(dst, value, _count("hipMemsetD32Async", count, 4), stream, False, 4, "hipMemsetD32Async", fit=True)
