"""3-D memory: hipMalloc3D, hipMemset3D / hipMemset3DAsync, hipMemcpy3D / hipMemcpy3DAsync and their
structs (hipExtent, hipPos, hipPitchedPtr, hipMemcpy3DParms, the make_* helpers), on top of the 2-D
paths of ``_memory2d``.

A pitched pointer names ``depth`` slices of ``ysize`` rows, row ``y`` of slice ``z`` at
``ptr + (z * ysize + y) * pitch`` (a slice is ``pitch * ysize`` bytes); a region of ``extent`` is
``extent.depth`` slices of ``extent.height`` rows of ``extent.width`` bytes, starting at a position
(``hipPos``: x in bytes, y in rows, z in slices). Only those bytes are read or written. When a side's
slices follow each other without a gap (``ysize`` equals the height) the region is one 2-D region of
``height * depth`` rows; otherwise it is one 2-D region per slice, in slice order. A pointer is an
int (device, pinned or managed memory) or, for a copy's host side, a numpy array (pageable memory).
hipArray sides are not supported (hdemu has no image memory and reports ImageSupport 0).

Errors follow CLR and hip-tests' expectations: a zero extent does nothing (whatever the pointers); a
null pointer, a pitch over memPitch, a region past its allocation or a pitch under the width of a
fill is hipErrorInvalidValue, a copy's pitch under its width hipErrorInvalidPitchValue, a bad kind
hipErrorInvalidMemcpyDirection. Synchronisation is the 2-D paths': hipMemcpy3D returns when the copy
is done, hipMemset3D as hipMemset (waited for only when the target is pinned host memory). An
asynchronous copy from pageable memory to the device whose slices are not one run of rows is staged
whole when it fits (``_memory2d._staged_slices``: one rectangular packet a slice from one staging
buffer), else copied slice by slice.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from shm_layout import layouts as L

from ._capture_rules import check_unsafe, implicit_capture_check
from ._context import _current_device, _get_stream, _st
from ._errors import _api, _raise, hipError_t
from ._memory import _classify, hipMemcpyDefault, hipMemcpyKind
from ._memory2d import _MAX_PITCH, PITCH_ALIGNMENT, _memcpy2d, _memset2d, _size, _staged_slices

__all__ = ["hipExtent", "hipPos", "hipPitchedPtr", "hipMemcpy3DParms", "make_hipExtent", "make_hipPos",
           "make_hipPitchedPtr", "hipMalloc3D", "hipMemset3D", "hipMemset3DAsync", "hipMemcpy3D",
           "hipMemcpy3DAsync"]


@dataclass
class hipExtent:
    """Width in bytes, height in rows, depth in slices."""
    width: int = 0
    height: int = 0
    depth: int = 0


@dataclass
class hipPos:
    """x in bytes, y in rows, z in slices."""
    x: int = 0
    y: int = 0
    z: int = 0


@dataclass
class hipPitchedPtr:
    """``ptr`` (an int, or a numpy array for pageable host memory), the row pitch in bytes, and the
    width (bytes) and height (rows) of the allocation's slices."""
    ptr: object = 0
    pitch: int = 0
    xsize: int = 0
    ysize: int = 0


@dataclass
class hipMemcpy3DParms:
    """What hipMemcpy3D copies (hip_runtime_api.h's field order); ``srcArray``/``dstArray`` must be None."""
    srcArray: object = None
    srcPos: hipPos = field(default_factory=hipPos)
    srcPtr: hipPitchedPtr = field(default_factory=hipPitchedPtr)
    dstArray: object = None
    dstPos: hipPos = field(default_factory=hipPos)
    dstPtr: hipPitchedPtr = field(default_factory=hipPitchedPtr)
    extent: hipExtent = field(default_factory=hipExtent)
    kind: int = hipMemcpyDefault


def make_hipExtent(w: int, h: int, d: int) -> hipExtent:
    return hipExtent(w, h, d)


def make_hipPos(x: int, y: int, z: int) -> hipPos:
    return hipPos(x, y, z)


def make_hipPitchedPtr(d, p: int, xsz: int, ysz: int) -> hipPitchedPtr:
    return hipPitchedPtr(d, p, xsz, ysz)


def _extent(api: str, extent) -> tuple[int, int, int]:
    if type(extent) is not hipExtent:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: extent must be a hipExtent, not {extent!r}")
    return (_size(extent.width, f"{api}: extent.width"), _size(extent.height, f"{api}: extent.height"),
            _size(extent.depth, f"{api}: extent.depth"))


def _null(p) -> bool:
    return p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, bool) and p == 0)


@_api
def hipMalloc3D(extent) -> hipPitchedPtr:
    """``extent.depth`` slices of ``extent.height`` rows of ``extent.width`` bytes of device memory,
    each row a pitch apart (the width rounded up to PITCH_ALIGNMENT, as hipMallocPitch). A zero
    dimension gives a null ``ptr`` (and pitch 0), as CLR does."""
    w, h, d = _extent("hipMalloc3D", extent)
    check_unsafe("hipMalloc3D")
    if w == 0 or h == 0 or d == 0:
        return hipPitchedPtr(0, 0, w, h)
    pitch = -(-w // PITCH_ALIGNMENT) * PITCH_ALIGNMENT
    return hipPitchedPtr(_st().rt.allocate(_current_device(), pitch * h * d, L.ALLOC_DEVICE), pitch, w, h)


def _at(p, off: int):
    """``p`` advanced by ``off`` bytes: an int pointer, or a u8 view of a host array from ``off`` on."""
    if isinstance(p, (int, np.integer)):
        return int(p) + off
    return _classify(p, 0, "host buffer")[1][off:]


def _slices(pp: hipPitchedPtr, h: int, d: int) -> tuple[int, bool]:
    """(slice pitch, whether the ``d`` slices of ``h`` rows are one run of rows)."""
    slice_pitch = pp.pitch * pp.ysize
    return slice_pitch, d == 1 or slice_pitch == pp.pitch * h


def _memset3d(api: str, pp, value, extent, stream, sync: bool) -> None:
    if type(pp) is not hipPitchedPtr:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: pitchedDevPtr must be a hipPitchedPtr, not {pp!r}")
    w, h, d = _extent(api, extent)
    if w == 0 or h == 0 or d == 0:
        return
    pitch, ysize = _size(pp.pitch, f"{api}: pitch"), _size(pp.ysize, f"{api}: ysize")
    if _null(pp.ptr):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: pitchedDevPtr.ptr is a null pointer")
    if pitch < w:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: pitch {pitch} is smaller than extent.width {w}")
    if d > 1 and ysize < h:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: extent.height {h} is over the slices' {ysize} rows")
    slice_pitch, run = _slices(pp, h, d)
    kind, _p = _classify(pp.ptr, (d - 1) * slice_pitch + (h - 1) * pitch + w, f"{api}: pitchedDevPtr")
    if kind == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, f"{api} needs a device or pinned host pointer")
    if run:
        _memset2d(api, pp.ptr, pitch, value, w, h * d, stream, sync)
        return
    for z in range(d):
        _memset2d(api, int(pp.ptr) + z * slice_pitch, pitch, value, w, h, stream, sync)


@_api
def hipMemset3D(pitchedDevPtr, value: int, extent) -> None:
    """Fill ``extent`` of ``pitchedDevPtr`` with the low byte of ``value``, in the legacy stream's
    order (as hipMemset: waited for only when the target is pinned host memory)."""
    implicit_capture_check()
    check_unsafe("hipMemset3D")
    _memset3d("hipMemset3D", pitchedDevPtr, value, extent, None, True)


@_api
def hipMemset3DAsync(pitchedDevPtr, value: int, extent, stream=None) -> None:
    """hipMemset3D on ``stream``; during capture one memset node per row (or per run of rows)."""
    _memset3d("hipMemset3DAsync", pitchedDevPtr, value, extent, stream, False)


def _side(api: str, pp, pos, w: int, h: int, d: int, what: str):
    """(start of the region, pitch, slice pitch, one run of rows?) of one side, checked."""
    if type(pp) is not hipPitchedPtr or type(pos) is not hipPos:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {what}Ptr and {what}Pos must be a hipPitchedPtr and a hipPos")
    if _null(pp.ptr):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {what}Ptr.ptr is a null pointer")
    pitch, ysize = _size(pp.pitch, f"{api}: {what}Ptr.pitch"), _size(pp.ysize, f"{api}: {what}Ptr.ysize")
    x, y, z = (_size(pos.x, f"{api}: {what}Pos.x"), _size(pos.y, f"{api}: {what}Pos.y"),
               _size(pos.z, f"{api}: {what}Pos.z"))
    if pitch >= _MAX_PITCH:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {what}Ptr.pitch {pitch} is not under memPitch ({_MAX_PITCH})")
    if pitch < w:
        _raise(hipError_t.hipErrorInvalidPitchValue, f"{api}: {what}Ptr.pitch {pitch} is under extent.width {w}")
    if x + w > pitch:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {what}Pos.x {x} + extent.width {w} is over the pitch {pitch}")
    if d > 1 and y + h > ysize:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {what}Pos.y {y} + extent.height {h} is over the slices' "
                                                f"{ysize} rows")
    slice_pitch, run = _slices(pp, h, d)
    off = z * slice_pitch + y * pitch + x
    _classify(pp.ptr, off + (d - 1) * slice_pitch + (h - 1) * pitch + w, f"{api}: {what}Ptr")   # in bounds
    return _at(pp.ptr, off), pitch, slice_pitch, run


def _memcpy3d(api: str, p, stream, sync: bool) -> None:
    if type(p) is not hipMemcpy3DParms:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: p must be a hipMemcpy3DParms, not {p!r}")
    if p.srcArray is not None or p.dstArray is not None:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: hipArray sides are not supported (hdemu has no image memory)")
    try:
        kind = hipMemcpyKind(p.kind)
    except (ValueError, TypeError):
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"{api}: kind must be a hipMemcpyKind, not {p.kind!r}")
    w, h, d = _extent(api, p.extent)
    _get_stream(stream)                 # a bad stream is its error, even for an empty copy
    if w == 0 or h == 0 or d == 0:
        return
    dst, dpitch, dslice, drun = _side(api, p.dstPtr, p.dstPos, w, h, d, "dst")
    src, spitch, sslice, srun = _side(api, p.srcPtr, p.srcPos, w, h, d, "src")
    if sync and _classify(dst, 1, f"{api}: dst")[0] == "device" and _classify(src, 1, f"{api}: src")[0] == "device":
        sync = False        # device to device: host-asynchronous, as CLR's ihipMemcpyParam3D
    if drun and srun:
        _memcpy2d(api, dst, dpitch, src, spitch, w, h * d, kind, stream, sync)
        return
    if not sync and _staged_slices(api, dst, dpitch, dslice, src, spitch, sslice, w, h, d, kind, stream):
        return                          # from pageable memory, all slices staged at once
    for z in range(d):
        _memcpy2d(api, _at(dst, z * dslice), dpitch, _at(src, z * sslice), spitch, w, h, kind, stream, sync)


@_api
def hipMemcpy3D(p) -> None:
    """Copy ``p.extent`` from ``p.srcPtr`` at ``p.srcPos`` to ``p.dstPtr`` at ``p.dstPos``; either side
    may be device, pinned or managed memory or (host side) a numpy array. Synchronous, except from
    device memory to device memory: that copy is queued on the null stream and the call returns (as
    CLR's ihipMemcpyParam3D; later work on the null stream and blocking streams is ordered after it)."""
    implicit_capture_check()
    check_unsafe("hipMemcpy3D")
    _memcpy3d("hipMemcpy3D", p, None, True)


@_api
def hipMemcpy3DAsync(p, stream=None) -> None:
    """hipMemcpy3D on ``stream``, in its order; returns as hipMemcpy2DAsync does: at once for device
    and pinned sides; from a pageable host side to the device once the region is staged, when its bytes
    fit one staging buffer (1 MiB) and it has at most STAGED_SLICES (64) slices of separate rows; else
    slice by slice as hipMemcpy2DAsync copies each (a slice that fits a staging buffer is staged and
    takes one of the 8 buffers, so from the ninth slice on each waits for the oldest to land); to a
    pageable host side once the data is there."""
    _memcpy3d("hipMemcpy3DAsync", p, stream, False)
