"""miopenStatus_t and the exception every failing MIOpen call raises (``MiopenError``).

Values as in MIOpen's public header (include/miopen/miopen.h). A failure is raised, not returned:
``MiopenError.status`` is the ``miopenStatus_t`` member and ``str()`` starts with its name, the way
MIOpen's ``MIOPEN_THROW`` messages reach a user.
"""
from __future__ import annotations

import enum

from shm_layout.errors import HdemuError

__all__ = ["miopenStatus_t", "MiopenError", "live_descriptor", "set_descriptor"]


class miopenStatus_t(enum.IntEnum):
    miopenStatusSuccess = 0
    miopenStatusNotInitialized = 1
    miopenStatusInvalidValue = 2
    miopenStatusBadParm = 3
    miopenStatusAllocFailed = 4
    miopenStatusInternalError = 5
    miopenStatusNotImplemented = 6
    miopenStatusUnknownError = 7
    miopenStatusUnsupportedOp = 8
    miopenStatusGpuOperationsSkipped = 9
    miopenStatusVersionMismatch = 10


class MiopenError(HdemuError):
    """A MIOpen call failed with ``status`` (a ``miopenStatus_t``)."""

    def __init__(self, status: miopenStatus_t, msg: str):
        self.status = miopenStatus_t(status)
        super().__init__(f"{self.status.name}: {msg}")


def live_descriptor(desc, cls: type, what: str):
    """``desc`` if it is a live (not destroyed) ``cls``, else miopenStatusBadParm naming ``what``."""
    if type(desc) is not cls:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} must be a {cls.__name__}, not {desc!r}")
    if desc.destroyed:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} was destroyed")
    return desc


def set_descriptor(desc, cls: type, what: str, field: str, setters: str):
    """``live_descriptor``, and set by one of ``setters`` (its ``field`` is no longer None), else
    miopenStatusBadParm."""
    live_descriptor(desc, cls, what)
    if getattr(desc, field) is None:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} was created but never set ({setters})")
    return desc
