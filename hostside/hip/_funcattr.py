"""Function attributes: hipFuncGetAttributes / hipFuncGetAttribute, and the per-function settings
hipFuncSetAttribute and hipFuncSetSharedMemConfig, with CLR's checks and error codes
(hipamd/src/hip_module.cpp, hip_global.cpp). hipFuncSetCacheConfig is with the cache
configurations in ``_misc``.

A kernel is a ``hipFunction_t`` (hdemu has no host symbols, so it stands in for the ``const void*``
of the runtime API). An emulated kernel is Python: it declares no static LDS, constant or private
memory and uses no registers. As in CLR, the LDS a block may use (``availableLDSSize_``) is the
device's sharedMemPerBlock, and a launch may ask for up to that much dynamic shared memory whatever
hipFuncAttributeMaxDynamicSharedMemorySize says (CLR's ihipLaunchKernel_validate and the dispatch
check the device's LDS size only): the attribute is recorded per device and reported by
hipFuncGetAttributes, as CLR's ``workGroupInfo()->maxDynamicSharedSizeBytes_``.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from ._context import _current_device, _st
from ._device import DEVICE_MAJOR, DEVICE_MINOR
from ._errors import _api, _raise, hipError_t
from ._errors import _is_int as _int
from ._limits import MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK
from ._module import hipFunction_t

__all__ = ["hipFunction_attribute", "hipFuncAttributes", "hipFuncGetAttributes", "hipFuncGetAttribute",
           "hipFuncAttribute", "hipFuncAttributeMaxDynamicSharedMemorySize",
           "hipFuncAttributePreferredSharedMemoryCarveout", "hipFuncAttributeMax", "hipFuncSetAttribute",
           "hipSharedMemConfig", "hipSharedMemBankSizeDefault", "hipSharedMemBankSizeFourByte",
           "hipSharedMemBankSizeEightByte", "hipFuncSetSharedMemConfig"]

#: LDS bytes a workgroup of an emulated kernel may use (CLR's workGroupInfo availableLDSSize_, the
#: device's LDS size) and the static LDS it declares (localMemSize_: none)
AVAILABLE_LDS = SHARED_MEM_PER_BLOCK
STATIC_LDS = 0


class hipFunction_attribute(enum.IntEnum):
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    HIP_FUNC_ATTRIBUTE_NUM_REGS = 4
    HIP_FUNC_ATTRIBUTE_PTX_VERSION = 5
    HIP_FUNC_ATTRIBUTE_BINARY_VERSION = 6
    HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7
    HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9


class hipFuncAttribute(enum.IntEnum):
    """What hipFuncSetAttribute sets (hip_runtime_api.h)."""
    hipFuncAttributeMaxDynamicSharedMemorySize = 8
    hipFuncAttributePreferredSharedMemoryCarveout = 9
    hipFuncAttributeMax = 10


hipFuncAttributeMaxDynamicSharedMemorySize = hipFuncAttribute.hipFuncAttributeMaxDynamicSharedMemorySize
hipFuncAttributePreferredSharedMemoryCarveout = hipFuncAttribute.hipFuncAttributePreferredSharedMemoryCarveout
hipFuncAttributeMax = hipFuncAttribute.hipFuncAttributeMax


class hipSharedMemConfig(enum.IntEnum):
    hipSharedMemBankSizeDefault = 0
    hipSharedMemBankSizeFourByte = 1
    hipSharedMemBankSizeEightByte = 2


hipSharedMemBankSizeDefault = hipSharedMemConfig.hipSharedMemBankSizeDefault
hipSharedMemBankSizeFourByte = hipSharedMemConfig.hipSharedMemBankSizeFourByte
hipSharedMemBankSizeEightByte = hipSharedMemConfig.hipSharedMemBankSizeEightByte


@dataclass(frozen=True)
class hipFuncAttributes:
    """What hipFuncGetAttributes reports. An emulated kernel is Python: it declares no static LDS,
    constant or private memory and uses no registers, so those are 0; a block may have up to
    maxThreadsPerBlock work-items, and maxDynamicSharedSizeBytes is all of sharedMemPerBlock until
    hipFuncSetAttribute sets it. preferredShmemCarveout is 0, as CLR reports it whatever was set."""
    binaryVersion: int = DEVICE_MAJOR * 10 + DEVICE_MINOR
    cacheModeCA: int = 0
    constSizeBytes: int = 0
    localSizeBytes: int = 0
    maxDynamicSharedSizeBytes: int = AVAILABLE_LDS - STATIC_LDS
    maxThreadsPerBlock: int = MAX_THREADS_PER_BLOCK
    numRegs: int = 0
    preferredShmemCarveout: int = 0
    ptxVersion: int = DEVICE_MAJOR * 10 + DEVICE_MINOR
    sharedSizeBytes: int = STATIC_LDS


_DEFAULT = hipFuncAttributes()
_FUNC_FIELD = {0: "maxThreadsPerBlock", 1: "sharedSizeBytes", 2: "constSizeBytes", 3: "localSizeBytes",
               4: "numRegs", 5: "ptxVersion", 6: "binaryVersion", 7: "cacheModeCA", 8: "maxDynamicSharedSizeBytes",
               9: "preferredShmemCarveout"}


def _function(f, null_err=hipError_t.hipErrorInvalidResourceHandle) -> hipFunction_t:
    if type(f) is not hipFunction_t:
        _raise(null_err, f"f must be a hipFunction_t, not {f!r}")
    if f.co.unloaded:
        _raise(hipError_t.hipErrorInvalidHandle, f"{f.name}: its module {f.co.name} was unloaded")
    return f


def _attributes(f: hipFunction_t, device: int) -> hipFuncAttributes:
    dyn = f.max_dyn_shared.get(device)
    return _DEFAULT if dyn is None else replace(_DEFAULT, maxDynamicSharedSizeBytes=dyn)


@_api
def hipFuncGetAttributes(func) -> hipFuncAttributes:
    """The attributes of ``func`` (a hipFunction_t; hdemu has no host symbols for kernels) on the
    current device; anything else is hipErrorInvalidDeviceFunction."""
    _st()
    return _attributes(_function(func, hipError_t.hipErrorInvalidDeviceFunction), _current_device())


@_api
def hipFuncGetAttribute(attrib, hfunc) -> int:
    """One attribute of ``hfunc`` (a hipFunction_attribute). No function is
    hipErrorInvalidResourceHandle; an attribute out of the enum hipErrorInvalidValue (as CLR). As
    in CLR, HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES is the LDS the kernel leaves free
    (hip_module.cpp: availableLDSSize_ - localMemSize_), not what hipFuncSetAttribute recorded."""
    _st()
    _function(hfunc)
    if not _int(attrib) or int(attrib) not in _FUNC_FIELD:
        _raise(hipError_t.hipErrorInvalidValue, f"attrib must be a hipFunction_attribute, not {attrib!r}")
    return getattr(_DEFAULT, _FUNC_FIELD[int(attrib)])


@_api
def hipFuncSetAttribute(func, attr, value) -> None:
    """Set an attribute of ``func`` (a hipFunction_t) on the current device, as CLR does: no
    function is hipErrorInvalidDeviceFunction, ``attr`` outside [0, hipFuncAttributeMax]
    hipErrorInvalidValue; hipFuncAttributeMaxDynamicSharedMemorySize must be in
    [0, sharedMemPerBlock - sharedSizeBytes] and is recorded (hipFuncGetAttributes'
    maxDynamicSharedSizeBytes), hipFuncAttributePreferredSharedMemoryCarveout must be in [-1, 100]
    and is not kept (CLR has no carveout to set); other attributes in range are accepted and
    ignored. A launch is not limited by the recorded value (CLR checks the device's LDS size)."""
    _st()
    if func is None or (_int(func) and func == 0):
        _raise(hipError_t.hipErrorInvalidDeviceFunction, "func is a null function")
    if not _int(attr) or not 0 <= attr <= hipFuncAttributeMax:
        _raise(hipError_t.hipErrorInvalidValue, f"attr must be a hipFuncAttribute, not {attr!r}")
    f = _function(func, hipError_t.hipErrorInvalidDeviceFunction)
    if not _int(value):
        _raise(hipError_t.hipErrorInvalidValue, f"value must be an int, not {value!r}")
    value = int(value)
    if attr == hipFuncAttributeMaxDynamicSharedMemorySize:
        if not 0 <= value <= AVAILABLE_LDS - STATIC_LDS:
            _raise(hipError_t.hipErrorInvalidValue, f"{f.name}: the max dynamic shared memory must be in "
                   f"[0, {AVAILABLE_LDS - STATIC_LDS}] (the LDS the kernel leaves free), not {value}")
        f.max_dyn_shared[_current_device()] = value
    elif attr == hipFuncAttributePreferredSharedMemoryCarveout and not -1 <= value <= 100:
        _raise(hipError_t.hipErrorInvalidValue, f"{f.name}: the carveout must be a percentage in [-1, 100], not {value}")


@_api
def hipFuncSetSharedMemConfig(func, config) -> None:
    """Accepted and ignored, as in CLR (the emulated LDS has no banks): no function is
    hipErrorInvalidDeviceFunction, a value that is not a hipSharedMemConfig hipErrorInvalidValue."""
    _st()
    if func is None or (_int(func) and func == 0):
        _raise(hipError_t.hipErrorInvalidDeviceFunction, "func is a null function")
    if not _int(config) or int(config) not in hipSharedMemConfig._value2member_map_:
        _raise(hipError_t.hipErrorInvalidValue, f"config must be a hipSharedMemConfig, not {config!r}")
    _function(func, hipError_t.hipErrorInvalidDeviceFunction)
