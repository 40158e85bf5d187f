"""memcpy1d_tests_common.hh and resource_guards.hh for the ported memory tests: allocations of each
kind, the copy shells (device to host, host to device, host to host, device to device) and the
synchronisation-behaviour checks, with a Gate in place of upstream's timed delay kernel; the SECTIONs
of MemcpyWithDirectionCommonTests, the directions of the 1-D negative-parameter cases and the
capture-then-launch of the capture cases."""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate

__all__ = ["K_PAGE_SIZE", "HOST_MALLOC_FLAGS", "Alloc", "vector_set", "host_kinds", "device_to_host_shell",
           "host_to_device_shell", "host_to_host_shell", "device_to_device_shell", "sync_behavior_check",
           "invalid_stream", "expect_error", "SIZES", "DIRECTION_SECTIONS", "direction_section",
           "NEGATIVE_DIRECTIONS", "run_captured"]

K_PAGE_SIZE = 4096
SIZES = (K_PAGE_SIZE // 2, K_PAGE_SIZE, K_PAGE_SIZE * 2)
#: hipHostMallocDefault, hipHostMallocPortable, hipHostMallocMapped, hipHostMallocWriteCombined
HOST_MALLOC_FLAGS = (0x0, 0x1, 0x2, 0x4)


class Alloc:
    """LinearAllocGuard<int>: ``ptr`` is what a copy takes (a numpy array for pageable "malloc"
    memory, an int for hipHostMalloc and hipMalloc); ``host`` is a numpy int32 view of host memory."""

    def __init__(self, kind: str, nbytes: int, flags: int = 0):
        self.kind, self.nbytes = kind, nbytes
        count = nbytes // 4
        if kind == "malloc":
            self.host = np.zeros(count, dtype=np.int32)
            self.ptr = self.host
        elif kind == "hipHostMalloc":
            self.ptr = hip.hipHostMalloc(nbytes, flags)
            self.host = hip.host_array(self.ptr, np.int32, count)
        elif kind == "hipMalloc":
            self.ptr = hip.hipMalloc(nbytes)
            self.host = None
        else:
            raise ValueError(f"allocation kind must be malloc, hipHostMalloc or hipMalloc, not {kind!r}")

    def free(self):
        if self.kind == "hipHostMalloc":
            hip.hipHostFree(self.ptr)
        elif self.kind == "hipMalloc":
            hip.hipFree(self.ptr)
        self.ptr = self.host = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()


def vector_set(mod, ptr: int, value: int, count: int, stream=None) -> None:
    """VectorSet<<<count / 1024 + 1, 1024, 0, stream>>>(ptr, value, count)."""
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "set_value"), count // 1024 + 1, 1, 1, 1024, 1, 1, 0,
                              stream, [ptr, value, count])


def host_kinds():
    """(kind, flags) of the host allocations the shells generate: malloc and every hipHostMalloc flag."""
    return [("malloc", 0)] + [("hipHostMalloc", f) for f in HOST_MALLOC_FLAGS]


def device_to_host_shell(mod, memcpy, should_synchronize: bool, stream=None) -> None:
    for size in SIZES:
        for kind, flags in host_kinds():
            with Alloc(kind, size, flags) as host, Alloc("hipMalloc", size) as dev:
                count = size // 4
                vector_set(mod, dev.ptr, 42, count, stream)
                hip.hipGetLastError()
                memcpy(host.ptr, dev.ptr, size)
                if should_synchronize:
                    hip.hipStreamSynchronize(stream)
                assert np.all(host.host == 42), (size, kind, flags)


def host_to_device_shell(mod, memcpy, should_synchronize: bool, stream=None) -> None:
    for size in SIZES:
        for kind, flags in host_kinds():
            with Alloc(kind, size, flags) as src, Alloc("hipHostMalloc", size) as dst, Alloc("hipMalloc", size) as dev:
                src.host[:] = 42
                dst.host[:] = 0
                memcpy(dev.ptr, src.ptr, size)
                if should_synchronize:
                    hip.hipStreamSynchronize(stream)
                hip.hipMemcpy(dst.ptr, dev.ptr, size, hip.hipMemcpyDeviceToHost)
                assert np.all(dst.host == 42), (size, kind, flags)


def host_to_host_shell(mod, memcpy, should_synchronize: bool, stream=None) -> None:
    for size in SIZES:
        for skind, sflags in host_kinds():
            for dkind, dflags in host_kinds():
                with Alloc(skind, size, sflags) as src, Alloc(dkind, size, dflags) as dst:
                    src.host[:] = 42
                    memcpy(dst.ptr, src.ptr, size)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    assert np.all(dst.host == 42), (size, skind, sflags, dkind, dflags)


def _disable_peer_access(device: int, peer: int) -> None:
    hip.hipSetDevice(device)
    hip.hipDeviceDisablePeerAccess(peer)


def device_to_device_shell(mod, memcpy, should_synchronize: bool, stream=None,
                           enable_peer_access: bool = False) -> None:
    """MemcpyDeviceToDeviceShell<should_synchronize, enable_peer_access>: with peer access enabled, pairs of
    one device skip, and the source device's access to the destination is disabled again after the copy."""
    n = hip.hipGetDeviceCount()
    for size in SIZES:
        for src_device in range(n):
            for dst_device in range(n):
                hip.hipSetDevice(src_device)
                if enable_peer_access:
                    if src_device == dst_device:
                        continue
                    if not hip.hipDeviceCanAccessPeer(src_device, dst_device):
                        continue        # HIP_SKIP_TEST("Skipped as peer access cannot be enabled ...")
                with contextlib.ExitStack() as es:
                    if enable_peer_access:
                        hip.hipDeviceEnablePeerAccess(dst_device, 0)
                        es.callback(_disable_peer_access, src_device, dst_device)
                    src = es.enter_context(Alloc("hipMalloc", size))
                    result = es.enter_context(Alloc("hipHostMalloc", size, 0x1))
                    hip.hipSetDevice(dst_device)
                    dst = es.enter_context(Alloc("hipMalloc", size))
                    hip.hipSetDevice(src_device)
                    vector_set(mod, src.ptr, 42, size // 4, stream)
                    hip.hipGetLastError()
                    memcpy(dst.ptr, src.ptr, size)
                    if should_synchronize:
                        hip.hipStreamSynchronize(stream)
                    hip.hipMemcpy(result.ptr, dst.ptr, size, hip.hipMemcpyDeviceToHost)
                    assert np.all(result.host == 42), (size, src_device, dst_device)
                hip.hipSetDevice(0)


def sync_behavior_check(mod, memcpy, should_sync: bool, stream=None) -> None:
    """MemcpySyncBehaviorCheck: device work that runs until the test opens it (a Gate, upstream's
    LaunchDelayKernel) is on ``stream``; then ``memcpy()``. A copy that must synchronise cannot
    return while the gate is closed, so it runs in a thread: once it is under way the gate is opened,
    and the stream must be idle when the copy has returned. A copy that must not synchronise returns
    with the gate still closed, and the stream is then still busy (hipErrorNotReady)."""
    with Gate(mod) as gate:
        gate.launch(stream)
        if not should_sync:
            memcpy()
            assert hip.hipStreamQuery(stream) == hip.hipError_t.hipErrorNotReady
            return
        started, out = threading.Event(), {}

        def worker():
            try:
                started.set()
                memcpy()
                out["returned_while_closed"] = gate.flag[0] == 0
                out["ok"] = hip.hipStreamQuery(stream) == hip.hipError_t.hipSuccess
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc

        t = threading.Thread(target=worker)
        t.start()
        started.wait(30)
        t.join(0.05)            # not synchronisation: only gives a wrongly early return the chance to show
        gate.open()
        t.join(60)
        assert not t.is_alive(), "the copy never returned"
        if "exc" in out:
            raise out["exc"]
        assert not out["returned_while_closed"], "the copy returned while the device work was still running"
        assert out["ok"], "the stream was still busy when the copy returned"


def invalid_stream():
    """A stream that was created and destroyed."""
    s = hip.hipStreamCreate()
    hip.hipStreamDestroy(s)
    return s


def expect_error(error: str, fn, *args):
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == hip.hipError_t[error], ei.value


#: MemcpyWithDirectionCommonTests: SECTION -> (shell, kind, peer access enabled)
DIRECTION_SECTIONS = {
    "Device to host": (device_to_host_shell, hip.hipMemcpyDeviceToHost, False),
    "Device to host with default kind": (device_to_host_shell, hip.hipMemcpyDefault, False),
    "Host to device": (host_to_device_shell, hip.hipMemcpyHostToDevice, False),
    "Host to device with default kind": (host_to_device_shell, hip.hipMemcpyDefault, False),
    "Host to host": (host_to_host_shell, hip.hipMemcpyHostToHost, False),
    "Host to host with default kind": (host_to_host_shell, hip.hipMemcpyDefault, False),
    "Device to device-Peer access enabled": (device_to_device_shell, hip.hipMemcpyDeviceToDevice, True),
    "Device to device-Peer access disabled": (device_to_device_shell, hip.hipMemcpyDeviceToDevice, False),
    "Device to device with default kind-Peer access enabled": (device_to_device_shell, hip.hipMemcpyDefault, True),
    "Device to device with default kind-Peer access disabled": (device_to_device_shell, hip.hipMemcpyDefault, False),
}


def direction_section(mod, section: str, memcpy_of_kind, should_synchronize: bool, stream=None) -> None:
    """One SECTION of MemcpyWithDirectionCommonTests: its shell with ``memcpy_of_kind(kind)`` (a
    (dst, src, nbytes) copy) of the SECTION's kind (and peer access, for device to device)."""
    shell, kind, peer = DIRECTION_SECTIONS[section]
    memcpy = memcpy_of_kind(kind)
    if shell is device_to_device_shell:
        shell(mod, memcpy, should_synchronize, stream, peer)
    else:
        shell(mod, memcpy, should_synchronize, stream)


#: (SECTION, destination kind, source kind, memcpy kind) of the 1-D Negative_Parameters cases
NEGATIVE_DIRECTIONS = [
    ("Host to device", "hipMalloc", "hipHostMalloc", hip.hipMemcpyHostToDevice),
    ("Device to host", "hipHostMalloc", "hipMalloc", hip.hipMemcpyDeviceToHost),
    ("Host to host", "hipHostMalloc", "hipHostMalloc", hip.hipMemcpyHostToHost),
    ("Device to device", "hipMalloc", "hipMalloc", hip.hipMemcpyDeviceToDevice)]


def run_captured(stream, enqueue, sync_device: bool = False) -> None:
    """hipStreamBeginCapture(stream), ``enqueue()``, hipStreamEndCapture (then hipDeviceSynchronize when
    ``sync_device``), hipGraphInstantiate, hipGraphLaunch on ``stream`` and hipStreamSynchronize; the
    graph and its executable are destroyed after (the stream is the caller's)."""
    graph = graph_exec = None
    try:
        hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
        enqueue()
        graph = hip.hipStreamEndCapture(stream)
        if sync_device:
            hip.hipDeviceSynchronize()
        graph_exec = hip.hipGraphInstantiate(graph)
        hip.hipGraphLaunch(graph_exec, stream)
        hip.hipStreamSynchronize(stream)
    finally:
        if graph_exec is not None:
            hip.hipGraphExecDestroy(graph_exec)
        if graph is not None:
            hip.hipGraphDestroy(graph)
