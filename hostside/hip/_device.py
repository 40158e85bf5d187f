"""Devices: count, current device, properties and attributes (one table of limits that both read),
versions, synchronize and reset."""
from __future__ import annotations

import enum
import hashlib

import numpy as np

from ._capture_rules import check_device_sync
from ._context import _current_device, _reset, _set_current_device, _st, _synchronize_device
from ._errors import _api, _raise, hipError_t
from ._limits import MAX_BLOCK_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK, WARP_SIZE

__all__ = ["hipDeviceCanAccessPeer", "hipDeviceEnablePeerAccess", "hipDeviceDisablePeerAccess", "hipGetDeviceCount",
           "hipSetDevice", "hipGetDevice", "hipDeviceProp_t", "hipGetDeviceProperties",
           "hipDeviceAttribute_t", "hipDeviceGetAttribute", "hipDriverGetVersion", "hipRuntimeGetVersion",
           "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH", "HIP_VERSION",
           "hipDeviceSynchronize", "hipDeviceReset"]

#: The compute capability hipGetDeviceProperties reports: the emulated GPU is a gfx9-class (GCN/CDNA,
#: 64-wide wavefronts) device, as ROCm reports gfx90a/gfx942 (major 9), so code that branches on
#: ``major`` takes its AMD gfx9 path.
DEVICE_MAJOR, DEVICE_MINOR = 9, 0


@_api
def hipGetDeviceCount() -> int:
    return len(_st().rt.agents)


@_api
def hipSetDevice(device: int) -> None:
    n = len(_st().rt.agents)
    if not isinstance(device, int) or not 0 <= device < n:
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {n}), not {device!r}")
    _set_current_device(device)


@_api
def hipGetDevice() -> int:
    _st()
    return _current_device()


class hipDeviceProp_t(dict):
    """The properties of a device: a dict whose keys are also attributes (``p.totalGlobalMem`` or
    ``p["totalGlobalMem"]``); a missing one is an AttributeError (so ``hasattr`` works) or a KeyError."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"hipDeviceProp_t has no property {name!r}") from None


#: The fixed properties of the emulated device; the launch limits come from ``_limits`` (which
#: hipModuleLaunchKernel checks). ``hipGetDeviceProperties`` reports them with the values that depend
#: on the platform (``_properties``), and ``hipDeviceGetAttribute`` reads those properties, so the two
#: always agree. Rates are in kHz, sizes in bytes; the rest is what a gfx9-class device reports.
DEVICE_LIMITS = {
    "maxThreadsPerBlock": MAX_THREADS_PER_BLOCK, "maxThreadsDim": tuple(MAX_BLOCK_DIM),
    "maxGridSize": tuple(MAX_GRID_DIM), "warpSize": WARP_SIZE, "sharedMemPerBlock": SHARED_MEM_PER_BLOCK,
    "sharedMemPerBlockOptin": SHARED_MEM_PER_BLOCK,
    "sharedMemPerMultiprocessor": 65536, "maxSharedMemoryPerMultiProcessor": 65536,
    "reservedSharedMemPerBlock": 0, "totalConstMem": 65536, "regsPerBlock": 65536, "regsPerMultiprocessor": 65536,
    "maxThreadsPerMultiProcessor": 2048, "maxBlocksPerMultiProcessor": 32,
    "clockRate": 1_700_000, "memoryClockRate": 1_600_000, "memoryBusWidth": 4096, "l2CacheSize": 8 << 20,
    "persistingL2CacheMaxSize": 0, "memPitch": 2**31 - 1, "textureAlignment": 256, "texturePitchAlignment": 256,
    "surfaceAlignment": 256, "asyncEngineCount": 1, "concurrentKernels": 1, "canMapHostMemory": 1,
    "canUseHostPointerForRegisteredMem": 1, "integrated": 0, "managedMemory": 0, "concurrentManagedAccess": 0,
    "directManagedMemAccessFromHost": 0, "pageableMemoryAccess": 0, "pageableMemoryAccessUsesHostPageTables": 0,
    "hostNativeAtomicSupported": 1, "cooperativeMultiDeviceLaunch": 0,
    # hipLaunchCooperativeKernel / hipModuleLaunchCooperativeKernel (_launch_more): a grid runs as one
    # vectorised call, so a grid barrier holds; grids over what occupancy lets be co-resident are refused
    "cooperativeLaunch": 1,
    "computeMode": 0, "computePreemptionSupported": 0, "kernelExecTimeoutEnabled": 0, "ECCEnabled": 0,
    "globalL1CacheSupported": 1, "localL1CacheSupported": 1, "streamPrioritiesSupported": 0,
    "pciDomainID": 0, "pciDeviceID": 0, "isLargeBar": 1, "asicRevision": 0,
    # stream-ordered allocator and created pools (_ordered, _mempool); no pool is exportable: no handle type
    "memoryPoolsSupported": 1, "memoryPoolSupportedHandleTypes": 0,
}


def _properties(rt, device: int) -> dict:
    topo = rt.pm.topo
    n = len(rt.agents)
    return dict(DEVICE_LIMITS,
                name=rt.agents[device].name, gcnArchName=f"hdemu-{topo.cfg['arch']}",
                major=DEVICE_MAJOR, minor=DEVICE_MINOR, totalGlobalMem=topo.memory_bytes,
                multiProcessorCount=topo.n_engines, pciBusID=device, isMultiGpuBoard=int(n > 1),
                multiGpuBoardGroupID=0, maxQueues=topo.max_queues, queueSizeMax=topo.qmax,
                uuid=_uuid(topo.cfg['arch'], device))


def _uuid(arch, device: int) -> bytes:
    """hipDeviceProp_t.uuid / hipDeviceGetUuid: 16 ASCII hex digits, as ROCm reports a GPU's unique id
    (rocminfo's "GPU-<16 hex digits>"); stable across runs, one per emulated device."""
    return hashlib.sha256(f"hdemu:{arch}:{device}".encode()).hexdigest()[:16].encode()


def _check_device(rt, device) -> None:
    n = len(rt.agents)
    if not isinstance(device, (int, np.integer)) or isinstance(device, bool) or not 0 <= device < n:
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {n}), not {device!r}")


@_api
def hipGetDeviceProperties(device: int) -> hipDeviceProp_t:
    rt = _st().rt
    _check_device(rt, device)
    return hipDeviceProp_t(_properties(rt, int(device)))


# -- attributes --------------------------------------------------------------------------------------
# hipDeviceAttribute_t as hip_runtime_api.h numbers it: the CUDA-compatible attributes count up from 0,
# the AMD-specific ones from 10000 (``...Begin``/``...End`` are markers; a Begin is an alias of the
# first attribute of its range, whose name is the canonical one).
_CUDA_COMPATIBLE = """
    EccEnabled AccessPolicyMaxWindowSize AsyncEngineCount CanMapHostMemory CanUseHostPointerForRegisteredMem
    ClockRate ComputeMode ComputePreemptionSupported ConcurrentKernels ConcurrentManagedAccess CooperativeLaunch
    CooperativeMultiDeviceLaunch DeviceOverlap DirectManagedMemAccessFromHost GlobalL1CacheSupported
    HostNativeAtomicSupported Integrated IsMultiGpuBoard KernelExecTimeout L2CacheSize LocalL1CacheSupported Luid
    LuidDeviceNodeMask ComputeCapabilityMajor ManagedMemory MaxBlocksPerMultiProcessor MaxBlockDimX MaxBlockDimY
    MaxBlockDimZ MaxGridDimX MaxGridDimY MaxGridDimZ MaxSurface1D MaxSurface1DLayered MaxSurface2D
    MaxSurface2DLayered MaxSurface3D MaxSurfaceCubemap MaxSurfaceCubemapLayered MaxTexture1DWidth
    MaxTexture1DLayered MaxTexture1DLinear MaxTexture1DMipmap MaxTexture2DWidth MaxTexture2DHeight
    MaxTexture2DGather MaxTexture2DLayered MaxTexture2DLinear MaxTexture2DMipmap MaxTexture3DWidth
    MaxTexture3DHeight MaxTexture3DDepth MaxTexture3DAlt MaxTextureCubemap MaxTextureCubemapLayered MaxThreadsDim
    MaxThreadsPerBlock MaxThreadsPerMultiProcessor MaxPitch MemoryBusWidth MemoryClockRate ComputeCapabilityMinor
    MultiGpuBoardGroupID MultiprocessorCount Unused1 PageableMemoryAccess PageableMemoryAccessUsesHostPageTables
    PciBusId PciDeviceId PciDomainID PersistingL2CacheMaxSize MaxRegistersPerBlock MaxRegistersPerMultiprocessor
    ReservedSharedMemPerBlock MaxSharedMemoryPerBlock SharedMemPerBlockOptin SharedMemPerMultiprocessor
    SingleToDoublePrecisionPerfRatio StreamPrioritiesSupported SurfaceAlignment TccDriver TextureAlignment
    TexturePitchAlignment TotalConstantMemory TotalGlobalMem UnifiedAddressing Unused2 WarpSize
    MemoryPoolsSupported VirtualMemoryManagementSupported HostRegisterSupported MemoryPoolSupportedHandleTypes
""".split()
_AMD_SPECIFIC = """
    ClockInstructionRate Unused3 MaxSharedMemoryPerMultiprocessor Unused4 Unused5 HdpMemFlushCntl HdpRegFlushCntl
    CooperativeMultiDeviceUnmatchedFunc CooperativeMultiDeviceUnmatchedGridDim
    CooperativeMultiDeviceUnmatchedBlockDim CooperativeMultiDeviceUnmatchedSharedMem IsLargeBar AsicRevision
    CanUseStreamWaitValue ImageSupport PhysicalMultiProcessorCount FineGrainSupport WallClockRate
""".split()
hipDeviceAttribute_t = enum.IntEnum("hipDeviceAttribute_t", (
    [("hipDeviceAttribute" + n, i) for i, n in enumerate(_CUDA_COMPATIBLE)]
    + [("hipDeviceAttribute" + n, 10000 + i) for i, n in enumerate(_AMD_SPECIFIC)]
    + [("hipDeviceAttributeCudaCompatibleBegin", 0), ("hipDeviceAttributeCudaCompatibleEnd", 9999),
       ("hipDeviceAttributeAmdSpecificBegin", 10000), ("hipDeviceAttributeAmdSpecificEnd", 19999),
       ("hipDeviceAttributeVendorSpecificBegin", 20000)]),
    module=__name__)
hipDeviceAttribute_t.__doc__ = "hipDeviceAttribute_t with the names and values of hip_runtime_api.h."

_INT32_MAX = 2**31 - 1
# attribute -> property key, (key, index) or a function of the properties; what CLR's
# hipDeviceGetAttribute reads from hipDeviceProp_t. An attribute not listed is hipErrorInvalidValue.
_ATTR_PROP = {
    "MaxThreadsPerBlock": "maxThreadsPerBlock", "AsyncEngineCount": "asyncEngineCount",
    "MaxBlockDimX": ("maxThreadsDim", 0), "MaxBlockDimY": ("maxThreadsDim", 1), "MaxBlockDimZ": ("maxThreadsDim", 2),
    "MaxGridDimX": ("maxGridSize", 0), "MaxGridDimY": ("maxGridSize", 1), "MaxGridDimZ": ("maxGridSize", 2),
    "MaxSharedMemoryPerBlock": "sharedMemPerBlock", "SharedMemPerBlockOptin": "sharedMemPerBlockOptin",
    "SharedMemPerMultiprocessor": "sharedMemPerMultiprocessor",
    "StreamPrioritiesSupported": "streamPrioritiesSupported", "SurfaceAlignment": "surfaceAlignment",
    "TotalConstantMemory": lambda p: min(p["totalConstMem"], _INT32_MAX),
    "TotalGlobalMem": lambda p: min(p["totalGlobalMem"], _INT32_MAX),
    "WarpSize": "warpSize", "MaxRegistersPerBlock": "regsPerBlock", "ClockRate": "clockRate",
    "MemoryClockRate": "memoryClockRate", "MemoryBusWidth": "memoryBusWidth",
    "MultiprocessorCount": "multiProcessorCount", "PhysicalMultiProcessorCount": "multiProcessorCount",
    "ComputeMode": "computeMode", "ComputePreemptionSupported": "computePreemptionSupported",
    "L2CacheSize": "l2CacheSize", "LocalL1CacheSupported": "localL1CacheSupported",
    "GlobalL1CacheSupported": "globalL1CacheSupported",
    "MaxThreadsPerMultiProcessor": "maxThreadsPerMultiProcessor", "ComputeCapabilityMajor": "major",
    "ComputeCapabilityMinor": "minor", "MultiGpuBoardGroupID": "multiGpuBoardGroupID", "PciBusId": "pciBusID",
    "PciDeviceId": "pciDeviceID", "PciDomainID": "pciDomainID", "ConcurrentKernels": "concurrentKernels",
    "PersistingL2CacheMaxSize": "persistingL2CacheMaxSize", "MaxRegistersPerMultiprocessor": "regsPerMultiprocessor",
    "ReservedSharedMemPerBlock": "reservedSharedMemPerBlock",
    "MaxSharedMemoryPerMultiprocessor": "maxSharedMemoryPerMultiProcessor", "IsMultiGpuBoard": "isMultiGpuBoard",
    "CooperativeLaunch": "cooperativeLaunch", "CooperativeMultiDeviceLaunch": "cooperativeMultiDeviceLaunch",
    "HostRegisterSupported": lambda p: 1, "DeviceOverlap": lambda p: int(p["asyncEngineCount"] > 0),
    "Integrated": "integrated", "MaxPitch": lambda p: min(p["memPitch"], _INT32_MAX),
    "TextureAlignment": "textureAlignment", "TexturePitchAlignment": "texturePitchAlignment",
    "KernelExecTimeout": "kernelExecTimeoutEnabled", "CanMapHostMemory": "canMapHostMemory",
    "CanUseHostPointerForRegisteredMem": "canUseHostPointerForRegisteredMem", "EccEnabled": "ECCEnabled",
    "AsicRevision": "asicRevision", "ManagedMemory": "managedMemory",
    "MaxBlocksPerMultiProcessor": "maxBlocksPerMultiProcessor",
    "DirectManagedMemAccessFromHost": "directManagedMemAccessFromHost",
    "HostNativeAtomicSupported": "hostNativeAtomicSupported", "ConcurrentManagedAccess": "concurrentManagedAccess",
    "PageableMemoryAccess": "pageableMemoryAccess",
    "PageableMemoryAccessUsesHostPageTables": "pageableMemoryAccessUsesHostPageTables",
    "IsLargeBar": "isLargeBar", "UnifiedAddressing": lambda p: 1, "FineGrainSupport": lambda p: 1,
    "ImageSupport": lambda p: 0, "CanUseStreamWaitValue": lambda p: 1, "MemoryPoolsSupported": "memoryPoolsSupported",
    "MemoryPoolSupportedHandleTypes": "memoryPoolSupportedHandleTypes",
    "VirtualMemoryManagementSupported": lambda p: 0,
    "WallClockRate": lambda p: WALL_CLOCK_KHZ,
}
#: hipDeviceAttributeWallClockRate: the frequency of the device's constant clock (s_memrealtime), in
#: kHz, as ROCm reports it for gfx9 parts (100 MHz); the emulated device's timestamps are in ns
WALL_CLOCK_KHZ = 100_000
_ATTR_READ = {hipDeviceAttribute_t["hipDeviceAttribute" + k]: v for k, v in _ATTR_PROP.items()}


@_api
def hipDeviceGetAttribute(attr, device: int) -> int:
    """The value of ``attr`` (a hipDeviceAttribute_t) for ``device``, read from the same properties
    as hipGetDeviceProperties. As in CLR: a bad device is hipErrorInvalidDevice (checked first), an
    attribute HIP does not know or hdemu does not report (textures, surfaces, ...) hipErrorInvalidValue."""
    rt = _st().rt
    _check_device(rt, device)
    try:
        a = hipDeviceAttribute_t(attr)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidValue, f"attr must be a hipDeviceAttribute_t, not {attr!r}")
    read = _ATTR_READ.get(a)
    if read is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{a.name} is not reported by hdemu's devices")
    p = _properties(rt, int(device))
    if callable(read):
        return int(read(p))
    if isinstance(read, tuple):
        return int(p[read[0]][read[1]])
    return int(p[read])


# -- versions ----------------------------------------------------------------------------------------
#: The HIP API level hdemu follows (ROCm 6.2's: hipMemoryType and the hipPointerGetAttributes of an
#: unregistered pointer are those of HIP >= 6.0). HIP_VERSION is encoded as hip_version.h does:
#: major * 10_000_000 + minor * 100_000 + patch.
HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH = 6, 2, 0
HIP_VERSION = HIP_VERSION_MAJOR * 10_000_000 + HIP_VERSION_MINOR * 100_000 + HIP_VERSION_PATCH


@_api
def hipDriverGetVersion() -> int:
    """HIP_VERSION, as CLR reports it for the driver too (no runtime is started)."""
    return HIP_VERSION


@_api
def hipRuntimeGetVersion() -> int:
    """HIP_VERSION (no runtime is started)."""
    return HIP_VERSION


# -- peer access -------------------------------------------------------------------------------------
@_api
def hipDeviceCanAccessPeer(device: int, peerDevice: int) -> int:
    """1: every emulated device reaches every other's memory (one address space, copies by SDMA);
    0 for a device and itself, as HIP reports."""
    rt = _st().rt
    _check_device(rt, device)
    _check_device(rt, peerDevice)
    return int(device != peerDevice)


@_api
def hipDeviceEnablePeerAccess(peerDevice: int, flags: int = 0) -> None:
    """Record that the current device may access ``peerDevice``'s memory (it always can: the state is
    kept for the error codes HIP returns: hipErrorPeerAccessAlreadyEnabled on a second call,
    hipErrorInvalidDevice for the current device itself, hipErrorInvalidValue for flags)."""
    st = _st()
    _check_device(st.rt, peerDevice)
    if flags != 0:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0, not {flags!r}")
    dev = _current_device()
    if peerDevice == dev:
        _raise(hipError_t.hipErrorInvalidDevice, "a device cannot enable peer access to itself")
    with st.lock:
        if (dev, peerDevice) in st.peer_access:
            _raise(hipError_t.hipErrorPeerAccessAlreadyEnabled, f"device {dev} already accesses device {peerDevice}")
        st.peer_access.add((dev, peerDevice))


@_api
def hipDeviceDisablePeerAccess(peerDevice: int) -> None:
    st = _st()
    _check_device(st.rt, peerDevice)
    dev = _current_device()
    with st.lock:
        if (dev, peerDevice) not in st.peer_access:
            _raise(hipError_t.hipErrorPeerAccessNotEnabled, f"device {dev} has no peer access to device {peerDevice}")
        st.peer_access.discard((dev, peerDevice))


@_api
def hipDeviceSynchronize() -> None:
    """Wait for the work of every stream of the current device; a failed stream's error is raised
    once the other streams' work is done too."""
    check_device_sync("hipDeviceSynchronize")
    _synchronize_device(_current_device())


def hipDeviceReset() -> None:
    """Tear down this process's runtime (and its embedded platform, if it owns one).

    The runtime's mappings of the platform's segments are dropped here, so an embedded platform's
    memory (device memory included) goes back to /dev/shm at the call, not at exit. A stream, event
    or module handle the program keeps past the reset still holds views of the old platform until it
    is dropped; using one is an error."""
    _reset()
