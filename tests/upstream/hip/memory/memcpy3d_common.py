"""memcpy3d_tests_common.hh for the ported hipMemcpy3D / hipMemcpy3DAsync files: LinearAllocGuard3D,
Memcpy3DWrapper, the copy shells (device to host, device to device, host to device, host to host), the
synchronisation-behaviour checks and the zero width / height / depth check. The hipArray shells and the
graph forms of Memcpy3DWrapper are left out (hdemu has no image memory; no ported file uses the graph
form). Upstream's Iota kernel (a pitched 3-D grid of int) is the same values written by a 1-D hipMemcpy
of the whole pitched allocation (tests/kernels/upstream.py has no pitched Iota kernel)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import common as c

__all__ = ["INT", "EXTENT", "Alloc3D", "Host", "memcpy3d_wrapper", "iota", "pitched", "iota_device", "verify",
           "device_to_host_shell", "device_to_device_shell", "host_to_device_shell", "host_to_host_shell",
           "htod_sync_behavior", "dtoh_pageable_sync_behavior", "dtoh_pinned_sync_behavior",
           "dtod_sync_behavior", "zero_width_height_depth", "NEGATIVE_CASES", "negative_tests",
           "negative_parameters"]

INT = 4                                     # sizeof(int)
#: the extent of the copy shells: 127 ints by 128 rows by 8 slices
EXTENT = (127 * INT, 128, 8)
ORIGIN = (0, 0, 0)


def _pos(p) -> hip.hipPos:
    return hip.make_hipPos(*p)


class Alloc3D:
    """LinearAllocGuard3D<T>(extent): hipMalloc3D of ``extent`` (width in bytes); ``item`` is sizeof(T)."""

    def __init__(self, width: int, height: int, depth: int, item: int = INT):
        self.extent = hip.make_hipExtent(width, height, depth)
        self.pp = hip.hipMalloc3D(self.extent)
        self.width, self.height, self.depth, self.item = width, height, depth, item
        self.pitch = self.pp.pitch
        self.width_logical = width // item

    def free(self):
        if self.pp is not None:
            hip.hipFree(self.pp.ptr)
            self.pp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


class Host:
    """LinearAllocGuard<T>(kind, nbytes) of host memory: "malloc" (a numpy array, ``ptr`` is the array)
    or "hipHostMalloc" (``ptr`` the pointer); ``u8`` is a byte view of it."""

    def __init__(self, kind: str, nbytes: int):
        self.kind = kind
        if kind == "malloc":
            self.u8 = np.zeros(nbytes, np.uint8)
            self.ptr = self.u8
        elif kind == "hipHostMalloc":
            self.ptr = hip.hipHostMalloc(nbytes)
            self.u8 = hip.host_array(self.ptr, np.uint8, nbytes)
        else:
            raise ValueError(f"host allocation kind must be malloc or hipHostMalloc, not {kind!r}")

    def free(self):
        if self.kind == "hipHostMalloc" and self.ptr:
            hip.hipHostFree(self.ptr)
        self.ptr = self.u8 = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def memcpy3d_wrapper(dst_pp, dst_pos, src_pp, src_pos, extent, kind, stream=None, is_async: bool = False) -> None:
    """Memcpy3DWrapper<async> (GetMemcpy3DParms, then hipMemcpy3D or hipMemcpy3DAsync)."""
    parms = hip.hipMemcpy3DParms()
    parms.dstPtr, parms.dstPos = dst_pp, _pos(dst_pos)
    parms.srcPtr, parms.srcPos = src_pp, _pos(src_pos)
    parms.extent, parms.kind = extent, kind
    if is_async:
        hip.hipMemcpy3DAsync(parms, stream)
    else:
        hip.hipMemcpy3D(parms)


def iota(w: int, h: int, d: int) -> np.ndarray:
    """f(x, y, z) = z * w * h + y * w + x, indexed [z, y, x]."""
    return np.arange(w * h * d, dtype=np.int32).reshape(d, h, w)


def pitched(u8: np.ndarray, pitch: int, w: int, h: int, d: int, dtype=np.int32) -> np.ndarray:
    """The [z, y, x] view of ``w`` elements of each of ``h`` rows ``pitch`` bytes apart of ``d`` slices
    (PitchedMemorySet / PitchedMemoryVerify's indexing)."""
    item = np.dtype(dtype).itemsize
    return u8[:pitch * h * d].reshape(d, h, pitch)[:, :, :w * item].view(dtype)


def iota_device(ptr: int, pitch: int, w: int, h: int, d: int, values: np.ndarray | None = None) -> None:
    """Iota<<<...>>>(ptr, pitch, w, h, d): the same values (or ``values``, [z, y, x]), written by one
    hipMemcpy."""
    buf = np.zeros(pitch * h * d, np.uint8)
    pitched(buf, pitch, w, h, d)[:] = iota(w, h, d) if values is None else values
    hip.hipMemcpy(ptr, buf, buf.nbytes, hip.hipMemcpyHostToDevice)


def verify(u8, pitch, w, h, d, what, want: np.ndarray | None = None) -> None:
    """The [z, y, x] int values at ``u8`` (rows ``pitch`` bytes apart) are Iota's (or ``want``)."""
    got = pitched(u8, pitch, w, h, d)
    if want is None:
        want = iota(w, h, d)
    bad = np.argwhere(got != want)
    if bad.size:
        at = tuple(bad[0])
        raise AssertionError(f"{what}: mismatch at [z, y, x] {at}: {got[at]} != {want[at]}")


def device_to_host_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy3DDeviceToHostShell: Iota on device, copied to pinned memory of each host pitch."""
    for kind in (hip.hipMemcpyDeviceToHost, hip.hipMemcpyDefault):
        with Alloc3D(*EXTENT) as dev:
            for host_pitch in (dev.width, dev.width + 64):
                with Host("hipHostMalloc", host_pitch * dev.height * dev.depth) as host:
                    iota_device(dev.pp.ptr, dev.pitch, dev.width_logical, dev.height, dev.depth)
                    memcpy(hip.make_hipPitchedPtr(host.ptr, host_pitch, dev.width, dev.height), ORIGIN, dev.pp,
                           ORIGIN, dev.extent, kind, stream)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    verify(host.u8, host_pitch, dev.width_logical, dev.height, dev.depth,
                            f"kind {kind}, host pitch {host_pitch}")


def device_to_device_shell(memcpy, should_synchronize: bool, enable_peer_access: bool, stream=None) -> None:
    """Memcpy3DDeviceToDeviceShell over every (src, dst) device pair. As upstream, both allocations are made
    on the source device. Peer access, when enabled, is disabled again after the copy (upstream leaves it
    on, and the next GENERATE value's hipDeviceEnablePeerAccess would be hipErrorPeerAccessAlreadyEnabled;
    here the platform is shared with the next tests)."""
    device_count = hip.hipGetDeviceCount()
    for kind in (hip.hipMemcpyDeviceToDevice, hip.hipMemcpyDefault):
        for src_device in range(device_count):
            for dst_device in range(device_count):
                hip.hipSetDevice(src_device)
                with contextlib.ExitStack() as es:
                    es.callback(hip.hipSetDevice, 0)
                    if enable_peer_access:
                        if src_device == dst_device:
                            continue
                        if not hip.hipDeviceCanAccessPeer(src_device, dst_device):
                            continue    # HIP_SKIP_TEST("Skipped as peer access cannot be enabled ...")
                        hip.hipDeviceEnablePeerAccess(dst_device, 0)
                        es.callback(hip.hipDeviceDisablePeerAccess, dst_device)
                    kernel_stream = stream
                    if stream is not None and stream is not hip.hipStreamPerThread:
                        kernel_stream = hip.hipStreamCreate()       # on the source device, as upstream
                        es.callback(hip.hipStreamDestroy, kernel_stream)
                    src = es.enter_context(Alloc3D(*EXTENT))
                    dst = es.enter_context(Alloc3D(*EXTENT))
                    host = es.enter_context(Host("hipHostMalloc", dst.width * dst.height * dst.depth))
                    iota_device(src.pp.ptr, src.pitch, dst.width_logical, dst.height, dst.depth)
                    memcpy(dst.pp, ORIGIN, src.pp, ORIGIN, dst.extent, kind, kernel_stream)
                    if should_synchronize:
                        hip.hipStreamSynchronize(kernel_stream)
                    memcpy3d_wrapper(hip.make_hipPitchedPtr(host.ptr, dst.width, dst.width, dst.height), ORIGIN,
                                     dst.pp, ORIGIN, dst.extent, hip.hipMemcpyDeviceToHost)
                    verify(host.u8, dst.width, dst.width_logical, dst.height, dst.depth,
                            f"kind {kind}, devices {src_device} -> {dst_device}")


def host_to_device_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy3DHostToDeviceShell: Iota in pinned memory of each host pitch, to the device and back."""
    for kind in (hip.hipMemcpyHostToDevice, hip.hipMemcpyDefault):
        with Alloc3D(*EXTENT) as dev:
            for host_pitch in (dev.pitch, 2 * dev.pitch):
                with Host("hipHostMalloc", host_pitch * dev.height * dev.depth) as src, \
                        Host("hipHostMalloc", dev.width * dev.height * dev.depth) as dst:
                    pitched(src.u8, host_pitch, dev.width_logical, dev.height, dev.depth)[:] = \
                        iota(dev.width_logical, dev.height, dev.depth)
                    dst.u8[:dev.width_logical * dev.height * dev.depth * INT] = 0
                    memcpy(dev.pp, ORIGIN, hip.make_hipPitchedPtr(src.ptr, host_pitch, dev.width, dev.height),
                           ORIGIN, dev.extent, kind, stream)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    memcpy3d_wrapper(hip.make_hipPitchedPtr(dst.ptr, dev.width, dev.width, dev.height), ORIGIN,
                                     dev.pp, ORIGIN, dev.extent, hip.hipMemcpyDeviceToHost)
                    verify(dst.u8, dev.width, dev.width_logical, dev.height, dev.depth,
                            f"kind {kind}, host pitch {host_pitch}")


def host_to_host_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy3DHostToHostShell: Iota in pinned memory with each padding, to pinned memory."""
    width, height, depth = EXTENT
    extent = hip.make_hipExtent(width, height, depth)
    for kind in (hip.hipMemcpyHostToHost, hip.hipMemcpyDefault):
        for padding in (0, 64):
            src_pitch = width + padding
            with Host("hipHostMalloc", src_pitch * height * depth) as src, \
                    Host("hipHostMalloc", width * height * depth) as dst:
                pitched(src.u8, src_pitch, width // INT, height, depth)[:] = iota(width // INT, height, depth)
                memcpy(hip.make_hipPitchedPtr(dst.ptr, width, width, height), ORIGIN,
                       hip.make_hipPitchedPtr(src.ptr, src_pitch, width, height), ORIGIN, extent, kind, stream)
                if should_synchronize:
                    hip.hipStreamSynchronize(stream)
                verify(dst.u8, width, width // INT, height, depth, f"kind {kind}, padding {padding}")


SYNC_EXTENT = (32 * INT, 32, 8)


def htod_sync_behavior(mod, memcpy, should_sync: bool, host_kinds=("malloc", "hipHostMalloc"), stream=None,
                       check=c.sync_behavior_check) -> None:
    """Memcpy3DHtoDSyncBehavior: a host-to-device copy of each host allocation kind behind device work.
    ``check`` is the MemcpySyncBehaviorCheck (common.sync_behavior_check, or a bounded one for copies that
    must not wait)."""
    for host_kind in host_kinds:
        with Alloc3D(*SYNC_EXTENT) as dev, Host(host_kind, dev.width * dev.height * dev.depth) as host:
            check(mod, lambda: memcpy(
                dev.pp, ORIGIN, hip.make_hipPitchedPtr(host.ptr, dev.width, dev.width, dev.height), ORIGIN,
                dev.extent, hip.hipMemcpyHostToDevice, stream), should_sync, stream)


def _dtoh_sync_behavior(mod, memcpy, should_sync: bool, host_kind: str, stream, check) -> None:
    with Alloc3D(*SYNC_EXTENT) as dev, Host(host_kind, dev.width * dev.height * dev.depth) as host:
        check(mod, lambda: memcpy(
            hip.make_hipPitchedPtr(host.ptr, dev.width, dev.width, dev.height), ORIGIN, dev.pp, ORIGIN,
            dev.extent, hip.hipMemcpyDeviceToHost, stream), should_sync, stream)


def dtoh_pageable_sync_behavior(mod, memcpy, should_sync: bool, stream=None, check=c.sync_behavior_check) -> None:
    """Memcpy3DDtoHPageableSyncBehavior."""
    _dtoh_sync_behavior(mod, memcpy, should_sync, "malloc", stream, check)


def dtoh_pinned_sync_behavior(mod, memcpy, should_sync: bool, stream=None, check=c.sync_behavior_check) -> None:
    """Memcpy3DDtoHPinnedSyncBehavior."""
    _dtoh_sync_behavior(mod, memcpy, should_sync, "hipHostMalloc", stream, check)


def dtod_sync_behavior(mod, memcpy, should_sync: bool, stream=None, check=c.sync_behavior_check) -> None:
    """Memcpy3DDtoDSyncBehavior."""
    with Alloc3D(*SYNC_EXTENT) as src, Alloc3D(*SYNC_EXTENT) as dst:
        check(mod, lambda: memcpy(dst.pp, ORIGIN, src.pp, ORIGIN, dst.extent, hip.hipMemcpyDeviceToDevice, stream),
              should_sync, stream)


def zero_width_height_depth(memcpy, should_synchronize: bool, section: str, mult, stream=None) -> None:
    """Memcpy3DZeroWidthHeightDepth: a copy of a zero width, height or depth (``mult``) of uint8 leaves
    the destination as it was."""
    wm, hm, dm = mult
    width, height, depth = EXTENT

    def zero_extent(w, h, d):
        return hip.make_hipExtent(w * wm, h * hm, d * dm)

    def sync():
        if should_synchronize:
            hip.hipStreamSynchronize(stream)

    if section == "Device to Host":
        with Alloc3D(width, height, depth, 1) as dev, Host("hipHostMalloc", width * height * depth) as host:
            host.u8[:] = 42
            hip.hipMemset3D(dev.pp, 1, dev.extent)
            memcpy(hip.make_hipPitchedPtr(host.ptr, dev.width, dev.width, dev.height), ORIGIN, dev.pp, ORIGIN,
                   zero_extent(dev.width, dev.height, dev.depth), hip.hipMemcpyDeviceToHost, stream)
            sync()
            assert np.all(host.u8 == 42)
    elif section == "Device to Device":
        with Alloc3D(width, height, depth, 1) as src, Alloc3D(width, height, depth, 1) as dst, \
                Host("hipHostMalloc", width * height * depth) as host:
            hip.hipMemset3D(src.pp, 1, src.extent)
            hip.hipMemset3D(dst.pp, 42, dst.extent)
            memcpy(dst.pp, ORIGIN, src.pp, ORIGIN, zero_extent(dst.width, dst.height, dst.depth),
                   hip.hipMemcpyDeviceToDevice, stream)
            sync()
            memcpy3d_wrapper(hip.make_hipPitchedPtr(host.ptr, dst.width, dst.width, dst.height), ORIGIN, dst.pp,
                             ORIGIN, dst.extent, hip.hipMemcpyDeviceToHost)
            assert np.all(host.u8[:dst.width_logical * dst.height] == 42)      # the first slice, as upstream
    elif section == "Host to Device":
        with Alloc3D(width, height, depth, 1) as dev, Host("hipHostMalloc", width * height * depth) as src, \
                Host("hipHostMalloc", width * height * depth) as dst:
            src.u8[:] = 1
            hip.hipMemset3D(dev.pp, 42, dev.extent)
            memcpy(dev.pp, ORIGIN, hip.make_hipPitchedPtr(src.ptr, dev.width, dev.width, dev.height), ORIGIN,
                   zero_extent(dev.width, dev.height, dev.depth), hip.hipMemcpyHostToDevice, stream)
            sync()
            memcpy3d_wrapper(hip.make_hipPitchedPtr(dst.ptr, dev.width, dev.width, dev.height), ORIGIN, dev.pp,
                             ORIGIN, dev.extent, hip.hipMemcpyDeviceToHost)
            assert np.all(dst.u8[:dev.width_logical * dev.height] == 42)       # the first slice, as upstream
    else:
        alloc_size = width * height * depth
        with Host("hipHostMalloc", alloc_size) as src, Host("hipHostMalloc", alloc_size) as dst:
            src.u8[:], dst.u8[:] = 1, 42
            memcpy(hip.make_hipPitchedPtr(dst.ptr, width, width, height), ORIGIN,
                   hip.make_hipPitchedPtr(src.ptr, width, width, height), ORIGIN,
                   zero_extent(width, height, depth), hip.hipMemcpyHostToHost, stream)
            sync()
            assert np.all(dst.u8 == 42)


NEGATIVE_CASES = ["dst_ptr.ptr == nullptr", "src_ptr.ptr == nullptr", "dst_ptr.pitch > max pitch",
                  "src_ptr.pitch > max pitch"]


def negative_tests(memcpy, case, dst_ptr, dst_pos, src_ptr, src_pos, extent, kind) -> None:
    """NegativeTests of Unit_hipMemcpy3D[Async]_Negative_Parameters, the sections enabled on AMD (pitch
    under the width EXSWHTEC-239, positions out of bounds EXSWHTEC-237 and a bad kind EXSWHTEC-234 are
    HT_NVIDIA only upstream)."""
    dst_ptr, src_ptr = hip.hipPitchedPtr(**vars(dst_ptr)), hip.hipPitchedPtr(**vars(src_ptr))
    if case == "dst_ptr.ptr == nullptr":
        dst_ptr.ptr = None
    elif case == "src_ptr.ptr == nullptr":
        src_ptr.ptr = None
    else:
        attr = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMaxPitch, 0)
        (dst_ptr if case.startswith("dst") else src_ptr).pitch = attr
    with pytest.raises(hip.HipError) as ei:
        memcpy(dst_ptr, dst_pos, src_ptr, src_pos, extent, kind)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def negative_parameters(memcpy, section, case) -> None:
    """The four SECTIONs of Unit_hipMemcpy3D[Async]_Negative_Parameters (a 128-int by 128 by 8 extent)."""
    w, h, d = 128 * INT, 128, 8
    extent = hip.make_hipExtent(w, h, d)
    if section == "Host to Host":
        with Host("hipHostMalloc", w * h * d) as src, Host("hipHostMalloc", w * h * d) as dst:
            negative_tests(memcpy, case, hip.make_hipPitchedPtr(dst.ptr, w, w, h), ORIGIN,
                           hip.make_hipPitchedPtr(src.ptr, w, w, h), ORIGIN, extent, hip.hipMemcpyHostToHost)
        return
    if section == "Device to Device":
        with Alloc3D(w, h, d) as src, Alloc3D(w, h, d) as dst:
            negative_tests(memcpy, case, dst.pp, ORIGIN, src.pp, ORIGIN, extent, hip.hipMemcpyDeviceToDevice)
        return
    with Alloc3D(w, h, d) as dev, Host("hipHostMalloc", dev.pitch * dev.height * dev.depth) as host:
        host_pp = hip.make_hipPitchedPtr(host.ptr, dev.pitch, dev.width, dev.height)
        if section == "Host to Device":
            negative_tests(memcpy, case, dev.pp, ORIGIN, host_pp, ORIGIN, extent, hip.hipMemcpyHostToDevice)
        else:
            negative_tests(memcpy, case, host_pp, ORIGIN, dev.pp, ORIGIN, extent, hip.hipMemcpyDeviceToHost)
