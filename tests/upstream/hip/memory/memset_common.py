"""What the ported memset files share: the typed hipMemsetD8/D16/D32[Async] template of hipMemsetD*.cc
(ValidBuffer / InvalidArg / KernelBuffer), the 1-D parts of MemUtils.hh (allocation kinds, one memset call
of each API, read-back check) and the "does this memset wait for the device" check of hipMemsetSync.cc.
hipHostRegister is not in hdemu: only the hipMalloc and hipHostMalloc allocation kinds exist here."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hipkit import Gate, wait_until

__all__ = ["DTYPE", "MEMSET_D", "BUFFER_NELEMS", "pattern_of", "check_buffer", "valid_buffer", "invalid_arg",
           "kernel_buffer", "ALLOC_KINDS", "alloc", "free", "memset_call", "read_back", "sync_check"]

#: element type of each typed memset
DTYPE = {"D8": np.uint8, "D16": np.uint16, "D32": np.uint32}
#: (synchronous, asynchronous) function of each typed memset
MEMSET_D = {"D8": (hip.hipMemsetD8, hip.hipMemsetD8Async), "D16": (hip.hipMemsetD16, hip.hipMemsetD16Async),
            "D32": (hip.hipMemsetD32, hip.hipMemsetD32Async)}
#: upstream: 4096, 4096*8, 4096*32, 4096*128, 4096*256 elements (the port stops at 4096*32)
BUFFER_NELEMS = (4096, 4096 * 8, 4096 * 32)


def pattern_of(width: str) -> int:
    """static_cast<test_target_t>(0xDEADBEEF)."""
    return int(np.array(0xDEADBEEF, dtype=np.uint64).astype(DTYPE[width]))


def _memset(width: str, is_async: bool, ptr, value, count, stream):
    fn = MEMSET_D[width][1 if is_async else 0]
    if is_async:
        fn(ptr, value, count, stream)
    else:
        fn(ptr, value, count)


def check_buffer(ptr: int, count: int, dtype, expected: int) -> bool:
    """checkBuffer: hipMemcpy (default kind) to the host, every element equal to ``expected``."""
    host = np.zeros(count, dtype=dtype)
    hip.hipMemcpy(host, ptr, count * np.dtype(dtype).itemsize, hip.hipMemcpyDefault)
    return bool(np.all(host == dtype(expected)))


def valid_buffer(width: str, is_async: bool, section: str) -> None:
    """Unit_hipMemsetD*_ValidBuffer: each size of buffer (device or pinned host) set to the pattern."""
    dtype, pattern = DTYPE[width], pattern_of(width)
    stream = hip.hipStreamCreate() if is_async else None
    try:
        for size in BUFFER_NELEMS:
            nbytes = size * np.dtype(dtype).itemsize
            ptr = hip.hipMalloc(nbytes) if section == "Device Buffer" else hip.hipHostMalloc(nbytes, 0)
            try:
                _memset(width, is_async, ptr, pattern, size, stream)
                if is_async:
                    hip.hipStreamSynchronize(stream)
                assert check_buffer(ptr, size, dtype, pattern), (width, section, size)
            finally:
                (hip.hipFree if section == "Device Buffer" else hip.hipHostFree)(ptr)
    finally:
        if stream is not None:
            hip.hipStreamDestroy(stream)


def invalid_arg(width: str, is_async: bool, section: str) -> None:
    """Unit_hipMemsetD*_InvalidArg: a null destination is hipErrorInvalidValue, a zero count succeeds."""
    n = 4096
    ptr = hip.hipMalloc(n)
    try:
        if section == "nullptr destination":
            with pytest.raises(hip.HipError) as ei:
                _memset(width, is_async, None, pattern_of(width), n, None)
            assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
        else:
            _memset(width, is_async, ptr, pattern_of(width), 0, None)
    finally:
        hip.hipFree(ptr)


def kernel_buffer(mod, width: str, is_async: bool) -> None:
    """Unit_hipMemsetD*_KernelBuffer: two memset buffers (pattern and 1) added by vectorADD."""
    n, tpb = 4096, 256
    dtype, pattern = DTYPE[width], pattern_of(width)
    nbytes = n * np.dtype(dtype).itemsize
    src, one, dst = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    stream = hip.hipStreamCreate()
    try:
        _memset(width, is_async, src, pattern, n, stream)
        _memset(width, is_async, one, 1, n, stream)
        f = hip.hipModuleGetFunction(mod, f"memset_vector_add_u{8 * np.dtype(dtype).itemsize}")
        hip.hipModuleLaunchKernel(f, (n + tpb - 1) // tpb, 1, 1, tpb, 1, 1, 0, stream, [src, one, dst, n])
        hip.hipStreamSynchronize(stream)
        assert check_buffer(dst, n, dtype, (pattern + 1) & ((1 << (8 * np.dtype(dtype).itemsize)) - 1))
    finally:
        for p in (src, one, dst):
            hip.hipFree(p)
        hip.hipStreamDestroy(stream)


# -- MemUtils.hh, 1-D ------------------------------------------------------------------------------------
ALLOC_KINDS = ("deviceMalloc", "hostMalloc")


def alloc(kind: str, nbytes: int) -> int:
    if kind == "deviceMalloc":
        return hip.hipMalloc(nbytes)
    if kind == "hostMalloc":
        return hip.hipHostMalloc(nbytes)
    raise ValueError(f"allocation kind must be one of {ALLOC_KINDS}, not {kind!r}")


def free(kind: str, ptr: int) -> None:
    (hip.hipFree if kind == "deviceMalloc" else hip.hipHostFree)(ptr)


def memset_call(api: str, ptr: int, value: int, count: int, is_async: bool, stream=None) -> None:
    """memsetCheck, 1-D: ``api`` is "hipMemset" (``count`` bytes) or "D8" / "D16" / "D32" (elements)."""
    if api == "hipMemset":
        if is_async:
            hip.hipMemsetAsync(ptr, value, count, stream)
        else:
            hip.hipMemset(ptr, value, count)
    else:
        _memset(api, is_async, ptr, value, count, stream)


def read_back(kind: str, ptr: int, count: int, dtype) -> np.ndarray:
    """verifyData's copy: device memory with a device-to-host copy, host memory with a host-to-host one."""
    host = np.zeros(count, dtype=dtype)
    direction = hip.hipMemcpyDeviceToHost if kind == "deviceMalloc" else hip.hipMemcpyHostToHost
    hip.hipMemcpy(host, ptr, count * np.dtype(dtype).itemsize, direction)
    return host


def sync_check(mod, call, should_wait: bool, stream=None, deadline_s: float = 1.0) -> None:
    """Device work that runs until the test opens it (a Gate: upstream's LaunchDelayKernel) is on ``stream``,
    then ``call()`` runs in a thread. If it must not wait, it has to return while the gate is shut (within a
    deadline) and the stream is then still busy; if it must wait, it may not return before the gate is
    opened, and the stream is idle once it has returned."""
    with Gate(mod) as gate:
        gate.launch(stream)
        out = {}

        def worker():
            try:
                call()
                out["returned_while_closed"] = gate.flag[0] == 0
                if not should_wait and out["returned_while_closed"]:
                    out["status"] = hip.hipStreamQuery(stream)
                    out["status_while_closed"] = gate.flag[0] == 0
                elif should_wait:
                    out["status"] = hip.hipStreamQuery(stream)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                out["exc"] = exc
            out["done"] = True

        t = threading.Thread(target=worker)
        t.start()
        if should_wait:
            t.join(0.05)        # not synchronisation: only gives a wrongly early return the chance to show
        else:
            try:
                wait_until(lambda: out.get("done"), deadline_s, "the memset to return while the device is busy")
            except AssertionError:
                pass            # reported below, once the gate is open and the thread has ended
        gate.open()
        t.join(60)
        assert not t.is_alive(), "the memset never returned"
        if "exc" in out:
            raise out["exc"]
        if should_wait:
            assert not out["returned_while_closed"], "the memset returned while the device work was running"
            assert out["status"] == hip.hipError_t.hipSuccess, "the stream was busy when the memset returned"
        else:
            assert out["returned_while_closed"], "the memset waited for the device work"
            if out.get("status_while_closed"):
                assert out["status"] == hip.hipError_t.hipErrorNotReady
