"""Memory: device and pinned host allocations, ``host_array``, memcpy and memset (sync and async).

Pointers are ints (device addresses). Host buffers are numpy arrays (pageable memory) or pointers
returned by ``hipHostMalloc`` (pinned, fine-grained: ``host_array(ptr, dtype, count)`` gives a numpy
view of them).
"""
from __future__ import annotations

import enum

import numpy as np

from shm_layout import layouts as L

from ..hsa import HsaError
from ._capture_rules import check_unsafe
from ._context import _current_device, _get_stream, _st, _synchronize_device
from ._errors import _api, _from_hsa, _raise, hipError_t

__all__ = ["hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree", "host_array", "hipMemcpyKind",
           "hipMemcpyHostToHost", "hipMemcpyHostToDevice", "hipMemcpyDeviceToHost", "hipMemcpyDeviceToDevice",
           "hipMemcpyDefault", "hipMemcpy", "hipMemcpyAsync", "hipMemset", "hipMemsetAsync"]


# -- allocations -----------------------------------------------------------------------------------
@_api
def hipMalloc(size: int) -> int:
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a non-negative int, not {size!r}")
    check_unsafe("hipMalloc")
    if size == 0:
        return 0
    return _st().rt.allocate(_current_device(), int(size), L.ALLOC_DEVICE)


@_api
def hipFree(ptr: int) -> None:
    """Synchronises the device that owns the allocation (as HIP does), then frees it."""
    if not ptr:
        return
    check_unsafe("hipFree")
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipMalloc")
    _synchronize_device(a.agent)
    rt.free(ptr)


@_api
def hipHostMalloc(size: int, flags: int = 0) -> int:
    if not isinstance(size, (int, np.integer)) or size <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a positive int, not {size!r}")
    return _st().rt.allocate(None, int(size), L.ALLOC_HOST)


@_api
def hipHostFree(ptr: int) -> None:
    if not ptr:
        return
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent >= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipHostMalloc")
    rt.free(ptr)


def host_array(ptr: int, dtype, count: int) -> np.ndarray:
    """A numpy view of ``count`` elements of pinned host memory at ``ptr`` (from hipHostMalloc)."""
    dt = np.dtype(dtype)
    try:
        return _st().rt.host_view(ptr, count * dt.itemsize).view(dt)
    except HsaError as exc:
        raise _from_hsa(exc) from exc


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
        for a in range(topo.n_agents):
            if L.device_base(a) <= p < L.device_base(a) + topo.memory_bytes:
                table, kind = rt.device_tables[a], "device"
                break
        else:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} {p:#x} is not a device or pinned host pointer")
    hit = table.lookup(p)
    if hit is None or p + size > hit[0] + hit[1]:
        _raise(hipError_t.hipErrorInvalidValue,
               f"{what} [{p:#x}, +{size}) is not inside a live allocation")
    return kind, p


_KIND_OK = {
    hipMemcpyKind.hipMemcpyHostToHost: ({"pageable", "pinned"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyHostToDevice: ({"device"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyDeviceToHost: ({"pageable", "pinned"}, {"device"}),
    hipMemcpyKind.hipMemcpyDeviceToDevice: ({"device"}, {"device"}),
}


def _memcpy(dst, src, size: int, kind, stream, sync: bool):
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sizeBytes must be a non-negative int, not {size!r}")
    try:
        kind = hipMemcpyKind(kind)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"kind must be a hipMemcpyKind, not {kind!r}")
    s = _get_stream(stream)
    dk, d = _classify(dst, size, "dst")
    sk, sp = _classify(src, size, "src")
    if kind != hipMemcpyKind.hipMemcpyDefault:
        okd, oks = _KIND_OK[kind]
        if dk not in okd or sk not in oks:
            _raise(hipError_t.hipErrorInvalidMemcpyDirection,
                   f"{kind.name} cannot copy from {sk} memory to {dk} memory")
    if size == 0:
        return
    v = s.vgpu
    if s.capture is not None:
        return s.capture.add_memcpy(s, dst, src, size, dk, sk)
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
            v.copy_from_host(d, sp[:size])
    else:
        sig = v.copy(d, sp, size)
        if sync:
            v.sync_signal(sig)
        else:
            v.flush()


@_api
def hipMemcpy(dst, src, sizeBytes: int, kind=hipMemcpyDefault) -> None:
    check_unsafe("hipMemcpy")
    _memcpy(dst, src, sizeBytes, kind, None, sync=True)


@_api
def hipMemcpyAsync(dst, src, sizeBytes: int, kind=hipMemcpyDefault, stream=None) -> None:
    _memcpy(dst, src, sizeBytes, kind, stream, sync=False)


# -- fills -----------------------------------------------------------------------------------------
def _memset(dst, value, size, stream, sync):
    if not isinstance(value, (int, np.integer)):
        _raise(hipError_t.hipErrorInvalidValue, f"value must be an int, not {value!r}")
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sizeBytes must be a non-negative int, not {size!r}")
    dk, d = _classify(dst, size, "dst")
    if dk == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, "hipMemset needs a device or pinned host pointer")
    if size == 0:
        return
    s = _get_stream(stream)
    if s.capture is not None:
        return s.capture.add_memset(s, d, int(value) & 0xFF, size)
    sig = s.vgpu.fill(d, int(value) & 0xFF, size, 1)
    if sync:
        s.vgpu.sync_signal(sig)
    else:
        s.vgpu.flush()


@_api
def hipMemset(dst: int, value: int, sizeBytes: int) -> None:
    check_unsafe("hipMemset")
    _memset(dst, value, sizeBytes, None, True)


@_api
def hipMemsetAsync(dst: int, value: int, sizeBytes: int, stream=None) -> None:
    _memset(dst, value, sizeBytes, stream, False)
