"""Pitched (2-D) memory: hipMallocPitch, hipMemcpy2D / hipMemcpy2DAsync and hipMemset2D /
hipMemset2DAsync, on top of the 1-D paths of ``_memory``.

A 2-D region is ``height`` rows of ``width`` bytes, row ``r`` at ``base + r * pitch``; only those
bytes are read or written (the padding between rows is left alone). When both pitches equal the
width the region is one contiguous copy or fill. Otherwise a device-side copy or fill is one
rectangular SDMA packet (``SDMA_TYPE_COPY_RECT`` / ``FILL_RECT``: every row, a pitch apart), so a
region of any height takes one ring slot and an async call never waits for ring space; pageable host
memory goes through one staging step: a device-to-host copy reads the whole source span into a host
buffer and scatters the rows, a host-to-device copy gathers the rows into a pinned buffer and copies
them from there with one rectangular packet. An asynchronous host-to-device one whose rows fit a
staging buffer gathers them into the stream's staging buffer instead and returns once they are there
(``VirtualGPU.copy_rect_from_host``, as CLR's staged copies): the device copies them after the
stream's earlier work, the caller's array may change at once.
Host-to-host regions are copied by the host after the stream's earlier work, as the 1-D path does.
Errors follow CLR: a bad kind is hipErrorInvalidMemcpyDirection, width over a pitch
hipErrorInvalidPitchValue (checked after the zero-size return), a null or out-of-range pointer and
a pitch over memPitch hipErrorInvalidValue.
"""
from __future__ import annotations

import numpy as np

from shm_layout import layouts as L

from ..hsa import HsaError
from ._capture_rules import check_unsafe, implicit_capture_check
from ._context import _current_device, _get_stream, _st
from ._device import DEVICE_LIMITS
from ._errors import _api, _raise, hipError_t
from ._memory import _classify, _kind_allows, hipMemcpyDefault, hipMemcpyKind

__all__ = ["hipMallocPitch", "hipMemcpy2D", "hipMemcpy2DAsync", "hipMemset2D", "hipMemset2DAsync",
           "PITCH_ALIGNMENT"]

#: CLR rounds a pitch up to the device's imagePitchAlignment_ (256 bytes on ROCm devices)
PITCH_ALIGNMENT = 256
_MAX_PITCH = DEVICE_LIMITS["memPitch"]


def _size(v, what: str) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be a non-negative int, not {v!r}")
    return int(v)


@_api
def hipMallocPitch(width: int, height: int) -> tuple[int, int]:
    """(pointer, pitch): ``height`` rows of ``width`` bytes of device memory, each row starting a
    pitch apart (``width`` rounded up to PITCH_ALIGNMENT, 256 bytes, as CLR's image pitch alignment).
    A zero width or height gives (0, 0) (CLR returns a null pointer)."""
    width, height = _size(width, "width"), _size(height, "height")
    check_unsafe("hipMallocPitch")
    if width == 0 or height == 0:
        return 0, 0
    pitch = -(-width // PITCH_ALIGNMENT) * PITCH_ALIGNMENT
    return _st().rt.allocate(_current_device(), pitch * height, L.ALLOC_DEVICE), pitch


def _rows(buf: np.ndarray, pitch: int, width: int, height: int) -> np.ndarray:
    """A (height, width) view of the u8 array ``buf``, rows ``pitch`` apart."""
    return np.lib.stride_tricks.as_strided(buf, shape=(height, width), strides=(pitch, 1))


def _side(p, pitch: int, width: int, height: int, what: str):
    """(kind, handle) of one side of a 2-D copy, the whole span bounds-checked (hipErrorInvalidValue)."""
    if p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, bool) and p == 0):
        _raise(hipError_t.hipErrorInvalidValue, f"{what} is a null pointer")
    if pitch > _MAX_PITCH:
        _raise(hipError_t.hipErrorInvalidValue, f"{what} pitch {pitch} is over memPitch ({_MAX_PITCH})")
    return _classify(p, (height - 1) * pitch + width, what)


def _prepare2d(api, dst, dpitch, src, spitch, width, height, kind, stream):
    """A 2-D copy's checks, in CLR's order: None for a zero width or height, else (stream, dst kind,
    dst, src kind, src, dpitch, spitch, width, height) (``_classify``'s kinds and values, the sizes as
    ints)."""
    try:
        kind = hipMemcpyKind(kind)
    except (ValueError, TypeError):
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"{api}: kind must be a hipMemcpyKind, not {kind!r}")
    dpitch, spitch = _size(dpitch, f"{api}: dpitch"), _size(spitch, f"{api}: spitch")
    width, height = _size(width, f"{api}: width"), _size(height, f"{api}: height")
    s = _get_stream(stream)
    if width == 0 or height == 0:
        return None
    if width > dpitch or width > spitch:
        _raise(hipError_t.hipErrorInvalidPitchValue,
               f"{api}: width {width} is over a pitch (dpitch {dpitch}, spitch {spitch})")
    dk, d = _side(dst, dpitch, width, height, f"{api}: dst")
    sk, sp = _side(src, spitch, width, height, f"{api}: src")
    if kind != hipMemcpyKind.hipMemcpyDefault and not _kind_allows(kind, dk, d, sk, sp):
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"{api}: {kind.name} cannot copy from {sk} memory "
                                                          f"to {dk} memory")
    return s, dk, d, sk, sp, dpitch, spitch, width, height


def _memcpy2d(api, dst, dpitch, src, spitch, width, height, kind, stream, sync: bool) -> None:
    prep = _prepare2d(api, dst, dpitch, src, spitch, width, height, kind, stream)
    if prep is None:
        return
    s, dk, d, sk, sp, dpitch, spitch, width, height = prep
    flat = dpitch == width and spitch == width
    if s.capture is not None:           # one memcpy node per row (or one for a contiguous region)
        for r in range(1 if flat else height):
            n = width * height if flat else width
            dr = d[r * dpitch:r * dpitch + n] if dk == "pageable" else d + r * dpitch
            sr = sp[r * spitch:r * spitch + n] if sk == "pageable" else sp + r * spitch
            s.capture.add_memcpy(s, dr, sr, n, dk, sk)
        return
    v = s.vgpu
    rt = _st().rt
    if dk != "device" and sk != "device":          # host to host: by the host, after the stream's work
        v.synchronize()
        dv = d if dk == "pageable" else rt.host_view(d, (height - 1) * dpitch + width)
        sv = sp if sk == "pageable" else rt.host_view(sp, (height - 1) * spitch + width)
        _rows(dv, dpitch, width, height)[:] = _rows(sv, spitch, width, height)
        return
    if dk == "pageable":                           # device to pageable host: one read of the span
        if flat:
            v.copy_to_host(d[:width * height], sp)
            return
        tmp = np.empty((height - 1) * spitch + width, np.uint8)
        v.copy_to_host(tmp, sp)
        _rows(d, dpitch, width, height)[:] = _rows(tmp, spitch, width, height)
        return
    if sk == "pageable":                           # pageable host to device
        if flat:
            v.copy_from_host(d, sp[:width * height], wait=sync)
        elif sync or not v.copy_rect_from_host(d, dpitch, _rows(sp, spitch, width, height)):
            _from_pageable(rt, v, d, dpitch, sp, spitch, width, height)
        return
    # device/pinned to device/pinned: one SDMA packet (a rectangular one for pitched rows)
    sig = v.copy(d, sp, width * height) if flat else v.copy_rect(d, dpitch, sp, spitch, width, height)
    if sync:
        v.sync_signal(sig)


def _staged_slices(api, dst, dpitch: int, dslice: int, src, spitch: int, sslice: int, width: int, height: int,
                   depth: int, kind, stream) -> bool:
    """A host-asynchronous copy of ``depth`` pitched slices (3-D, slices ``dslice`` / ``sslice`` apart)
    from pageable memory to the device, staged at once (``VirtualGPU.copy_rect_from_host``: one staging
    buffer, one rectangular packet a slice): True once the data is staged. False, with nothing done, for
    any other copy (other sides, capture) or one that does not fit: the caller copies slice by slice."""
    prep = _prepare2d(api, dst, dpitch, src, spitch, width, height, kind, stream)   # slice 0's checks
    if prep is None:
        return True
    s, dk, d, sk, sp, dpitch, spitch, width, height = prep
    if sk != "pageable" or dk != "device" or s.capture is not None:
        return False
    rows = np.lib.stride_tricks.as_strided(sp, shape=(depth, height, width), strides=(sslice, spitch, 1),
                                           writeable=False)
    return s.vgpu.copy_rect_from_host(d, dpitch, rows, dslice)


def _from_pageable(rt, v, d: int, dpitch: int, src: np.ndarray, spitch: int, width: int, height: int) -> None:
    """Rows of pageable ``src`` to device memory, done when this returns (as the 1-D pageable copy):
    gathered into a pinned buffer and copied by one rectangular SDMA packet; row by row through
    staging when the host pool has no room for the buffer."""
    try:
        tmp = rt.allocate(None, width * height, L.ALLOC_HOST)
    except HsaError:
        for r in range(height):
            v.copy_from_host(d + r * dpitch, src[r * spitch:r * spitch + width])
        return
    try:
        rt.host_view(tmp, width * height).reshape(height, width)[:] = _rows(src, spitch, width, height)
        v.sync_signal(v.copy_rect(d, dpitch, tmp, width, width, height))
    except BaseException:
        try:
            v.synchronize()
        except HsaError:        # the copy may still be queued (a wait that timed out): the device may
            pass                # read tmp later, so it is left to the process (as a discarded staging buffer)
        else:
            rt.free(tmp)
        raise
    rt.free(tmp)


@_api
def hipMemcpy2D(dst, dpitch: int, src, spitch: int, width: int, height: int, kind=hipMemcpyDefault) -> None:
    """Copy ``height`` rows of ``width`` bytes from ``src`` (rows ``spitch`` apart) to ``dst`` (rows
    ``dpitch`` apart); either side may be device memory, pinned host memory or a numpy array.
    Synchronous. Zero width or height copies nothing (after the kind and stream are checked)."""
    implicit_capture_check()
    check_unsafe("hipMemcpy2D")
    _memcpy2d("hipMemcpy2D", dst, dpitch, src, spitch, width, height, kind, None, True)


@_api
def hipMemcpy2DAsync(dst, dpitch: int, src, spitch: int, width: int, height: int, kind=hipMemcpyDefault,
                     stream=None) -> None:
    """hipMemcpy2D on ``stream``, in its order. Returns once submitted when both sides are device or
    pinned memory. From pageable host memory to the device it returns once the rows are staged (the
    array may change right after the call), without waiting for the stream's earlier work, when they
    fit one staging buffer (``STAGING_BYTES``, 1 MiB); a larger copy returns once it has landed. To
    pageable host memory it returns once the data is there (as CLR). During capture: one memcpy node
    per row."""
    _memcpy2d("hipMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind, stream, False)


def _memset2d(api, dst, pitch, value, width, height, stream, sync: bool) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: value must be an int, not {value!r}")
    value = int(value) & 0xFF
    pitch, width, height = _size(pitch, f"{api}: pitch"), _size(width, f"{api}: width"), _size(height, f"{api}: height")
    if width == 0 or height == 0:
        return
    if dst is None or isinstance(dst, (int, np.integer)) and dst == 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: dst is a null pointer")
    if pitch == 0 or pitch < width:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: pitch {pitch} is smaller than width {width}")
    dk, d = _classify(dst, (height - 1) * pitch + width, f"{api}: dst")
    if dk == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, f"{api} needs a device or pinned host pointer")
    s = _get_stream(stream)
    flat = pitch == width
    if s.capture is not None:           # one memset node (rows a pitch apart), as HIP captures it
        if flat:
            s.capture.add_memset(s, d, value, width * height, 1)
        else:
            s.capture.add_memset(s, d, value, width, 1, height, pitch)
        return
    v = s.vgpu
    sig = v.fill(d, value, width * height, 1) if flat else v.fill_rect(d, pitch, value, width, height)
    if sync and dk == "pinned":         # as hipMemset: a synchronous fill waits only for a host target
        v.sync_signal(sig)


@_api
def hipMemset2D(dst, pitch: int, value: int, width: int, height: int) -> None:
    """Fill ``height`` rows of ``width`` bytes (rows ``pitch`` apart) with the low byte of ``value``,
    in the legacy stream's order (as hipMemset: waited for only when ``dst`` is pinned host memory).
    A null, pageable or out-of-range ``dst`` or a pitch under the width is hipErrorInvalidValue."""
    implicit_capture_check()
    check_unsafe("hipMemset2D")
    _memset2d("hipMemset2D", dst, pitch, value, width, height, None, True)


@_api
def hipMemset2DAsync(dst, pitch: int, value: int, width: int, height: int, stream=None) -> None:
    """hipMemset2D on ``stream``; during capture one memset node per row."""
    _memset2d("hipMemset2DAsync", dst, pitch, value, width, height, stream, False)
