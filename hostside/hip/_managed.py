"""Managed memory: hipMallocManaged, hipMemPrefetchAsync, hipMemAdvise, hipStreamAttachMemAsync; and
the queries of host memory a device reaches, hipHostGetDevicePointer and hipHostGetFlags.

As CLR allocates it (an SVM fine-grained buffer in system memory), a managed allocation here is
fine-grained memory of the host pool: coherent for the host (``host_array``) and every device, so
there is nothing to migrate. A prefetch is a checked no-op on its stream, an advice and a stream
attachment are checked and kept for nothing. hipPointerGetAttributes reports hipMemoryTypeManaged
(``isManaged`` 1) with the device current at allocation; hipFree frees it; a copy accepts it on
either side of any hipMemcpyKind (stream copies, 1-D and 2-D, and graph memcpy nodes).

Checks as in CLR (hipamd/src/hip_hmm.cpp): size 0 or flags other than hipMemAttachGlobal /
hipMemAttachHost is hipErrorInvalidValue; a null pointer, a count of 0 or a range past its
allocation is hipErrorInvalidValue; a device that is neither hipCpuDeviceId nor a device index is
hipErrorInvalidDevice; during a stream capture that forbids it, hipErrorStreamCaptureUnsupported.

hipHostGetDevicePointer gives the device's address of host memory (the same address: system memory
is mapped for every device at the host's address) and hipHostGetFlags the flags hipHostMalloc was
given, for the allocation's base or any byte inside it (CLR hip_memory.cpp, checked as there)."""
from __future__ import annotations

import enum

from shm_layout import layouts as L

from ._capture_rules import check_unsafe
from ._context import _current_device, _get_stream, _st
from ._errors import _api, _raise, hipError_t
from ._memory import _host_info, _managed
from ._misc import _allocation, _int

__all__ = ["hipMallocManaged", "hipMemPrefetchAsync", "hipMemAdvise", "hipStreamAttachMemAsync", "hipMemoryAdvise",
           "hipMemAttachGlobal", "hipMemAttachHost", "hipMemAttachSingle", "hipCpuDeviceId", "hipHostGetDevicePointer",
           "hipHostGetFlags"]

#: hipMallocManaged / hipStreamAttachMemAsync flags (hip_runtime_api.h)
hipMemAttachGlobal, hipMemAttachHost, hipMemAttachSingle = 1, 2, 4
#: the device id that names the host (hipMemPrefetchAsync, hipMemAdvise)
hipCpuDeviceId = -1


class hipMemoryAdvise(enum.IntEnum):
    """hipMemAdvise's advice, with hip_runtime_api.h's values."""
    hipMemAdviseSetReadMostly = 1
    hipMemAdviseUnsetReadMostly = 2
    hipMemAdviseSetPreferredLocation = 3
    hipMemAdviseUnsetPreferredLocation = 4
    hipMemAdviseSetAccessedBy = 5
    hipMemAdviseUnsetAccessedBy = 6
    hipMemAdviseSetCoarseGrain = 100
    hipMemAdviseUnsetCoarseGrain = 101


@_api
def hipMallocManaged(size: int, flags: int = hipMemAttachGlobal) -> int:
    """``size`` bytes of managed memory, reachable by the host and every device at one address."""
    if not _int(size) or size <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a positive int, not {size!r}")
    if not _int(flags) or flags not in (hipMemAttachGlobal, hipMemAttachHost):
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be hipMemAttachGlobal or hipMemAttachHost, not {flags!r}")
    check_unsafe("hipMallocManaged")
    rt = _st().rt
    ptr = rt.allocate(None, int(size), L.ALLOC_HOST)
    _managed(rt)[ptr] = (_current_device(), int(size))
    return ptr


def _range(api: str, ptr, count) -> None:
    """``[ptr, ptr + count)`` lies in one live hipMalloc/hipHostMalloc/hipMallocManaged allocation."""
    if not _int(ptr) or not ptr:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: ptr must be a non-null pointer (int), not {ptr!r}")
    if not _int(count) or count <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: count must be a positive int, not {count!r}")
    a = _allocation(_st().rt, ptr)
    if a is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{api}: {int(ptr):#x} is not in a live allocation")
    if int(ptr) + int(count) > a.base + a.size:
        _raise(hipError_t.hipErrorInvalidValue,
               f"{api}: [{int(ptr):#x}, +{int(count)}) runs past its allocation [{a.base:#x}, +{a.size})")


def _device(api: str, device) -> None:
    if not _int(device) or not (device == hipCpuDeviceId or 0 <= device < len(_st().rt.agents)):
        _raise(hipError_t.hipErrorInvalidDevice, f"{api}: device must be hipCpuDeviceId (-1) or a device "
                                                 f"index, not {device!r}")


@_api
def hipMemPrefetchAsync(ptr: int, count: int, device: int, stream=None) -> None:
    """Prefetch ``count`` bytes at ``ptr`` to ``device`` (hipCpuDeviceId: the host) on ``stream``:
    checked, then nothing to do (the memory is coherent system memory for every agent)."""
    check_unsafe("hipMemPrefetchAsync")
    _range("hipMemPrefetchAsync", ptr, count)
    _device("hipMemPrefetchAsync", device)
    _get_stream(stream)                 # a bad or destroyed stream is its error


@_api
def hipMemAdvise(ptr: int, count: int, advice, device: int) -> None:
    """Advise how ``count`` bytes at ``ptr`` are used: checked, and changes nothing here."""
    check_unsafe("hipMemAdvise")
    _range("hipMemAdvise", ptr, count)
    try:
        advice = hipMemoryAdvise(advice)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"hipMemAdvise: advice must be a hipMemoryAdvise, not {advice!r}")
    if advice not in (hipMemoryAdvise.hipMemAdviseSetReadMostly, hipMemoryAdvise.hipMemAdviseUnsetReadMostly):
        _device("hipMemAdvise", device)     # CLR checks the device of every other advice


@_api
def hipStreamAttachMemAsync(stream, ptr: int, length: int = 0, flags: int = hipMemAttachSingle) -> None:
    """Attach managed memory to ``stream`` (hipMemAttachSingle) or to all (hipMemAttachGlobal,
    hipMemAttachHost): checked as in CLR, and changes nothing here (every agent sees the memory).
    A null pointer, other flags, hipMemAttachSingle on the null stream, a pointer outside every
    allocation, or a ``length`` of a managed allocation that is neither 0 nor its size is
    hipErrorInvalidValue."""
    if not _int(ptr) or not ptr:
        _raise(hipError_t.hipErrorInvalidValue, f"hipStreamAttachMemAsync: ptr must be a non-null pointer, not {ptr!r}")
    if not _int(flags) or flags not in (hipMemAttachGlobal, hipMemAttachHost, hipMemAttachSingle):
        _raise(hipError_t.hipErrorInvalidValue, f"hipStreamAttachMemAsync: flags must be hipMemAttachGlobal, "
                                                f"hipMemAttachHost or hipMemAttachSingle, not {flags!r}")
    if flags == hipMemAttachSingle and (stream is None or (_int(stream) and stream == 0)):
        _raise(hipError_t.hipErrorInvalidValue, "hipStreamAttachMemAsync: hipMemAttachSingle needs a stream")
    if not _int(length) or length < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"hipStreamAttachMemAsync: length must be a non-negative int, "
                                                f"not {length!r}")
    _get_stream(stream)
    rt = _st().rt
    a = _allocation(rt, ptr)
    if a is None:
        _raise(hipError_t.hipErrorInvalidValue, f"hipStreamAttachMemAsync: {int(ptr):#x} is not in a live allocation")
    m = _managed(rt).get(a.base)
    if m is not None and length and length != m[1]:
        _raise(hipError_t.hipErrorInvalidValue, f"hipStreamAttachMemAsync: length {length} is neither 0 nor the "
                                                f"allocation's {m[1]} bytes")


@_api
def hipHostGetDevicePointer(hostPtr: int, flags: int = 0) -> int:
    """The device pointer of ``hostPtr``: memory of a live allocation (hipHostMalloc, hipMallocManaged,
    hipMalloc) is reached by the device at the same address. A null pointer, one outside every live
    allocation (a numpy array's memory: hipHostRegister is not supported) or ``flags`` other than 0 is
    hipErrorInvalidValue."""
    if not _int(flags) or flags != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"hipHostGetDevicePointer: flags must be 0, not {flags!r}")
    if not _int(hostPtr) or not hostPtr:
        _raise(hipError_t.hipErrorInvalidValue, f"hipHostGetDevicePointer: hostPtr must be a non-null pointer (int), "
                                                f"not {hostPtr!r}")
    if _allocation(_st().rt, hostPtr) is None:
        _raise(hipError_t.hipErrorInvalidValue, f"hipHostGetDevicePointer: {int(hostPtr):#x} is not in a live allocation")
    return int(hostPtr)


@_api
def hipHostGetFlags(hostPtr: int) -> int:
    """The flags hipHostMalloc (hipHostAlloc, hipMallocHost) was given for the allocation holding
    ``hostPtr``. A null pointer, or one that is not in pinned host memory (device or managed memory,
    a numpy array), is hipErrorInvalidValue."""
    if not _int(hostPtr) or not hostPtr:
        _raise(hipError_t.hipErrorInvalidValue, f"hipHostGetFlags: hostPtr must be a non-null pointer (int), "
                                                f"not {hostPtr!r}")
    rt = _st().rt
    a = _allocation(rt, hostPtr)
    info = None if a is None or a.agent >= 0 else _host_info(rt).get(a.base)
    if info is None:
        _raise(hipError_t.hipErrorInvalidValue, f"hipHostGetFlags: {int(hostPtr):#x} is not in memory hipHostMalloc "
                                                f"returned")
    return info[1]
