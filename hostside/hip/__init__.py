"""HIP-named API over the command layer (``hostside.clr``). Values are returned; failures raise
``HipError`` carrying the ``hipError_t`` name (and the error is also kept for ``hipGetLastError``);
when a lower layer's error caused it, that error is the ``__cause__``.

Pointers are ints (device addresses). Host buffers are numpy arrays (pageable memory) or pointers
returned by ``hipHostMalloc`` (pinned, fine-grained: ``host_array(ptr, dtype, count)`` gives a numpy
view of them). Streams are ``hipStream_t`` objects; ``None`` or 0 is the device's null stream.

Public face of ``hostside.hip``; the modules behind it are private, and each imports only modules
listed before it (no cycles):

* ``_errors``: hipError_t, HipError, the HSA-status mapping, the last error, ``_api``.
* ``_order``: order points (a marker other streams wait on) and the signal re-arm rule.
* ``_graph_types``: capture and node-type enums, parameter objects, node specs, hipGraph_t/hipGraphNode_t.
* ``_capture_rules``: the captures in progress, the per-thread capture mode, ``check_unsafe``, fork/join,
  the legacy stream's implicit-capture check.
* ``_context``: per-process state (runtime, null streams), the current device, hipStream_t, the stream
  lookup and the legacy null stream's ordering.
* ``_limits``: the launch limits (checked at the call, reported as device properties).
* ``_device``, ``_memory``, ``_stream`` (streams, events, host functions), ``_module`` (modules and
  launches).
* ``_memory2d`` (pitched memory, 2-D copies and fills), ``_memory3d`` (3-D memory, on the 2-D paths),
  ``_ordered`` (the stream-ordered allocator and memory pools), ``_streamops`` (hipStreamWaitValue /
  hipStreamWriteValue), ``_misc`` (hipInit, device flags, limits,
  cache configurations, PCI ids, single pointer attributes), ``_funcattr`` (function attributes),
  ``_occupancy`` (the occupancy calculator).
* ``_graph_build``: node specs from HIP arguments and the explicit construction API.
* ``_capture``: the capture object and hipStreamBeginCapture/EndCapture.
* ``_schedule`` (ops, lanes, plans, replicas) <- ``_graph_exec`` (GraphExec: build, launch, update)
  <- ``_graph_api`` (instantiate, launch, exec updates).
* ``_graph_nodeparams`` (node parameters of a graph) <- ``_graph_update`` (exec node setters,
  hipGraphExecUpdate; after ``_graph_api``).
* ``_launch_more`` (hipLaunchKernel, hipExtLaunchKernel, cooperative launches: on ``_module``'s launch
  path, with ``_occupancy``), ``_device_more`` (hipDeviceGetUuid, P2P attributes, link type,
  profiler markers, hipSetValidDevices, hipMemAllocHost, hipGetDevicePropertiesR0600).

Imports ``hostside.replay``, ``hostside.clr``, ``hostside.hsa``, ``hostside.platform`` (only so that it
registers the embedded-platform factory with hsa) and ``shm_layout``.
"""
from shm_layout.kernels import SignatureError, kernel

from ._errors import HipError, hipError_t, hipGetLastError, hipPeekAtLastError
from ._managed import (hipCpuDeviceId, hipHostGetDevicePointer, hipHostGetFlags, hipMallocManaged, hipMemAdvise,
                       hipMemAttachGlobal, hipMemAttachHost, hipMemAttachSingle, hipMemoryAdvise, hipMemPrefetchAsync,
                       hipStreamAttachMemAsync)
from ._errstrings import hipDrvGetErrorName, hipDrvGetErrorString, hipGetErrorName, hipGetErrorString
from ._context import hipStream_t, hipStreamDefault, hipStreamLegacy, hipStreamNonBlocking, hipStreamPerThread
from ._device import (hipDeviceProp_t, hipDeviceReset, hipDeviceSynchronize, hipGetDevice, hipGetDeviceCount,
                      hipGetDeviceProperties, hipSetDevice)
from ._device import hipDeviceCanAccessPeer, hipDeviceDisablePeerAccess, hipDeviceEnablePeerAccess
from ._device import HIP_VERSION, hipDeviceAttribute_t, hipDeviceGetAttribute, hipDriverGetVersion, hipRuntimeGetVersion
from ._memory import (hipDeviceMallocDefault, hipDeviceMallocFinegrained, hipDeviceMallocUncached,
                      hipExtMallocWithFlags, hipMallocSignalMemory)
from ._memory import (hipFree, hipHostFree, hipHostMalloc, hipMalloc, hipMemcpy, hipMemcpyAsync, hipMemcpyDefault,
                      hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, hipMemcpyHostToDevice, hipMemcpyHostToHost,
                      hipMemcpyKind, hipMemset, hipMemsetAsync, host_array)
from ._memory import (hipFreeHost, hipHostAlloc, hipMallocHost, hipMemcpyPeer, hipMemcpyPeerAsync,
                      hipMemcpyWithStream)
from ._memory import (hipHostMallocCoherent, hipHostMallocDefault, hipHostMallocMapped, hipHostMallocNonCoherent,
                      hipHostMallocNumaUser, hipHostMallocPortable, hipHostMallocUncached, hipHostMallocWriteCombined)
from ._memory import (hipInvalidDeviceId, hipMemcpyDtoD, hipMemcpyDtoDAsync, hipMemcpyDtoH, hipMemcpyDtoHAsync,
                      hipMemcpyHtoD, hipMemcpyHtoDAsync, hipMemGetInfo, hipMemoryType, hipMemoryTypeArray,
                      hipMemoryTypeDevice, hipMemoryTypeHost, hipMemoryTypeManaged, hipMemoryTypeUnified,
                      hipMemoryTypeUnregistered, hipMemsetD8, hipMemsetD8Async, hipMemsetD16, hipMemsetD16Async,
                      hipMemsetD32, hipMemsetD32Async, hipPointerAttribute_t, hipPointerGetAttributes)
from ._stream import (hipDeviceGetStreamPriorityRange, hipEvent_t, hipEventBlockingSync, hipEventCreate,
                      hipEventCreateWithFlags, hipEventDefault, hipEventDestroy, hipEventDisableSystemFence,
                      hipEventDisableTiming, hipEventElapsedTime, hipEventInterprocess, hipEventQuery, hipEventRecord,
                      hipEventReleaseToDevice, hipEventReleaseToSystem, hipEventSynchronize, hipLaunchHostFunc,
                      hipStreamAddCallback, hipStreamCreate, hipStreamCreateWithFlags, hipStreamCreateWithPriority,
                      hipStreamDestroy, hipStreamGetDevice, hipStreamGetFlags, hipStreamGetPriority, hipStreamQuery,
                      hipStreamSynchronize, hipStreamWaitEvent)
from ._stream import hipExtStreamCreateWithCUMask, hipExtStreamGetCUMask
from ._module import (HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END,
                      hipExtModuleLaunchKernel, hipFunction_t, hipModule_t, hipModuleGetFunction, hipModuleGetGlobal,
                      hipModuleLaunchKernel, hipModuleLoad, hipModuleLoadData, hipModuleUnload)
from ._module import hipModuleLoadDataEx
from ._streamops import (hipStreamWaitValue32, hipStreamWaitValue64, hipStreamWaitValueAnd, hipStreamWaitValueEq,
                         hipStreamWaitValueGte, hipStreamWaitValueNor, hipStreamWriteValue32, hipStreamWriteValue64)
from ._memory2d import hipMallocPitch, hipMemcpy2D, hipMemcpy2DAsync, hipMemset2D, hipMemset2DAsync
from ._memory3d import (hipExtent, hipMalloc3D, hipMemcpy3D, hipMemcpy3DAsync, hipMemcpy3DParms, hipMemset3D,
                        hipMemset3DAsync, hipPitchedPtr, hipPos, make_hipExtent, make_hipPitchedPtr, make_hipPos)
from ._ordered import (hipDeviceGetDefaultMemPool, hipDeviceGetMemPool, hipFreeAsync, hipMallocAsync, hipMemPool_t,
                       hipMemPoolAttr, hipMemPoolAttrReleaseThreshold, hipMemPoolAttrReservedMemCurrent,
                       hipMemPoolAttrReservedMemHigh, hipMemPoolAttrUsedMemCurrent, hipMemPoolAttrUsedMemHigh,
                       hipMemPoolGetAttribute, hipMemPoolReuseAllowInternalDependencies,
                       hipMemPoolReuseAllowOpportunistic, hipMemPoolReuseFollowEventDependencies,
                       hipMemPoolSetAttribute, hipMemPoolTrimTo)
from ._mempool import *  # noqa: F401,F403 -- created pools; its __all__ is added to ours below
from ._mempool import __all__ as _mempool_all
from ._graph_mem import *  # noqa: F401,F403 -- graph memory nodes; its __all__ is added to ours below
from ._graph_mem import __all__ as _graph_mem_all
from ._misc import (hipChooseDevice, hipDeviceGetByPCIBusId, hipDeviceGetCacheConfig, hipDeviceGetLimit,
                    hipDeviceGetName, hipDeviceGetPCIBusId, hipDeviceLmemResizeToMax, hipDeviceMapHost,
                    hipDeviceScheduleAuto, hipDeviceScheduleBlockingSync, hipDeviceScheduleMask, hipDeviceScheduleSpin,
                    hipDeviceScheduleYield, hipDeviceSetCacheConfig, hipDeviceSetLimit, hipDeviceTotalMem,
                    hipDeviceGet, hipDeviceComputeCapability, hipMemPtrGetInfo,
                    hipFuncCache_t, hipFuncCachePreferEqual, hipFuncCachePreferL1,
                    hipFuncCachePreferNone, hipFuncCachePreferShared,
                    hipFuncSetCacheConfig, hipGetDeviceFlags, hipInit, hipLimit_t,
                    hipLimitMallocHeapSize, hipLimitPrintfFifoSize, hipLimitStackSize, hipMemGetAddressRange,
                    hipPointer_attribute, hipPointerGetAttribute, hipSetDeviceFlags)
from ._funcattr import __all__ as _funcattr_all
from ._funcattr import *  # noqa: F401,F403 - function attributes (its __all__)
from ._occupancy import __all__ as _occupancy_all
from ._occupancy import *  # noqa: F401,F403 - the occupancy calculator (its __all__)
from ._graph_types import (hipEventRecordDefault, hipEventRecordExternal, hipEventWaitDefault, hipEventWaitExternal,
                           hipGraph_t, hipGraphNode_t, hipGraphNodeType, hipHostNodeParams, hipKernelNodeParams,
                           hipMemcpyNodeParams, hipMemsetParams, hipStreamCaptureMode, hipStreamCaptureModeGlobal,
                           hipStreamCaptureModeRelaxed, hipStreamCaptureModeThreadLocal, hipStreamCaptureStatus,
                           hipStreamCaptureStatusActive, hipStreamCaptureStatusInvalidated, hipStreamCaptureStatusNone)
from ._graph_build import (hipGraphAddDependencies, hipGraphAddEmptyNode, hipGraphAddEventRecordNode,
                           hipGraphAddEventWaitNode, hipGraphAddHostNode, hipGraphAddKernelNode,
                           hipGraphAddMemcpyNode, hipGraphAddMemcpyNode1D, hipGraphAddMemsetNode, hipGraphCreate,
                           hipGraphDebugDotPrint, hipGraphDestroy, hipGraphGetEdges, hipGraphGetNodes,
                           hipGraphGetRootNodes, hipGraphKernelNodeGetParams, hipGraphKernelNodeSetParams,
                           hipGraphNodeGetDependencies, hipGraphNodeGetDependentNodes, hipGraphNodeGetType,
                           hipGraphRemoveDependencies)
from ._graph_build import hipGraphAddChildGraphNode, hipGraphChildGraphNodeGetGraph, hipGraphClone
from ._graph_params import hipGraphDestroyNode, hipGraphNodeFindInClone
from ._capture_rules import hipThreadExchangeStreamCaptureMode
from ._libtrace import hdemuTraceLibraryCall
from ._capture import (hipEventRecordWithFlags, hipStreamBeginCapture, hipStreamEndCapture, hipStreamGetCaptureInfo,
                       hipStreamIsCapturing)
from ._graph_api import (hipGraphExec_t, hipGraphExecDestroy, hipGraphExecKernelNodeSetParams, hipGraphInstantiate,
                         hipGraphInstantiateWithFlags, hipGraphLaunch, hipGraphNodeGetEnabled, hipGraphNodeSetEnabled,
                         hipGraphUpload)
from ._capture_more import (hipGraphExecGetFlags, hipGraphInstantiateError, hipGraphInstantiateFlagAutoFreeOnLaunch,
                            hipGraphInstantiateFlagDeviceLaunch, hipGraphInstantiateFlagUpload,
                            hipGraphInstantiateFlagUseNodePriority, hipGraphInstantiateInvalidStructure,
                            hipGraphInstantiateMultipleDevicesNotSupported,
                            hipGraphInstantiateNodeOperationNotSupported, hipGraphInstantiateParams,
                            hipGraphInstantiateResult, hipGraphInstantiateSuccess, hipGraphInstantiateWithParams,
                            hipStreamAddCaptureDependencies, hipStreamBeginCaptureToGraph,
                            hipStreamGetCaptureInfo_v2, hipStreamSetCaptureDependencies,
                            hipStreamUpdateCaptureDependencies)
from ._graph_nodeparams import __all__ as _nodeparams_all
from ._graph_nodeparams import *  # noqa: F401,F403 - graph node get/set (listed in its __all__)
from ._graph_update import __all__ as _update_all
from ._graph_update import *  # noqa: F401,F403 - exec node setters, hipGraphExecUpdate (its __all__)
from ._launch_more import (hipExtAnyOrderLaunch, hipExtLaunchKernel, hipLaunchCooperativeKernel, hipLaunchKernel,
                           hipModuleLaunchCooperativeKernel)
from ._device_more import __all__ as _device_more_all
from ._device_more import *  # noqa: F401,F403 - uuid, P2P attributes, link type, profiler, aliases (its __all__)
from ._userobj import (hipGraphReleaseUserObject, hipGraphRetainUserObject, hipGraphUserObjectMove, hipUserObject_t,
                       hipUserObjectCreate, hipUserObjectNoDestructorSync, hipUserObjectRelease, hipUserObjectRetain)

__all__ = [
    # kernel authors (shm_layout.kernels)
    "kernel", "SignatureError",
    # errors (_errors)
    "hipError_t", "HipError", "hipGetLastError", "hipPeekAtLastError", "hipGetErrorName", "hipGetErrorString",
    "hipDrvGetErrorName", "hipDrvGetErrorString",
    # managed memory (_managed)
    "hipMallocManaged", "hipMemPrefetchAsync", "hipMemAdvise", "hipMemoryAdvise", "hipHostGetDevicePointer",
    "hipHostGetFlags", "hipMemAttachGlobal",
    "hipMemAttachHost", "hipMemAttachSingle", "hipCpuDeviceId", "hipStreamAttachMemAsync",
    # streams (_context)
    "hipStream_t", "hipStreamDefault", "hipStreamNonBlocking", "hipStreamLegacy", "hipStreamPerThread",
    # devices (_device)
    "hipGetDeviceCount", "hipSetDevice", "hipGetDevice", "hipDeviceProp_t", "hipGetDeviceProperties",
    "hipDeviceSynchronize", "hipDeviceReset", "hipDeviceAttribute_t", "hipDeviceGetAttribute", "hipDriverGetVersion",
    "hipRuntimeGetVersion", "HIP_VERSION",
    # memory (_memory)
    "hipExtMallocWithFlags", "hipDeviceMallocDefault", "hipDeviceMallocFinegrained", "hipDeviceMallocUncached",
    "hipMallocSignalMemory",
    "hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree", "host_array", "hipMemcpyKind", "hipMemcpyHostToHost",
    "hipMemcpyHostToDevice", "hipMemcpyDeviceToHost", "hipMemcpyDeviceToDevice", "hipMemcpyDefault", "hipMemcpy",
    "hipMemcpyAsync", "hipMemset", "hipMemsetAsync", "hipMemcpyHtoD", "hipMemcpyDtoH", "hipMemcpyDtoD",
    "hipMemcpyHtoDAsync", "hipMemcpyDtoHAsync", "hipMemcpyDtoDAsync", "hipMemsetD8", "hipMemsetD16", "hipMemsetD32",
    "hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async", "hipMemoryType", "hipMemoryTypeUnregistered",
    "hipMemoryTypeHost", "hipMemoryTypeDevice", "hipMemoryTypeManaged", "hipMemoryTypeArray", "hipMemoryTypeUnified",
    "hipInvalidDeviceId", "hipPointerAttribute_t", "hipPointerGetAttributes", "hipMemGetInfo",
    "hipMallocHost", "hipHostAlloc", "hipFreeHost", "hipMemcpyWithStream", "hipMemcpyPeer", "hipMemcpyPeerAsync",
    "hipDeviceCanAccessPeer", "hipDeviceEnablePeerAccess", "hipDeviceDisablePeerAccess",
    "hipHostMallocDefault", "hipHostMallocPortable", "hipHostMallocMapped", "hipHostMallocWriteCombined",
    "hipHostMallocUncached", "hipHostMallocNumaUser", "hipHostMallocCoherent", "hipHostMallocNonCoherent",
    # streams and events (_stream)
    "hipStreamCreate", "hipStreamCreateWithFlags", "hipStreamCreateWithPriority", "hipDeviceGetStreamPriorityRange",
    "hipStreamGetPriority", "hipStreamGetFlags", "hipStreamGetDevice", "hipStreamDestroy", "hipStreamSynchronize",
    "hipStreamQuery", "hipStreamWaitEvent", "hipLaunchHostFunc", "hipStreamAddCallback",
    "hipExtStreamCreateWithCUMask", "hipExtStreamGetCUMask",
    "hipEvent_t", "hipEventCreate", "hipEventCreateWithFlags", "hipEventDefault", "hipEventBlockingSync",
    "hipEventDisableTiming", "hipEventInterprocess", "hipEventDisableSystemFence", "hipEventReleaseToDevice",
    "hipEventReleaseToSystem", "hipEventRecord", "hipEventSynchronize", "hipEventQuery", "hipEventElapsedTime",
    "hipEventDestroy",
    # modules and launches (_module)
    "hipModule_t", "hipFunction_t", "hipModuleLoadData", "hipModuleLoad", "hipModuleUnload", "hipModuleGetFunction",
    "hipModuleGetGlobal", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel", "HIP_LAUNCH_PARAM_BUFFER_POINTER",
    "HIP_LAUNCH_PARAM_BUFFER_SIZE", "HIP_LAUNCH_PARAM_END",
    "hipModuleLoadDataEx",
    # stream memory operations (_streamops)
    "hipStreamWaitValue32", "hipStreamWaitValue64", "hipStreamWriteValue32", "hipStreamWriteValue64",
    "hipStreamWaitValueGte", "hipStreamWaitValueEq", "hipStreamWaitValueAnd", "hipStreamWaitValueNor",
    # pitched memory (_memory2d)
    "hipMallocPitch", "hipMemcpy2D", "hipMemcpy2DAsync", "hipMemset2D", "hipMemset2DAsync",
    # 3-D memory (_memory3d)
    "hipExtent", "hipPos", "hipPitchedPtr", "hipMemcpy3DParms", "make_hipExtent", "make_hipPos", "make_hipPitchedPtr",
    "hipMalloc3D", "hipMemset3D", "hipMemset3DAsync", "hipMemcpy3D", "hipMemcpy3DAsync",
    # stream-ordered allocator (_ordered)
    "hipMallocAsync", "hipFreeAsync", "hipMemPool_t", "hipDeviceGetDefaultMemPool", "hipDeviceGetMemPool",
    "hipMemPoolTrimTo", "hipMemPoolSetAttribute", "hipMemPoolGetAttribute", "hipMemPoolAttr",
    "hipMemPoolReuseFollowEventDependencies", "hipMemPoolReuseAllowOpportunistic",
    "hipMemPoolReuseAllowInternalDependencies", "hipMemPoolAttrReleaseThreshold", "hipMemPoolAttrReservedMemCurrent",
    "hipMemPoolAttrReservedMemHigh", "hipMemPoolAttrUsedMemCurrent", "hipMemPoolAttrUsedMemHigh",
    # created memory pools (_mempool)
    *_mempool_all,
    # graph memory nodes and the graph memory pool (_graph_mem)
    *_graph_mem_all,
    # the smaller calls (_misc)
    "hipInit", "hipDeviceGetName", "hipDeviceTotalMem", "hipDeviceGet", "hipDeviceComputeCapability",
    "hipMemPtrGetInfo", "hipSetDeviceFlags", "hipGetDeviceFlags",
    "hipDeviceScheduleAuto", "hipDeviceScheduleSpin", "hipDeviceScheduleYield", "hipDeviceScheduleBlockingSync",
    "hipDeviceScheduleMask", "hipDeviceMapHost", "hipDeviceLmemResizeToMax", "hipLimit_t", "hipLimitStackSize",
    "hipLimitPrintfFifoSize", "hipLimitMallocHeapSize", "hipDeviceGetLimit", "hipDeviceSetLimit", "hipFuncCache_t",
    "hipFuncCachePreferNone", "hipFuncCachePreferShared", "hipFuncCachePreferL1", "hipFuncCachePreferEqual",
    "hipDeviceSetCacheConfig", "hipDeviceGetCacheConfig", "hipFuncSetCacheConfig", "hipChooseDevice",
    "hipDeviceGetPCIBusId", "hipDeviceGetByPCIBusId", "hipPointer_attribute", "hipPointerGetAttribute",
    "hipMemGetAddressRange",
    # function attributes (_funcattr), occupancy (_occupancy)
    *_funcattr_all, *_occupancy_all,
    # graph types and enums (_graph_types)
    "hipStreamCaptureMode", "hipStreamCaptureModeGlobal", "hipStreamCaptureModeThreadLocal",
    "hipStreamCaptureModeRelaxed", "hipStreamCaptureStatus", "hipStreamCaptureStatusNone",
    "hipStreamCaptureStatusActive", "hipStreamCaptureStatusInvalidated", "hipGraphNodeType",
    "hipEventRecordDefault", "hipEventRecordExternal", "hipEventWaitDefault", "hipEventWaitExternal", "hipGraph_t",
    "hipGraphNode_t", "hipKernelNodeParams", "hipMemcpyNodeParams", "hipMemsetParams", "hipHostNodeParams",
    # graph construction (_graph_build)
    "hipGraphCreate", "hipGraphDestroy", "hipGraphAddKernelNode", "hipGraphAddMemcpyNode",
    "hipGraphAddMemcpyNode1D", "hipGraphAddMemsetNode", "hipGraphAddHostNode", "hipGraphAddEmptyNode",
    "hipGraphAddEventRecordNode", "hipGraphAddEventWaitNode", "hipGraphAddDependencies",
    "hipGraphRemoveDependencies", "hipGraphGetNodes", "hipGraphGetRootNodes", "hipGraphGetEdges",
    "hipGraphNodeGetType", "hipGraphNodeGetDependencies", "hipGraphNodeGetDependentNodes",
    "hipGraphKernelNodeGetParams", "hipGraphKernelNodeSetParams", "hipGraphDebugDotPrint", "hipGraphClone",
    "hipGraphAddChildGraphNode", "hipGraphChildGraphNodeGetGraph",
    # node destruction and clone lookup (_graph_params)
    "hipGraphDestroyNode", "hipGraphNodeFindInClone",
    # stream capture (_capture_rules)
    "hipThreadExchangeStreamCaptureMode",
    # stream capture (_capture)
    "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
    "hipEventRecordWithFlags",
    # executable graphs (_graph_api)
    "hipGraphExec_t", "hipGraphInstantiate", "hipGraphInstantiateWithFlags", "hipGraphLaunch",
    "hipGraphExecDestroy", "hipGraphExecKernelNodeSetParams", "hipGraphNodeSetEnabled", "hipGraphNodeGetEnabled",
    "hipGraphUpload",
    # more stream capture, instantiate with params (_capture_more)
    "hipStreamGetCaptureInfo_v2", "hipStreamUpdateCaptureDependencies", "hipStreamAddCaptureDependencies",
    "hipStreamSetCaptureDependencies", "hipStreamBeginCaptureToGraph", "hipGraphInstantiateParams",
    "hipGraphInstantiateResult", "hipGraphInstantiateSuccess", "hipGraphInstantiateError",
    "hipGraphInstantiateInvalidStructure", "hipGraphInstantiateNodeOperationNotSupported",
    "hipGraphInstantiateMultipleDevicesNotSupported", "hipGraphInstantiateFlagAutoFreeOnLaunch",
    "hipGraphInstantiateFlagUpload", "hipGraphInstantiateFlagDeviceLaunch", "hipGraphInstantiateFlagUseNodePriority",
    "hipGraphInstantiateWithParams", "hipGraphExecGetFlags",
    # node parameters of a graph (_graph_nodeparams); of an exec, hipGraphExecUpdate (_graph_update)
    *_nodeparams_all, *_update_all,
    # runtime-API and cooperative launches (_launch_more)
    "hipLaunchKernel", "hipExtLaunchKernel", "hipLaunchCooperativeKernel", "hipModuleLaunchCooperativeKernel",
    "hipExtAnyOrderLaunch",
    # uuid, P2P attributes, link type, profiler markers, hipSetValidDevices, aliases (_device_more)
    *_device_more_all,
    # user objects (_userobj)
    "hipUserObject_t", "hipUserObjectNoDestructorSync", "hipGraphUserObjectMove", "hipUserObjectCreate",
    "hipUserObjectRetain", "hipUserObjectRelease", "hipGraphRetainUserObject", "hipGraphReleaseUserObject",
    # hdemu's own: a library's calls in the trace (_libtrace)
    "hdemuTraceLibraryCall",
]
