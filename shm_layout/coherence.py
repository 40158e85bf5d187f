"""The coherence model: SVM (one shared mapping) and non-SVM (device segment + host mirror).

* SVM (a2a3-like): host and device use the same bytes; ``write_range_to_device`` and
  ``read_range_from_device`` are no-ops.
* non-SVM (a5-like): the device works on its own segment, the host on a mirror. A host write reaches
  the device only through ``write_range_to_device(off, n)``; a device write reaches the host only
  through ``read_range_from_device(off, n)``. Both copy exactly the named byte range, so a bulk
  write-back of the whole header (``write_range_to_device(0, size)``) rolls back device-owned
  fields: the mistake is visible, as it is on hardware.

``wmb()`` / ``rmb()`` order nothing on x86-64 for aligned stores; they are kept at the places the
protocols need them and double as hooks of the barrier checker: with ``HDEMU_CHECK_BARRIERS=1``
(or ``BarrierChecker.enable()``), ``publish()`` of an index with a data write since the last
``wmb()`` is recorded as a violation (and raises in strict mode).
"""
from __future__ import annotations

import os

import numpy as np

from .errors import BarrierViolation


class BarrierChecker:
    enabled = os.environ.get("HDEMU_CHECK_BARRIERS", "") not in ("", "0")
    strict = os.environ.get("HDEMU_CHECK_BARRIERS", "") == "strict"
    dirty = False
    violations: list[str] = []

    @classmethod
    def enable(cls, strict: bool = False):
        cls.enabled, cls.strict, cls.dirty = True, strict, False
        cls.violations = []

    @classmethod
    def disable(cls):
        cls.enabled = False


def wmb() -> None:
    """Write barrier: data stores before it are visible before index stores after it."""
    BarrierChecker.dirty = False


def rmb() -> None:
    """Read barrier: loads after it see data at least as new as the index loaded before it."""


def data_written() -> None:
    """Mark a data store (record, buffer pointer, payload) for the barrier checker."""
    if BarrierChecker.enabled:
        BarrierChecker.dirty = True


def publish(what: str) -> None:
    """Called right before storing an index that makes data visible to the peer."""
    if BarrierChecker.enabled and BarrierChecker.dirty:
        msg = f"publish of {what} with no wmb() since the last data write"
        BarrierChecker.violations.append(msg)
        if BarrierChecker.strict:
            raise BarrierViolation(msg)


class SharedRegion:
    """A region both sides use, under one of the two memory models.

    ``device`` is the device's bytes (a numpy u8 view of the device segment); ``host`` is what the
    host process reads and writes: the same array under SVM, a mirror under non-SVM.
    """

    def __init__(self, device: np.ndarray, host: np.ndarray | None, svm: bool):
        if not svm and host is None:
            raise ValueError("a non-SVM region needs a host mirror")
        if not svm and len(host) != len(device):
            raise ValueError(f"host mirror must be {len(device)} bytes, not {len(host)}")
        self.svm = svm
        self.device = device
        self.host = device if svm else host
        self.writes_to_device = 0
        self.reads_from_device = 0
        self.bytes_to_device = 0
        self.bytes_from_device = 0

    def _check(self, off: int, n: int):
        if off < 0 or n < 0 or off + n > len(self.device):
            raise ValueError(f"range [{off}, {off + n}) must lie within the {len(self.device)}-byte region")

    def write_range_to_device(self, off: int, n: int) -> None:
        self._check(off, n)
        if self.svm:
            return
        self.device[off:off + n] = self.host[off:off + n]
        self.writes_to_device += 1
        self.bytes_to_device += n

    def read_range_from_device(self, off: int, n: int) -> None:
        self._check(off, n)
        if self.svm:
            return
        self.host[off:off + n] = self.device[off:off + n]
        self.reads_from_device += 1
        self.bytes_from_device += n
