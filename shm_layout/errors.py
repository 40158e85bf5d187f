"""hdemu's one error family.

Every error hdemu raises on purpose is an ``HdemuError``. The family is flat: one class per kind of
thing that went wrong, each a direct child of ``HdemuError`` (some also derive from the builtin a
caller would expect, e.g. ``ConfigError`` is a ``ValueError``). Messages say what was wrong and what
was expected: "platform.agents must be an integer in [1, 16], not 0".

| class            | raised when                                                                 |
|------------------|-----------------------------------------------------------------------------|
| ConfigError      | a configuration key has a wrong type, is out of range, or is unknown         |
| LayoutError      | a shared layout is inconsistent, or a value read from shared memory is not   |
|                  | one the layout allows                                                        |
| SegmentError     | a shared-memory segment cannot be created, pre-allocated, attached, removed |
| PlatformError    | no platform, a stale or foreign platform name, a platform that won't start  |
| SignatureError   | a code object or a kernel signature does not parse                           |
| AllocError       | an allocation table is full or an address is not a live allocation          |
| BarrierViolation | the barrier checker saw a publish with no barrier since the last data write |
| ProtocolError    | a peer broke a shared-memory protocol (a corrupt lane, an impossible index) |
| ReplayError      | the kernel-replay service was used against its contract                      |

The runtime layers keep their own status types on top of this family: ``hostside.hsa.HsaError``
(an ``HdemuError`` carrying an ``hsa_status_t``) and HIP's ``HipError`` (which carries a
``hipError_t`` name, with the underlying ``HdemuError`` as its ``__cause__``).
"""
from __future__ import annotations

__all__ = ["HdemuError", "ConfigError", "LayoutError", "SegmentError", "PlatformError", "SignatureError",
           "AllocError", "BarrierViolation", "ProtocolError", "ReplayError"]


class HdemuError(Exception):
    """Base of every error hdemu raises on purpose."""


class ConfigError(HdemuError, ValueError):
    """A configuration key has a wrong type, an out-of-range value, or is unknown.

    ``key`` is the full dotted path of the key (``platform.profiling.block_timeout_s``), or "" when
    the whole document is wrong (not TOML, not a table).
    """

    def __init__(self, msg: str, key: str = ""):
        super().__init__(msg)
        self.key = key


class LayoutError(HdemuError, ValueError):
    """A shared layout is inconsistent (overlap, misalignment, wrong size), or a value read from
    shared memory is not one its layout allows."""


class SegmentError(HdemuError):
    """A shared-memory segment could not be created, pre-allocated, attached or removed."""


class PlatformError(HdemuError):
    """No platform to attach to, a stale or foreign platform, or a platform that did not start."""


class SignatureError(HdemuError, ValueError):
    """A code object or one of its kernel signatures does not parse."""


class AllocError(HdemuError):
    """An allocation table is full, or an address is not a live allocation."""


class BarrierViolation(HdemuError):
    """The barrier checker saw an index published with no barrier since the last data write."""


class ProtocolError(HdemuError):
    """A peer broke a shared-memory protocol: a corrupt queue entry, an impossible index or count."""


class ReplayError(HdemuError):
    """The kernel-replay service was used against its contract (configured twice, bad arguments)."""
