"""A MIOpen-like library on the emulated GPU: pooling forward/backward with MIOpen's names, argument
order, solvers and caches, standing only on ``hostside.hip``'s public face (docs/miopen.md).

Handles and descriptors are returned as values; device pointers are ints (``hip.hipMalloc``);
failures raise ``MiopenError`` carrying the ``miopenStatus_t``. ``statistics(handle)`` tells which
level answered each call (invoker cache, kernel/program cache, binary cache, compiled) and how long
each step took; ``MIOPEN_LOG_LEVEL=5`` (or 6) prints MIOpen's Info lines to stderr.

Modules, each importing only those before it: ``_errors``, ``_types`` (enums), ``_log``, ``_tensor``,
``_pooling_desc``, ``_program`` (compiling kernel templates, the binary cache, Kernel), ``_handle``
(handle, invoker cache, kernel cache, LoadProgram, PrepareInvoker, statistics), ``_problem``,
``_solver`` (base, transposing solver, ExecutePrimitive), ``_solvers_fwd``, ``_solvers_bwd``,
``_pooling_api``; ``_kerndb`` (the SQLite binary cache) is imported by ``_program`` when present.
"""
from ._errors import MiopenError, miopenStatus_t
from ._types import (miopenDataType_t, miopenHalf, miopenFloat, miopenInt32, miopenInt8, miopenBFloat16,
                     miopenDouble, miopenFloat8, miopenBFloat8, miopenInt64, miopenTensorLayout_t, miopenTensorNCHW,
                     miopenTensorNHWC, miopenTensorCHWN, miopenTensorNCHWc4, miopenTensorNCHWc8, miopenTensorCHWNc4,
                     miopenTensorCHWNc8, miopenTensorNCDHW, miopenTensorNDHWC, miopenPoolingMode_t, miopenPoolingMax, miopenPoolingAverage,
                     miopenPoolingAverageInclusive, miopenIndexType_t, miopenIndexUint8, miopenIndexUint16,
                     miopenIndexUint32, miopenIndexUint64, miopenPoolingWorkspaceIndexMode_t,
                     miopenPoolingWorkspaceIndexMask, miopenPoolingWorkspaceIndexImage, miopenPaddingMode_t,
                     miopenPaddingDefault, miopenPaddingSame, miopenPaddingValid)
from ._tensor import (miopenTensorDescriptor_t, miopenCreateTensorDescriptor, miopenSet4dTensorDescriptor,
                      miopenSetNdTensorDescriptorWithLayout, miopenSet4dTensorDescriptorEx, miopenSetTensorDescriptor,
                      miopenSetTensorDescriptorV2, miopenGetTensorDescriptor,
                      miopenGet4dTensorDescriptor, miopenGetTensorDescriptorSize, miopenDestroyTensorDescriptor)
from ._pooling_desc import (miopenPoolingDescriptor_t, miopenCreatePoolingDescriptor, miopenSet2dPoolingDescriptor,
                            miopenGet2dPoolingDescriptor, miopenSetNdPoolingDescriptor, miopenGetNdPoolingDescriptor,
                            miopenSetPoolingIndexType, miopenGetPoolingIndexType, miopenSetPoolingWorkSpaceIndexMode,
                            miopenGetPoolingWorkSpaceIndexMode, miopenGetPoolingForwardOutputDim,
                            miopenGetPoolingNdForwardOutputDim, miopenPoolingGetWorkSpaceSize,
                            miopenPoolingGetWorkSpaceSizeV2, miopenDestroyPoolingDescriptor)
from ._handle import (LEVELS, miopenHandle_t, miopenCreate, miopenCreateWithStream, miopenDestroy, miopenSetStream,
                      miopenGetStream, statistics)
from ._pooling_api import miopenPoolingForward, miopenPoolingBackward

__all__ = [
    "MiopenError", "miopenStatus_t",
    "miopenDataType_t", "miopenHalf", "miopenFloat", "miopenInt32", "miopenInt8", "miopenBFloat16", "miopenDouble",
    "miopenFloat8", "miopenBFloat8", "miopenInt64", "miopenTensorLayout_t", "miopenTensorNCHW", "miopenTensorNHWC",
    "miopenTensorCHWN", "miopenTensorNCHWc4", "miopenTensorNCHWc8", "miopenTensorCHWNc4", "miopenTensorCHWNc8",
    "miopenTensorNCDHW", "miopenTensorNDHWC", "miopenPoolingMode_t", "miopenPoolingMax", "miopenPoolingAverage", "miopenPoolingAverageInclusive",
    "miopenIndexType_t", "miopenIndexUint8", "miopenIndexUint16", "miopenIndexUint32", "miopenIndexUint64",
    "miopenPoolingWorkspaceIndexMode_t", "miopenPoolingWorkspaceIndexMask", "miopenPoolingWorkspaceIndexImage",
    "miopenPaddingMode_t", "miopenPaddingDefault", "miopenPaddingSame", "miopenPaddingValid",
    "miopenTensorDescriptor_t", "miopenCreateTensorDescriptor", "miopenSet4dTensorDescriptor",
    "miopenSetNdTensorDescriptorWithLayout", "miopenSetTensorDescriptorV2", "miopenSet4dTensorDescriptorEx", "miopenSetTensorDescriptor", "miopenGetTensorDescriptor",
    "miopenGet4dTensorDescriptor", "miopenGetTensorDescriptorSize", "miopenDestroyTensorDescriptor",
    "miopenPoolingDescriptor_t", "miopenCreatePoolingDescriptor", "miopenSet2dPoolingDescriptor",
    "miopenGet2dPoolingDescriptor", "miopenSetNdPoolingDescriptor", "miopenGetNdPoolingDescriptor",
    "miopenSetPoolingIndexType", "miopenGetPoolingIndexType", "miopenSetPoolingWorkSpaceIndexMode",
    "miopenGetPoolingWorkSpaceIndexMode", "miopenGetPoolingForwardOutputDim", "miopenGetPoolingNdForwardOutputDim",
    "miopenPoolingGetWorkSpaceSize", "miopenPoolingGetWorkSpaceSizeV2", "miopenDestroyPoolingDescriptor",
    "miopenHandle_t", "miopenCreate", "miopenCreateWithStream", "miopenDestroy", "miopenSetStream", "miopenGetStream",
    "miopenPoolingForward", "miopenPoolingBackward", "statistics", "LEVELS",
]
