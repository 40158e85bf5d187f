"""hipGetErrorName / hipGetErrorString and their driver-API forms: an error code's name and its
one-line description, the texts CLR returns (hipamd/src/hip_error.cpp). An unknown code is
``hipErrorUnknown`` / ``unknown error``, as in CLR; the driver forms (hipDrvGetErrorName,
hipDrvGetErrorString) say hipErrorInvalidValue for it instead."""
from __future__ import annotations

import operator

from ._errors import _raise, hipError_t

__all__ = ["hipGetErrorName", "hipGetErrorString", "hipDrvGetErrorName", "hipDrvGetErrorString"]

_E = hipError_t
#: hipGetErrorString's text of each code (CLR's ihipGetErrorString)
_TEXT = {
    _E.hipSuccess: "no error",
    _E.hipErrorInvalidValue: "invalid argument",
    _E.hipErrorOutOfMemory: "out of memory",
    _E.hipErrorNotInitialized: "initialization error",
    _E.hipErrorDeinitialized: "driver shutting down",
    _E.hipErrorProfilerDisabled: "profiler disabled while using external profiling tool",
    _E.hipErrorProfilerNotInitialized: "profiler is not initialized",
    _E.hipErrorProfilerAlreadyStarted: "profiler already started",
    _E.hipErrorProfilerAlreadyStopped: "profiler already stopped",
    _E.hipErrorInvalidConfiguration: "invalid configuration argument",
    _E.hipErrorInvalidPitchValue: "invalid pitch argument",
    _E.hipErrorInvalidSymbol: "invalid device symbol",
    _E.hipErrorInvalidDevicePointer: "invalid device pointer",
    _E.hipErrorInvalidMemcpyDirection: "invalid copy direction for memcpy",
    _E.hipErrorInsufficientDriver: "driver version is insufficient for runtime version",
    _E.hipErrorMissingConfiguration: "__global__ function call is not configured",
    _E.hipErrorPriorLaunchFailure: "unspecified launch failure in prior launch",
    _E.hipErrorInvalidDeviceFunction: "invalid device function",
    _E.hipErrorNoDevice: "no ROCm-capable device is detected",
    _E.hipErrorInvalidDevice: "invalid device ordinal",
    _E.hipErrorInvalidImage: "device kernel image is invalid",
    _E.hipErrorInvalidContext: "invalid device context",
    _E.hipErrorContextAlreadyCurrent: "context is already current context",
    _E.hipErrorMapFailed: "mapping of buffer object failed",
    _E.hipErrorUnmapFailed: "unmapping of buffer object failed",
    _E.hipErrorArrayIsMapped: "array is mapped",
    _E.hipErrorAlreadyMapped: "resource already mapped",
    _E.hipErrorNoBinaryForGpu: "no kernel image is available for execution on the device",
    _E.hipErrorAlreadyAcquired: "resource already acquired",
    _E.hipErrorNotMapped: "resource not mapped",
    _E.hipErrorNotMappedAsArray: "resource not mapped as array",
    _E.hipErrorNotMappedAsPointer: "resource not mapped as pointer",
    _E.hipErrorECCNotCorrectable: "uncorrectable ECC error encountered",
    _E.hipErrorUnsupportedLimit: "limit is not supported on this architecture",
    _E.hipErrorContextAlreadyInUse: "exclusive-thread device already in use by a different thread",
    _E.hipErrorPeerAccessUnsupported: "peer access is not supported between these two devices",
    _E.hipErrorInvalidKernelFile: "invalid kernel file",
    _E.hipErrorInvalidGraphicsContext: "invalid OpenGL or DirectX context",
    _E.hipErrorInvalidSource: "device kernel image is invalid",
    _E.hipErrorFileNotFound: "file not found",
    _E.hipErrorSharedObjectSymbolNotFound: "shared object symbol not found",
    _E.hipErrorSharedObjectInitFailed: "shared object initialization failed",
    _E.hipErrorOperatingSystem: "OS call failed or operation not supported on this OS",
    _E.hipErrorInvalidHandle: "invalid resource handle",
    _E.hipErrorIllegalState: "the operation cannot be performed in the present state",
    _E.hipErrorNotFound: "named symbol not found",
    _E.hipErrorNotReady: "device not ready",
    _E.hipErrorIllegalAddress: "an illegal memory access was encountered",
    _E.hipErrorLaunchOutOfResources: "too many resources requested for launch",
    _E.hipErrorLaunchTimeOut: "the launch timed out and was terminated",
    _E.hipErrorPeerAccessAlreadyEnabled: "peer access is already enabled",
    _E.hipErrorPeerAccessNotEnabled: "peer access has not been enabled",
    _E.hipErrorSetOnActiveProcess: "cannot set while device is active in this process",
    _E.hipErrorContextIsDestroyed: "context is destroyed",
    _E.hipErrorAssert: "device-side assert triggered",
    _E.hipErrorHostMemoryAlreadyRegistered: "part or all of the requested memory range is already mapped",
    _E.hipErrorHostMemoryNotRegistered: "pointer does not correspond to a registered memory region",
    _E.hipErrorLaunchFailure: "unspecified launch failure",
    _E.hipErrorCooperativeLaunchTooLarge: "too many blocks in cooperative launch",
    _E.hipErrorNotSupported: "operation not supported",
    _E.hipErrorStreamCaptureUnsupported: "operation not permitted when stream is capturing",
    _E.hipErrorStreamCaptureInvalidated: "operation failed due to a previous error during capture",
    _E.hipErrorStreamCaptureMerge: "operation would result in a merge of separate capture sequences",
    _E.hipErrorStreamCaptureUnmatched: "capture was not ended in the same stream as it began",
    _E.hipErrorStreamCaptureUnjoined: "capturing stream has unjoined work",
    _E.hipErrorStreamCaptureIsolation: "dependency created on uncaptured work in another stream",
    _E.hipErrorStreamCaptureImplicit: "operation would make the legacy stream depend on a capturing blocking stream",
    _E.hipErrorCapturedEvent: "operation not permitted on an event last recorded in a capturing stream",
    _E.hipErrorStreamCaptureWrongThread: "attempt to terminate a thread-local capture sequence from another thread",
    _E.hipErrorGraphExecUpdateFailure: "the graph update was not performed because it included changes which "
                                       "violated constraints specific to instantiated graph update",
    _E.hipErrorUnknown: "unknown error",
}


def _code(err) -> hipError_t | None:
    """``err`` as a known hipError_t, or None (not an int, or no such code)."""
    if isinstance(err, bool):
        return None
    try:
        return hipError_t(operator.index(err))       # an int, a hipError_t, a numpy integer
    except (TypeError, ValueError):
        return None


def hipGetErrorName(err) -> str:
    """The code's name (``hipErrorInvalidValue``); ``hipErrorUnknown`` for a code HIP does not have."""
    e = _code(err)
    return "hipErrorUnknown" if e is None else e.name


def hipGetErrorString(err) -> str:
    """The code's description (``invalid argument``); ``unknown error`` for a code HIP does not have."""
    e = _code(err)
    return "unknown error" if e is None else _TEXT.get(e, "unknown error")


def hipDrvGetErrorName(err) -> str:
    """hipGetErrorName, but a code HIP does not have is hipErrorInvalidValue (as in CLR)."""
    if _code(err) is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{err!r} is not a hipError_t")
    return hipGetErrorName(err)


def hipDrvGetErrorString(err) -> str:
    """hipGetErrorString, but a code HIP does not have is hipErrorInvalidValue (as in CLR)."""
    if _code(err) is None:
        _raise(hipError_t.hipErrorInvalidValue, f"{err!r} is not a hipError_t")
    return hipGetErrorString(err)
