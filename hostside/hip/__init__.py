"""HIP-named API over the command layer (``hostside.clr``). Values are returned; failures raise
``HipError`` carrying the ``hipError_t`` name (and the error is also kept for ``hipGetLastError``);
when a lower layer's error caused it, that error is the ``__cause__``.

Pointers are ints (device addresses). Host buffers are numpy arrays (pageable memory) or pointers
returned by ``hipHostMalloc`` (pinned, fine-grained: ``host_array(ptr, dtype, count)`` gives a numpy
view of them). Streams are ``hipStream_t`` objects; ``None`` or 0 is the device's null stream.

Public face of ``hostside.hip``; the modules behind it are private, and each imports only modules
listed before it (no cycles):

* ``_errors``: hipError_t, HipError, the HSA-status mapping, the last error, ``_api``.
* ``_context``: per-process state (runtime, null streams), the current device, hipStream_t.
* ``_graph_types``: capture and node-type enums, parameter objects, node specs, hipGraph_t/hipGraphNode_t.
* ``_capture_rules``: the captures in progress, the per-thread capture mode, ``check_unsafe``, fork/join.
* ``_device``, ``_memory``, ``_stream`` (streams and events), ``_module`` (modules and launches).
* ``_graph_build``: node specs from HIP arguments and the explicit construction API.
* ``_capture``: the capture object and hipStreamBeginCapture/EndCapture.
* ``_schedule`` (ops, lanes, plans, replicas) <- ``_graph_exec`` (GraphExec: build, launch, update)
  <- ``_graph_api`` (instantiate, launch, exec updates).

Imports ``hostside.replay``, ``hostside.clr``, ``hostside.hsa``, ``hostside.platform`` (only so that it
registers the embedded-platform factory with hsa) and ``shm_layout``.
"""
from shm_layout.kernels import SignatureError, kernel

from ._errors import HipError, hipError_t, hipGetErrorName, hipGetLastError, hipPeekAtLastError
from ._context import hipStream_t
from ._device import (hipDeviceProp_t, hipDeviceReset, hipDeviceSynchronize, hipGetDevice, hipGetDeviceCount,
                      hipGetDeviceProperties, hipSetDevice)
from ._memory import (hipFree, hipHostFree, hipHostMalloc, hipMalloc, hipMemcpy, hipMemcpyAsync, hipMemcpyDefault,
                      hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, hipMemcpyHostToDevice, hipMemcpyHostToHost,
                      hipMemcpyKind, hipMemset, hipMemsetAsync, host_array)
from ._stream import (hipEvent_t, hipEventCreate, hipEventDestroy, hipEventElapsedTime, hipEventQuery, hipEventRecord,
                      hipEventSynchronize, hipStreamCreate, hipStreamDestroy, hipStreamQuery, hipStreamSynchronize,
                      hipStreamWaitEvent)
from ._module import (hipFunction_t, hipModule_t, hipModuleGetFunction, hipModuleGetGlobal, hipModuleLaunchKernel,
                      hipModuleLoad, hipModuleLoadData, hipModuleUnload)
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
from ._capture_rules import hipThreadExchangeStreamCaptureMode
from ._capture import (hipEventRecordWithFlags, hipStreamBeginCapture, hipStreamEndCapture, hipStreamGetCaptureInfo,
                       hipStreamIsCapturing)
from ._graph_api import (hipGraphExec_t, hipGraphExecDestroy, hipGraphExecKernelNodeSetParams, hipGraphInstantiate,
                         hipGraphInstantiateWithFlags, hipGraphLaunch, hipGraphNodeGetEnabled, hipGraphNodeSetEnabled)

__all__ = [
    # kernel authors (shm_layout.kernels)
    "kernel", "SignatureError",
    # errors (_errors)
    "hipError_t", "HipError", "hipGetLastError", "hipPeekAtLastError", "hipGetErrorName",
    # streams (_context)
    "hipStream_t",
    # devices (_device)
    "hipGetDeviceCount", "hipSetDevice", "hipGetDevice", "hipDeviceProp_t", "hipGetDeviceProperties",
    "hipDeviceSynchronize", "hipDeviceReset",
    # memory (_memory)
    "hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree", "host_array", "hipMemcpyKind", "hipMemcpyHostToHost",
    "hipMemcpyHostToDevice", "hipMemcpyDeviceToHost", "hipMemcpyDeviceToDevice", "hipMemcpyDefault", "hipMemcpy",
    "hipMemcpyAsync", "hipMemset", "hipMemsetAsync",
    # streams and events (_stream)
    "hipStreamCreate", "hipStreamDestroy", "hipStreamSynchronize", "hipStreamQuery", "hipStreamWaitEvent",
    "hipEvent_t", "hipEventCreate", "hipEventRecord", "hipEventSynchronize", "hipEventQuery", "hipEventElapsedTime",
    "hipEventDestroy",
    # modules and launches (_module)
    "hipModule_t", "hipFunction_t", "hipModuleLoadData", "hipModuleLoad", "hipModuleUnload", "hipModuleGetFunction",
    "hipModuleGetGlobal", "hipModuleLaunchKernel",
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
    "hipGraphKernelNodeGetParams", "hipGraphKernelNodeSetParams", "hipGraphDebugDotPrint",
    # stream capture (_capture_rules)
    "hipThreadExchangeStreamCaptureMode",
    # stream capture (_capture)
    "hipStreamBeginCapture", "hipStreamEndCapture", "hipStreamIsCapturing", "hipStreamGetCaptureInfo",
    "hipEventRecordWithFlags",
    # executable graphs (_graph_api)
    "hipGraphExec_t", "hipGraphInstantiate", "hipGraphInstantiateWithFlags", "hipGraphLaunch",
    "hipGraphExecDestroy", "hipGraphExecKernelNodeSetParams", "hipGraphNodeSetEnabled", "hipGraphNodeGetEnabled",
]
