"""memcpy2d_tests_common.hh for the ported hipMemcpy2D / hipMemcpy2DAsync files: LinearAllocGuard2D, the
copy shells (device to host, device to device, host to device, host to host) and the
synchronisation-behaviour checks, with a gate in place of upstream's 300 ms delay kernel, and the zero
width and height and negative-parameter checks both files share. The hipMemcpyParam2D / hipDrvMemcpy2DUnaligned adapters and the
array shells are left out (not in hdemu). Upstream's Iota kernel (a pitched 2-D grid of int) is the same
values written by a 1-D hipMemcpy of the whole pitched allocation (tests/kernels/upstream.py has no
pitched Iota kernel)."""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.memcpy3d_common import Host, iota_device, pitched, verify
from tests.upstream.hipkit import Gate, wait_until

__all__ = ["INT", "COLS", "ROWS", "Alloc2D", "Host", "device_to_host_shell", "device_to_device_shell",
           "host_to_device_shell", "host_to_host_shell", "sync_behavior_check", "htod_sync_behavior",
           "dtoh_pageable_sync_behavior", "dtoh_pinned_sync_behavior", "dtod_sync_behavior",
           "zero_width_height", "NEGATIVE_CASES", "negative_parameters"]

INT = 4                                     # sizeof(int)
COLS, ROWS = 127, 128


class Alloc2D:
    """LinearAllocGuard2D<T>(cols, rows): hipMallocPitch of cols * sizeof(T) bytes by rows."""

    def __init__(self, cols: int, rows: int, item: int = INT):
        self.width, self.height, self.width_logical = cols * item, rows, cols
        self.ptr, self.pitch = hip.hipMallocPitch(self.width, rows)

    def read(self) -> np.ndarray:
        """The allocation's width x height bytes, copied to pageable memory by hipMemcpy2D."""
        out = np.zeros(self.width * self.height, np.uint8)
        hip.hipMemcpy2D(out, self.width, self.ptr, self.pitch, self.width, self.height, hip.hipMemcpyDeviceToHost)
        return out

    def free(self):
        if self.ptr:
            hip.hipFree(self.ptr)
            self.ptr = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def _iota_device(ptr: int, pitch: int, w: int, h: int) -> None:
    """Iota<<<...>>>(ptr, pitch, w, h, 1): the same values, written by one hipMemcpy."""
    iota_device(ptr, pitch, w, h, 1, _f(w, h))


def _f(w: int, h: int) -> np.ndarray:
    """f(x, y, z) = z * cols * rows + y * cols + x for x < w, y < h (upstream's cols is 127)."""
    return (np.arange(h, dtype=np.int32)[:, None] * COLS + np.arange(w, dtype=np.int32)[None, :])[None]


def _verify(u8, pitch, w, h, what) -> None:
    verify(u8, pitch, w, h, 1, what, _f(w, h))


def device_to_host_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy2DDeviceToHostShell: Iota on device, copied to pinned memory of each host pitch."""
    for kind in (hip.hipMemcpyDeviceToHost, hip.hipMemcpyDefault):
        with Alloc2D(COLS, ROWS) as dev:
            for host_pitch in (dev.width, dev.width + 64):
                with Host("hipHostMalloc", host_pitch * ROWS) as host:
                    _iota_device(dev.ptr, dev.pitch, dev.width_logical, dev.height)
                    memcpy(host.ptr, host_pitch, dev.ptr, dev.pitch, dev.width, dev.height, kind)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    _verify(host.u8, host_pitch, dev.width_logical, dev.height, f"kind {kind}, host pitch {host_pitch}")


def _disable_peer_access(device: int, peer: int) -> None:
    hip.hipSetDevice(device)
    hip.hipDeviceDisablePeerAccess(peer)


def device_to_device_shell(memcpy, should_synchronize: bool, enable_peer_access: bool, stream=None) -> None:
    """Memcpy2DDeviceToDeviceShell over every (src, dst) device pair and source width (1 and 2 times the
    columns). With more than one device a pair hipDeviceCanAccessPeer refuses is skipped (as upstream:
    a device and itself). Peer access, when enabled, is disabled again after the copy (upstream leaves it
    on, and the next GENERATE value's hipDeviceEnablePeerAccess would be hipErrorPeerAccessAlreadyEnabled;
    here the platform is shared with the next tests)."""
    device_count = hip.hipGetDeviceCount()
    for kind in (hip.hipMemcpyDeviceToDevice, hip.hipMemcpyDefault):
        for src_device in range(device_count):
            for dst_device in range(device_count):
                for src_cols_mult in (1, 2):
                    if device_count > 1 and not hip.hipDeviceCanAccessPeer(src_device, dst_device):
                        continue        # HIP_SKIP_TEST("Skipped as peer access cannot be enabled ...")
                    hip.hipSetDevice(src_device)
                    with contextlib.ExitStack() as es:
                        es.callback(hip.hipSetDevice, 0)
                        if enable_peer_access:
                            if src_device == dst_device:
                                continue
                            hip.hipDeviceEnablePeerAccess(dst_device, 0)
                            es.callback(_disable_peer_access, src_device, dst_device)
                        src = es.enter_context(Alloc2D(COLS * src_cols_mult, ROWS))
                        hip.hipSetDevice(dst_device)
                        dst = es.enter_context(Alloc2D(COLS, ROWS))
                        hip.hipSetDevice(src_device)
                        host = es.enter_context(Host("hipHostMalloc", dst.width * ROWS))
                        _iota_device(src.ptr, src.pitch, dst.width_logical, dst.height)
                        memcpy(dst.ptr, dst.pitch, src.ptr, src.pitch, dst.width, dst.height, kind)
                        if should_synchronize:
                            hip.hipStreamSynchronize(stream)
                        hip.hipMemcpy2D(host.ptr, dst.width, dst.ptr, dst.pitch, dst.width, dst.height,
                                        hip.hipMemcpyDeviceToHost)
                        _verify(host.u8, dst.width, dst.width_logical, dst.height,
                                f"kind {kind}, devices {src_device} -> {dst_device}, source columns x{src_cols_mult}")


def host_to_device_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy2DHostToDeviceShell: Iota in pinned memory of each host pitch, to the device and back."""
    for kind in (hip.hipMemcpyHostToDevice, hip.hipMemcpyDefault):
        with Alloc2D(COLS, ROWS) as dev:
            for host_pitch in (dev.pitch, 2 * dev.pitch):
                with Host("hipHostMalloc", host_pitch * ROWS) as src, Host("hipHostMalloc", dev.width * ROWS) as dst:
                    pitched(src.u8, host_pitch, dev.width_logical, dev.height, 1)[:] = \
                        _f(dev.width_logical, dev.height)
                    dst.u8[:dev.width_logical * ROWS * INT] = 0
                    memcpy(dev.ptr, dev.pitch, src.ptr, host_pitch, dev.width, dev.height, kind)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    hip.hipMemcpy2D(dst.ptr, dev.width, dev.ptr, dev.pitch, dev.width, dev.height,
                                    hip.hipMemcpyDeviceToHost)
                    _verify(dst.u8, dev.width, dev.width_logical, dev.height, f"kind {kind}, host pitch {host_pitch}")


def host_to_host_shell(memcpy, should_synchronize: bool, stream=None) -> None:
    """Memcpy2DHostToHostShell: Iota in pinned memory of each source pitch, to pinned memory."""
    for kind in (hip.hipMemcpyHostToHost, hip.hipMemcpyDefault):
        for src_pitch in (COLS * INT, COLS * INT + 64):
            with Host("hipHostMalloc", src_pitch * ROWS) as src, Host("hipHostMalloc", COLS * INT * ROWS) as dst:
                pitched(src.u8, src_pitch, COLS, ROWS, 1)[:] = _f(COLS, ROWS)
                memcpy(dst.ptr, COLS * INT, src.ptr, src_pitch, COLS * INT, ROWS, kind)
                if should_synchronize:
                    hip.hipStreamSynchronize(stream)
                _verify(dst.u8, COLS * INT, COLS, ROWS, f"kind {kind}, source pitch {src_pitch}")


def sync_behavior_check(mod, memcpy, should_sync: bool, stream=None, deadline_s: float = 1.0) -> None:
    """memcpy2d_tests_common.hh's MemcpySyncBehaviorCheck: device work that runs until the test opens it
    (a gate, upstream's 300 ms delay kernel) is on ``stream``, then ``memcpy()`` (in a thread). A copy that
    should synchronise is only checked as upstream checks it: after hipStreamSynchronize the stream is
    idle (the gate is opened once the copy is under way). One that should not must return while the gate
    is still shut (within ``deadline_s``), the stream then busy (hipErrorNotReady)."""
    with Gate(mod) as gate:
        gate.launch(stream)
        out = {}

        def worker():
            try:
                memcpy()
                out["while_shut"] = gate.flag[0] == 0
                if out["while_shut"]:
                    out["status"] = hip.hipStreamQuery(stream)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc
            out["done"] = True

        t = threading.Thread(target=worker)
        t.start()
        if not should_sync:
            try:
                wait_until(lambda: out.get("done"), deadline_s, "the copy to return while the device is busy")
            except AssertionError:
                pass            # reported below, once the gate is open and the thread has ended
        gate.open()
        t.join(60)
        assert not t.is_alive(), "the copy never returned"
        if "exc" in out:
            raise out["exc"]
        if should_sync:
            hip.hipStreamSynchronize(stream)
            assert hip.hipStreamQuery(stream) == hip.hipError_t.hipSuccess
        else:
            assert out["while_shut"], "the copy waited for the device work"
            assert out["status"] == hip.hipError_t.hipErrorNotReady


SYNC_COLS = SYNC_ROWS = 32


def htod_sync_behavior(mod, memcpy, should_sync: bool, host_kind: str, stream=None, deadline_s: float = 1.0) -> None:
    """Memcpy2DHtoDSyncBehavior for one host allocation kind (upstream GENERATEs malloc, hipHostMalloc)."""
    with Host(host_kind, SYNC_COLS * INT * SYNC_ROWS) as host, Alloc2D(SYNC_COLS, SYNC_ROWS) as dev:
        sync_behavior_check(mod, lambda: memcpy(dev.ptr, dev.pitch, host.ptr, dev.width, dev.width, dev.height,
                                                hip.hipMemcpyHostToDevice), should_sync, stream, deadline_s)


def _dtoh_sync_behavior(mod, memcpy, should_sync: bool, host_kind: str, stream) -> None:
    with Host(host_kind, SYNC_COLS * INT * SYNC_ROWS) as host, Alloc2D(SYNC_COLS, SYNC_ROWS) as dev:
        sync_behavior_check(mod, lambda: memcpy(host.ptr, dev.width, dev.ptr, dev.pitch, dev.width, dev.height,
                                                hip.hipMemcpyDeviceToHost), should_sync, stream)


def dtoh_pageable_sync_behavior(mod, memcpy, should_sync: bool, stream=None) -> None:
    """Memcpy2DDtoHPageableSyncBehavior."""
    _dtoh_sync_behavior(mod, memcpy, should_sync, "malloc", stream)


def dtoh_pinned_sync_behavior(mod, memcpy, should_sync: bool, stream=None) -> None:
    """Memcpy2DDtoHPinnedSyncBehavior."""
    _dtoh_sync_behavior(mod, memcpy, should_sync, "hipHostMalloc", stream)


def dtod_sync_behavior(mod, memcpy, should_sync: bool, stream=None) -> None:
    """Memcpy2DDtoDSyncBehavior."""
    with Alloc2D(SYNC_COLS, SYNC_ROWS) as src, Alloc2D(SYNC_COLS, SYNC_ROWS) as dst:
        sync_behavior_check(mod, lambda: memcpy(dst.ptr, dst.pitch, src.ptr, src.pitch, dst.width, dst.height,
                                                hip.hipMemcpyDeviceToDevice), should_sync, stream)


ZCOLS, ZROWS = 63, 64                       # Memcpy2DZeroWidthHeight's uint8 region


def zero_width_height(memcpy, section: str, mult) -> None:
    """Memcpy2DZeroWidthHeight: a copy of ``mult`` (width, height multipliers, one of them 0) times the
    region leaves the destination's 42s as they were. ``memcpy`` is (dst, dpitch, src, spitch, width,
    height, kind) and has finished the copy when it returns."""
    wm, hm = mult
    dev, dev2 = Alloc2D(ZCOLS, ZROWS, 1), Alloc2D(ZCOLS, ZROWS, 1)
    n = dev.width * ZROWS
    src_h, dst_h = hip.hipHostMalloc(n), hip.hipHostMalloc(n)
    sh, dh = hip.host_array(src_h, np.uint8, n), hip.host_array(dst_h, np.uint8, n)
    try:
        if section == "Device to Host":
            dh[:] = 42
            hip.hipMemset2D(dev.ptr, dev.pitch, 1, dev.width, ZROWS)
            memcpy(dst_h, dev.width, dev.ptr, dev.pitch, dev.width * wm, ZROWS * hm, hip.hipMemcpyDeviceToHost)
            assert (dh == 42).all()
        elif section == "Device to Device":
            hip.hipMemset2D(dev.ptr, dev.pitch, 1, dev.width, ZROWS)
            hip.hipMemset2D(dev2.ptr, dev2.pitch, 42, dev2.width, ZROWS)
            memcpy(dev2.ptr, dev2.pitch, dev.ptr, dev.pitch, dev.width * wm, ZROWS * hm, hip.hipMemcpyDeviceToDevice)
            assert (dev2.read() == 42).all()
        elif section == "Host to Device":
            sh[:] = 1
            hip.hipMemset2D(dev.ptr, dev.pitch, 42, dev.width, ZROWS)
            memcpy(dev.ptr, dev.pitch, src_h, dev.width, dev.width * wm, ZROWS * hm, hip.hipMemcpyHostToDevice)
            assert (dev.read() == 42).all()
        else:
            sh[:], dh[:] = 1, 42
            memcpy(dst_h, ZCOLS, src_h, ZCOLS, ZCOLS * wm, ZROWS * hm, hip.hipMemcpyHostToHost)
            assert (dh == 42).all()
    finally:
        hip.hipHostFree(src_h)
        hip.hipHostFree(dst_h)
        dev.free()
        dev2.free()


NEGATIVE_CASES = ["dst == nullptr", "src == nullptr", "dpitch < width", "spitch < width", "dpitch > max pitch",
                  "spitch > max pitch"]


def negative_parameters(memcpy, section: str, case: str) -> None:
    """The negative-parameter SECTIONs of one direction (``section``, upstream's spelling, any case):
    null pointers and a pitch over maxPitch are hipErrorInvalidValue, a pitch under the width
    hipErrorInvalidPitchValue. ``memcpy`` is (dst, dpitch, src, spitch, width, height, kind)."""
    E = hip.hipError_t
    section = section.lower()
    cols, rows = 128, 128
    allocs = []
    try:
        if section == "host to host":
            a, b = hip.hipHostMalloc(cols * rows * 4), hip.hipHostMalloc(cols * rows * 4)
            allocs += [(hip.hipHostFree, a), (hip.hipHostFree, b)]
            dst, dpitch, src, spitch, width, height, kind = b, cols * 4, a, cols * 4, cols * 4, rows, \
                hip.hipMemcpyHostToHost
        else:
            d = Alloc2D(cols, rows, 4)
            allocs.append((hip.hipFree, d.ptr))
            if section == "device to device":
                s = Alloc2D(cols, rows, 4)
                allocs.append((hip.hipFree, s.ptr))
                dst, dpitch, src, spitch, kind = d.ptr, d.pitch, s.ptr, s.pitch, hip.hipMemcpyDeviceToDevice
            else:
                h = hip.hipHostMalloc(d.pitch * rows)
                allocs.append((hip.hipHostFree, h))
                if section == "host to device":
                    dst, src, kind = d.ptr, h, hip.hipMemcpyHostToDevice
                else:
                    dst, src, kind = h, d.ptr, hip.hipMemcpyDeviceToHost
                dpitch = spitch = d.pitch
            width, height = d.width, d.height
        max_pitch = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMaxPitch, 0)
        args = {"dst == nullptr": (0, dpitch, src, spitch, E.hipErrorInvalidValue),
                "src == nullptr": (dst, dpitch, 0, spitch, E.hipErrorInvalidValue),
                "dpitch < width": (dst, width - 1, src, spitch, E.hipErrorInvalidPitchValue),
                "spitch < width": (dst, dpitch, src, width - 1, E.hipErrorInvalidPitchValue),
                "dpitch > max pitch": (dst, max_pitch + 1, src, spitch, E.hipErrorInvalidValue),
                "spitch > max pitch": (dst, dpitch, src, max_pitch + 1, E.hipErrorInvalidValue)}[case]
        with pytest.raises(hip.HipError) as ei:
            memcpy(args[0], args[1], args[2], args[3], width, height, kind)
        assert ei.value.error == args[4]
    finally:
        for free, p in allocs:
            free(p)
