"""What the ported hipMemcpyPeer.cc and hipMemcpyPeerAsync.cc share: the peer-access guard around each
case (hipDeviceCanAccessPeer, hipDeviceEnablePeerAccess ... hipDeviceDisablePeerAccess from the source
device), VectorSet, and the "returns while device work is still running" check of their
synchronisation-behaviour cases with gates in place of upstream's 100 ms delay kernels; the bodies of
their Positive_Default, Positive_ZeroSize and Negative_Parameters cases, given the copy to make."""
from __future__ import annotations

import contextlib
import threading

import pytest

from hostside import hip
from tests.upstream.hip.memory.common import Alloc, invalid_stream, vector_set
from tests.upstream.hipkit import Gate, wait_until

__all__ = ["K_PAGE_SIZE", "SIZES", "peer_access", "vector_set", "returns_before_gates_open", "need_two_devices", "page_pair",
           "positive_default", "positive_zero_size", "negative_parameters"]

K_PAGE_SIZE = 4096
SIZES = (K_PAGE_SIZE // 2, K_PAGE_SIZE, K_PAGE_SIZE * 2)


@contextlib.contextmanager
def peer_access(src_device: int, dst_device: int):
    """hipSetDevice(src); if hipDeviceCanAccessPeer(src, dst): enable access to dst, yield True, then
    disable it again from src (and make device 0 current); else yield False (upstream's INFO branch)."""
    hip.hipSetDevice(src_device)
    try:
        if not hip.hipDeviceCanAccessPeer(src_device, dst_device):
            yield False
            return
        hip.hipDeviceEnablePeerAccess(dst_device, 0)
        try:
            yield True
        finally:
            hip.hipSetDevice(src_device)
            hip.hipDeviceDisablePeerAccess(dst_device)
    finally:
        hip.hipSetDevice(0)


@contextlib.contextmanager
def page_pair(src_device: int = 0, dst_device: int = 1):
    """peer_access(src, dst) and a K_PAGE_SIZE hipMalloc on each device, the source device current after:
    yields (src_alloc, dst_alloc), or None when peer access cannot be enabled."""
    with peer_access(src_device, dst_device) as can_access_peer:
        if not can_access_peer:
            yield None
            return
        with Alloc("hipMalloc", K_PAGE_SIZE) as src_alloc:
            hip.hipSetDevice(dst_device)
            with Alloc("hipMalloc", K_PAGE_SIZE) as dst_alloc:
                hip.hipSetDevice(src_device)
                yield src_alloc, dst_alloc


def returns_before_gates_open(mod, gate_devices, call, deadline_s: float = 1.0):
    """A gate on the null stream of each of ``gate_devices`` (in that order, the last one current after),
    then ``call()`` in a thread; ``call`` must return while every gate is shut (within ``deadline_s``).
    Gives (whether it did, hipStreamQuery(nullptr) of the current device right after it returned or
    None when it did not)."""
    with contextlib.ExitStack() as es:
        gates = []
        for d in gate_devices:
            hip.hipSetDevice(d)
            g = es.enter_context(Gate(mod))
            g.launch(None)
            gates.append(g)
        out = {}

        def worker():
            try:
                call()
                out["status"] = hip.hipStreamQuery(None)
                out["while_shut"] = all(g.flag[0] == 0 for g in gates)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc
            out["done"] = True

        current = gate_devices[-1]
        t = threading.Thread(target=lambda: (hip.hipSetDevice(current), worker()))
        t.start()
        try:
            wait_until(lambda: out.get("done"), deadline_s, "the copy to return while device work runs")
        except AssertionError:
            pass                # reported below, once the gates are open and the thread has ended
        for g in gates:
            g.open()
        t.join(60)
        assert not t.is_alive(), "the copy never returned"
        hip.hipSetDevice(current)
    if "exc" in out:
        raise out["exc"]
    returned = bool(out.get("while_shut"))
    return returned, (out["status"] if returned else None)


def need_two_devices() -> int:
    """The device count; the test is skipped with fewer than two devices."""
    device_count = hip.hipGetDeviceCount()
    if device_count < 2:
        pytest.skip("Skipping because devices < 2")
    return device_count


def positive_default(mod, copy, stream=None, result_flags: int = 0) -> None:
    """Positive_Default: for each size and (src, dst) pair with peer access, VectorSet on the source
    (on ``stream``), ``copy(dst, dst_device, src, src_device, nbytes)`` (which has finished when it
    returns), the destination read back into hipHostMalloc memory (``result_flags``)."""
    device_count = need_two_devices()
    for allocation_size in SIZES:
        for src_device in range(device_count):
            for dst_device in range(device_count):
                with peer_access(src_device, dst_device) as can_access_peer:
                    if not can_access_peer:
                        continue        # INFO("Peer access cannot be enabled between devices ...")
                    with Alloc("hipMalloc", allocation_size) as src_alloc, \
                            Alloc("hipHostMalloc", allocation_size, result_flags) as result:
                        hip.hipSetDevice(dst_device)
                        with Alloc("hipMalloc", allocation_size) as dst_alloc:
                            element_count = allocation_size // 4
                            expected_value = 22
                            hip.hipSetDevice(src_device)
                            vector_set(mod, src_alloc.ptr, expected_value, element_count, stream)
                            hip.hipGetLastError()
                            copy(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, allocation_size)
                            hip.hipMemcpy(result.ptr, dst_alloc.ptr, allocation_size, hip.hipMemcpyDeviceToHost)
                            assert (result.host == expected_value).all(), (allocation_size, src_device, dst_device)


def positive_zero_size(mod, copy, stream=None) -> None:
    """Positive_ZeroSize: ``copy(dst, dst_device, src, src_device, 0)`` (finished when it returns) leaves
    the destination's values (VectorSet on ``stream``) as they were."""
    need_two_devices()
    src_device, dst_device = 0, 1
    allocation_size = K_PAGE_SIZE
    with peer_access(src_device, dst_device) as can_access_peer:
        if not can_access_peer:
            return
        with Alloc("hipMalloc", allocation_size) as src_alloc, \
                Alloc("hipHostMalloc", allocation_size, hip.hipHostMallocPortable) as result:
            hip.hipSetDevice(dst_device)
            with Alloc("hipMalloc", allocation_size) as dst_alloc:
                element_count = allocation_size // 4
                hip.hipSetDevice(src_device)
                vector_set(mod, src_alloc.ptr, 22, element_count, stream)
                hip.hipGetLastError()
                expected_value = 20
                hip.hipSetDevice(dst_device)
                vector_set(mod, dst_alloc.ptr, expected_value, element_count, stream)
                hip.hipGetLastError()
                hip.hipSetDevice(src_device)
                result.host[:] = 21
                copy(dst_alloc.ptr, dst_device, src_alloc.ptr, src_device, 0)
                hip.hipMemcpy(result.ptr, dst_alloc.ptr, allocation_size, hip.hipMemcpyDeviceToHost)
                assert (result.host == expected_value).all()


def negative_parameters(call, section: str, *stream) -> None:
    """Negative_Parameters: ``call(dst, dst_device, src, src_device, nbytes, *stream)`` with the
    SECTION's bad argument raises its error; "Passing invalid Stream" (``stream`` given) passes a
    destroyed stream instead of ``stream``."""
    device_count = need_two_devices()
    src_device, dst_device = 0, 1
    with page_pair(src_device, dst_device) as pair:
        if pair is None:
            return
        src, dst = (a.ptr for a in pair)
        n = K_PAGE_SIZE
        if section == "Passing invalid Stream":
            args, expected = (dst, dst_device, src, src_device, n), "hipErrorContextIsDestroyed"
            stream = (invalid_stream(),)
        else:
            args, expected = {
                "Nullptr to Destination Pointer": ((None, dst_device, src, src_device, n),
                                                   "hipErrorInvalidValue"),
                "Nullptr to Source Pointer": ((dst, dst_device, None, src_device, n), "hipErrorInvalidValue"),
                "Passing more than allocated size": ((dst, dst_device, src, src_device, n + 1),
                                                     "hipErrorInvalidValue"),
                "Passing invalid Destination device ID": ((dst, device_count, src, src_device, n),
                                                          "hipErrorInvalidDevice"),
                "Passing invalid Source device ID": ((dst, dst_device, src, device_count, n),
                                                     "hipErrorInvalidDevice"),
            }[section]
        with pytest.raises(hip.HipError) as ei:
            call(*args, *stream)
        assert ei.value.error == hip.hipError_t[expected]
