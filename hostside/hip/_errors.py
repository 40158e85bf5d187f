"""HIP errors: ``hipError_t``, ``HipError``, the mapping from HSA status, and the per-thread last error
(``hipGetLastError`` / ``hipPeekAtLastError``).

Every public HIP function goes through ``_api``: an ``HsaError`` from the layers below becomes the
matching ``HipError`` (the ``HsaError`` is its ``__cause__``), and any ``HipError`` raised is also kept
as this thread's last error.
"""
from __future__ import annotations

import enum
import functools
import threading

import numpy as np

from shm_layout import layouts as L
from shm_layout.errors import ConfigError, HdemuError, PlatformError, SegmentError

from ..hsa import DeviceLost, HostWaitTimeout, HsaError

__all__ = ["hipError_t", "HipError", "hipGetLastError", "hipPeekAtLastError"]


class hipError_t(enum.IntEnum):
    """HIP's error codes, with hip_runtime_api.h's values."""
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorOutOfMemory = 2
    hipErrorMemoryAllocation = 2            # the older name of hipErrorOutOfMemory
    hipErrorNotInitialized = 3
    hipErrorInitializationError = 3
    hipErrorDeinitialized = 4
    hipErrorProfilerDisabled = 5
    hipErrorProfilerNotInitialized = 6
    hipErrorProfilerAlreadyStarted = 7
    hipErrorProfilerAlreadyStopped = 8
    hipErrorInvalidConfiguration = 9
    hipErrorInvalidPitchValue = 12
    hipErrorInvalidSymbol = 13
    hipErrorInvalidDevicePointer = 17
    hipErrorInvalidMemcpyDirection = 21
    hipErrorInsufficientDriver = 35
    hipErrorMissingConfiguration = 52
    hipErrorPriorLaunchFailure = 53
    hipErrorInvalidDeviceFunction = 98
    hipErrorNoDevice = 100
    hipErrorInvalidDevice = 101
    hipErrorInvalidImage = 200
    hipErrorInvalidContext = 201
    hipErrorContextAlreadyCurrent = 202
    hipErrorMapFailed = 205
    hipErrorMapBufferObjectFailed = 205
    hipErrorUnmapFailed = 206
    hipErrorArrayIsMapped = 207
    hipErrorAlreadyMapped = 208
    hipErrorNoBinaryForGpu = 209
    hipErrorAlreadyAcquired = 210
    hipErrorNotMapped = 211
    hipErrorNotMappedAsArray = 212
    hipErrorNotMappedAsPointer = 213
    hipErrorECCNotCorrectable = 214
    hipErrorUnsupportedLimit = 215
    hipErrorContextAlreadyInUse = 216
    hipErrorPeerAccessUnsupported = 217
    hipErrorInvalidKernelFile = 218
    hipErrorInvalidGraphicsContext = 219
    hipErrorInvalidSource = 300
    hipErrorFileNotFound = 301
    hipErrorSharedObjectSymbolNotFound = 302
    hipErrorSharedObjectInitFailed = 303
    hipErrorOperatingSystem = 304
    hipErrorInvalidHandle = 400
    hipErrorInvalidResourceHandle = 400     # the older name of hipErrorInvalidHandle (an alias)
    hipErrorIllegalState = 401
    hipErrorNotFound = 500
    hipErrorNotReady = 600
    hipErrorIllegalAddress = 700
    hipErrorLaunchOutOfResources = 701
    hipErrorLaunchTimeOut = 702
    hipErrorPeerAccessAlreadyEnabled = 704
    hipErrorPeerAccessNotEnabled = 705
    hipErrorSetOnActiveProcess = 708
    hipErrorContextIsDestroyed = 709
    hipErrorAssert = 710
    hipErrorHostMemoryAlreadyRegistered = 712
    hipErrorHostMemoryNotRegistered = 713
    hipErrorLaunchFailure = 719
    hipErrorCooperativeLaunchTooLarge = 720
    hipErrorNotSupported = 801
    hipErrorStreamCaptureUnsupported = 900
    hipErrorStreamCaptureInvalidated = 901
    hipErrorStreamCaptureMerge = 902
    hipErrorStreamCaptureUnmatched = 903
    hipErrorStreamCaptureUnjoined = 904
    hipErrorStreamCaptureIsolation = 905
    hipErrorStreamCaptureImplicit = 906
    hipErrorCapturedEvent = 907
    hipErrorStreamCaptureWrongThread = 908
    hipErrorGraphExecUpdateFailure = 910
    hipErrorUnknown = 999


class HipError(RuntimeError):
    """A HIP call failed. ``error`` is the hipError_t, ``name`` its name. When a lower layer's error
    caused it (an ``HsaError``, an ``HdemuError``), that error is the ``__cause__``."""

    def __init__(self, error: hipError_t, msg: str = ""):
        self.error = hipError_t(error)
        self.name = self.error.name
        super().__init__(f"{self.name}: {msg}" if msg else self.name)


_STATUS_TO_HIP = {
    L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: hipError_t.hipErrorIllegalAddress,
    L.HSA_STATUS_ERROR_MEMORY_FAULT: hipError_t.hipErrorIllegalAddress,
    L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT: hipError_t.hipErrorInvalidImage,
    L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: hipError_t.hipErrorInvalidConfiguration,
    L.HSA_STATUS_ERROR_EXCEPTION: hipError_t.hipErrorLaunchFailure,
    L.HSA_STATUS_ERROR_INVALID_SIGNAL: hipError_t.hipErrorLaunchFailure,
    L.HSA_STATUS_ERROR_OUT_OF_RESOURCES: hipError_t.hipErrorOutOfMemory,
    L.HSA_STATUS_ERROR_INVALID_ARGUMENT: hipError_t.hipErrorInvalidValue,
    L.HSA_STATUS_ERROR_INVALID_ALLOCATION: hipError_t.hipErrorInvalidValue,
    L.HSA_STATUS_ERROR_INVALID_AGENT: hipError_t.hipErrorInvalidDevice,
    L.HSA_STATUS_ERROR_NOT_INITIALIZED: hipError_t.hipErrorNotInitialized,
    L.HSA_STATUS_ERROR_INVALID_QUEUE: hipError_t.hipErrorLaunchFailure,
    L.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: hipError_t.hipErrorOutOfMemory,
    L.HSA_STATUS_ERROR_FATAL: hipError_t.hipErrorLaunchFailure,
}

_tls = threading.local()        # .last: this thread's last error


def _set_last(err: hipError_t) -> None:
    _tls.last = err


def _is_int(v) -> bool:
    """An integer argument (a Python or numpy integer, not a bool)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _raise(err: hipError_t, msg: str, cause: BaseException | None = None):
    """Keep ``err`` as the last error and raise it (with ``cause`` as ``__cause__`` when given)."""
    _set_last(err)
    if cause is not None:
        raise HipError(err, msg) from cause
    raise HipError(err, msg)


def _from_hsa(exc: HsaError) -> HipError:
    """The HipError for an HsaError (kept as the last error); raise it ``from exc``."""
    if isinstance(exc, DeviceLost):
        err = hipError_t.hipErrorLaunchFailure
    elif isinstance(exc, HostWaitTimeout):
        err = hipError_t.hipErrorLaunchTimeOut
    else:
        err = _STATUS_TO_HIP.get(exc.status, hipError_t.hipErrorUnknown)
    _set_last(err)
    return HipError(err, str(exc))


#: The errors of bringing the runtime up (no platform, a stale or foreign HDEMU_PLATFORM, a bad
#: HDEMU_CONFIG, a segment that cannot be made) as a HIP call reports them: a HipError that is also
#: the original class (``_from_platform``), so ``except HipError`` and ``except PlatformError`` both work.
_PLATFORM_ERRORS = (PlatformError, SegmentError, ConfigError)
_PLATFORM_HIP = {ConfigError: hipError_t.hipErrorNotInitialized}
_hip_platform_types: dict = {}


def _from_platform(exc: HdemuError) -> HipError:
    """The HipError for a runtime that could not come up (kept as the last error): hipErrorNoDevice
    (hipErrorNotInitialized for a bad configuration), of a class that derives from both HipError and
    ``type(exc)``; raise it ``from exc``."""
    cls = type(exc)
    t = _hip_platform_types.get(cls)
    if t is None:
        t = _hip_platform_types[cls] = type(f"Hip{cls.__name__}", (HipError, cls), {"__module__": __name__})
    err = next((e for c, e in _PLATFORM_HIP.items() if isinstance(exc, c)), hipError_t.hipErrorNoDevice)
    _set_last(err)
    return t(err, str(exc))


def _api(fn):
    """Wrap a public HIP function: HsaError -> HipError (cause kept), a runtime that could not come up
    -> HipError (``_from_platform``), HipError -> last error."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HsaError as exc:
            raise _from_hsa(exc) from exc
        except HipError as exc:
            _set_last(exc.error)
            raise
        except _PLATFORM_ERRORS as exc:
            raise _from_platform(exc) from exc
    return wrapper


def hipGetLastError() -> hipError_t:
    err = getattr(_tls, "last", hipError_t.hipSuccess)
    _tls.last = hipError_t.hipSuccess
    return err


def hipPeekAtLastError() -> hipError_t:
    return getattr(_tls, "last", hipError_t.hipSuccess)
