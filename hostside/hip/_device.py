"""Devices: count, current device, properties, synchronize and reset."""
from __future__ import annotations

from ._capture_rules import check_unsafe
from ._context import _current_device, _reset, _set_current_device, _st, _synchronize_device
from ._errors import _api, _raise, hipError_t

__all__ = ["hipGetDeviceCount", "hipSetDevice", "hipGetDevice", "hipDeviceProp_t", "hipGetDeviceProperties",
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


@_api
def hipGetDeviceProperties(device: int) -> hipDeviceProp_t:
    rt = _st().rt
    if not isinstance(device, int) or not 0 <= device < len(rt.agents):
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {len(rt.agents)}), not {device!r}")
    topo = rt.pm.topo
    return hipDeviceProp_t(
        name=rt.agents[device].name, gcnArchName=f"hdemu-{topo.cfg['arch']}",
        major=DEVICE_MAJOR, minor=DEVICE_MINOR,
        totalGlobalMem=topo.memory_bytes, multiProcessorCount=topo.n_engines,
        maxThreadsPerBlock=1024, warpSize=64, maxGridSize=(2**31 - 1, 65535, 65535),
        maxThreadsDim=(1024, 1024, 1024), sharedMemPerBlock=65536, pciBusID=device,
        asyncEngineCount=1, concurrentKernels=1, canMapHostMemory=1, isMultiGpuBoard=int(len(rt.agents) > 1),
        integrated=0, managedMemory=0,
        maxQueues=topo.max_queues, queueSizeMax=topo.qmax)


@_api
def hipDeviceSynchronize() -> None:
    check_unsafe("hipDeviceSynchronize")
    _synchronize_device(_current_device())


def hipDeviceReset() -> None:
    """Tear down this process's runtime (and its embedded platform, if it owns one)."""
    _reset()
