"""HSA's errors: an ``HsaError`` carries an ``hsa_status_t`` (``status``) and its hsa.h name."""
from __future__ import annotations

from shm_layout import layouts as L
from shm_layout.errors import HdemuError

__all__ = ["HsaError", "HostWaitTimeout", "DeviceLost"]


class HsaError(HdemuError):
    """An HSA call failed; ``status`` is the hsa_status_t value, ``name`` its hsa.h name."""

    def __init__(self, status: int, msg: str):
        self.status = status
        self.name = L.STATUS_NAMES.get(status, f"HSA_STATUS_{status:#x}")
        super().__init__(f"{self.name}: {msg}")


class HostWaitTimeout(HsaError):
    """A host wait on device work ran out its bound (``Runtime.wait_timeout_s``)."""

    def __init__(self, msg: str):
        super().__init__(L.HSA_STATUS_ERROR, msg)


class DeviceLost(HsaError):
    """The command processor of ``agent`` is gone."""

    def __init__(self, agent: int, msg: str):
        self.agent = agent
        super().__init__(L.HSA_STATUS_ERROR_FATAL, msg)
