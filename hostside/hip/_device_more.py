"""Smaller device calls: the device's uuid, peer-to-peer attributes and link topology, the profiler
markers, hipSetValidDevices, hipMemAllocHost and hipGetDevicePropertiesR0600, with the checks and
codes of CLR (hip_device.cpp, hip_peer.cpp, hip_profile.cpp, hip_device_runtime.cpp, hip_memory.cpp).

The emulated devices are linked as PCIe peers of one hop: every device reaches every other's memory
(hipDeviceCanAccessPeer), through the one platform's shared memory."""
from __future__ import annotations

import enum

from ._capture_rules import check_unsafe
from ._context import _st
from ._device import _check_device, _properties, hipDeviceProp_t, hipGetDeviceProperties
from ._errors import _api, _is_int, _raise, hipError_t
from ._memory import hipHostMalloc

__all__ = ["hipDeviceGetUuid", "hipDeviceP2PAttr", "hipDevP2PAttrPerformanceRank", "hipDevP2PAttrAccessSupported",
           "hipDevP2PAttrNativeAtomicSupported", "hipDevP2PAttrHipArrayAccessSupported", "hipDeviceGetP2PAttribute",
           "HSA_AMD_LINK_INFO_TYPE_PCIE", "hipExtGetLinkTypeAndHopCount", "hipProfilerStart", "hipProfilerStop",
           "hipSetValidDevices", "hipMemAllocHost", "hipGetDevicePropertiesR0600"]

_E = hipError_t


class hipDeviceP2PAttr(enum.IntEnum):
    """hipDeviceP2PAttr as hip_runtime_api.h numbers it."""
    hipDevP2PAttrPerformanceRank = 0
    hipDevP2PAttrAccessSupported = 1
    hipDevP2PAttrNativeAtomicSupported = 2
    hipDevP2PAttrHipArrayAccessSupported = 3


hipDevP2PAttrPerformanceRank = hipDeviceP2PAttr.hipDevP2PAttrPerformanceRank
hipDevP2PAttrAccessSupported = hipDeviceP2PAttr.hipDevP2PAttrAccessSupported
hipDevP2PAttrNativeAtomicSupported = hipDeviceP2PAttr.hipDevP2PAttrNativeAtomicSupported
hipDevP2PAttrHipArrayAccessSupported = hipDeviceP2PAttr.hipDevP2PAttrHipArrayAccessSupported

#: hsa_amd_link_info_type_t: what hipExtGetLinkTypeAndHopCount reports for two emulated devices
HSA_AMD_LINK_INFO_TYPE_PCIE = 2
_HOPS = 1
#: hsa_amd_memory_pool_link_info_t.atomic_support_64bit: the devices' memory is the platform's shared
#: memory, where every atomic of one device is seen by the others
_ATOMICS = 1


def _ndev() -> int:
    return len(_st().rt.agents)


@_api
def hipDeviceGetUuid(device: int) -> bytes:
    """The 16 bytes of ``device``'s hipUUID (hipDeviceProp_t.uuid): ASCII hex digits as ROCm reports
    a GPU's unique id, stable across runs and distinct per emulated device. A bad device is
    hipErrorInvalidDevice."""
    rt = _st().rt
    _check_device(rt, device)
    return _properties(rt, int(device))["uuid"]


@_api
def hipDeviceGetP2PAttribute(attr, srcDevice: int, dstDevice: int) -> int:
    """The value of ``attr`` (a hipDeviceP2PAttr) for the link from ``srcDevice`` to ``dstDevice``:
    AccessSupported and HipArrayAccessSupported as hipDeviceCanAccessPeer (1), NativeAtomicSupported
    1, PerformanceRank the link type (CLR reads it for the rank: PCIe, 2). As in CLR: the same device
    twice or a device past the last is hipErrorInvalidDevice (checked first), an attribute out of the
    enum hipErrorInvalidValue, then a negative device hipErrorInvalidDevice."""
    n = _ndev()
    for d in (srcDevice, dstDevice):
        if not _is_int(d):
            _raise(_E.hipErrorInvalidDevice, f"a device must be an int, not {d!r}")
    if srcDevice == dstDevice or srcDevice >= n or dstDevice >= n:
        _raise(_E.hipErrorInvalidDevice, f"srcDevice and dstDevice must be two devices of [0, {n}), "
               f"not {srcDevice} and {dstDevice}")
    try:
        a = hipDeviceP2PAttr(attr)
    except ValueError:
        _raise(_E.hipErrorInvalidValue, f"attr must be a hipDeviceP2PAttr, not {attr!r}")
    if srcDevice < 0 or dstDevice < 0:
        _raise(_E.hipErrorInvalidDevice, f"a device must be in [0, {n}), not {min(srcDevice, dstDevice)}")
    if a == hipDevP2PAttrPerformanceRank:
        return HSA_AMD_LINK_INFO_TYPE_PCIE
    if a == hipDevP2PAttrNativeAtomicSupported:
        return _ATOMICS
    return 1        # access (and array access: the devices share one architecture) as hipDeviceCanAccessPeer


@_api
def hipExtGetLinkTypeAndHopCount(device1: int, device2: int) -> tuple[int, int]:
    """(linktype, hopcount) of the link between two devices: (HSA_AMD_LINK_INFO_TYPE_PCIE, 1) for any
    two emulated devices (each reaches the other: hipDeviceCanAccessPeer). As in CLR: the same device
    twice or a negative one is hipErrorInvalidValue, a device past the last hipErrorInvalidDevice."""
    for d in (device1, device2):
        if not _is_int(d):
            _raise(_E.hipErrorInvalidValue, f"a device must be an int, not {d!r}")
    if device1 == device2 or device1 < 0 or device2 < 0:
        _raise(_E.hipErrorInvalidValue, f"device1 and device2 must be two devices, not {device1} and {device2}")
    n = _ndev()
    if device1 >= n or device2 >= n:
        _raise(_E.hipErrorInvalidDevice, f"a device must be in [0, {n}), not {max(device1, device2)}")
    return HSA_AMD_LINK_INFO_TYPE_PCIE, _HOPS


@_api
def hipProfilerStart() -> None:
    """Deprecated; CLR does not implement it: hipErrorNotSupported (hdemu records its trace all the
    time: see README, Traces)."""
    _st()
    _raise(_E.hipErrorNotSupported, "hipProfilerStart is not implemented (as in CLR)")


@_api
def hipProfilerStop() -> None:
    """Deprecated; hipErrorNotSupported, as in CLR."""
    _st()
    _raise(_E.hipErrorNotSupported, "hipProfilerStop is not implemented (as in CLR)")


@_api
def hipSetValidDevices(device_arr=None, len: int = 0) -> None:  # noqa: A002 - HIP's parameter name
    """Not implemented by CLR: hipErrorNotSupported whatever the arguments."""
    _st()
    _raise(_E.hipErrorNotSupported, "hipSetValidDevices is not implemented (as in CLR)")


@_api
def hipMemAllocHost(size: int) -> int:
    """The older name of hipHostMalloc(size, 0); as in CLR it fails during a capture that forbids
    unsafe calls (hipErrorStreamCaptureUnsupported)."""
    check_unsafe("hipMemAllocHost")
    return hipHostMalloc(size, 0)


@_api
def hipGetDevicePropertiesR0600(device: int) -> hipDeviceProp_t:
    """hipGetDeviceProperties (the name hip_runtime_api.h maps it to since HIP 6.0)."""
    return hipGetDeviceProperties(device)
