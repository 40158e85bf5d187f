"""Diagnostics of every role (CP, AICPU lanes, collector, supervisor): stdlib logging, one logger per role.

A role logs to ``hdemu.<role>`` (``hdemu.cp0``, ``hdemu.aicpu1``, ``hdemu.collector``, ``hdemu.supervisor``: ``role_logger``). Its ``main()``
calls ``configure_stderr`` once, which prints each record as one line on stderr in the form the roles
always used, ``hdemu cp0: queue 3 error ...``: the logger name without its ``hdemu.`` root.
"""
from __future__ import annotations

import logging
import sys

__all__ = ["role_logger", "configure_stderr", "FORMAT"]

FORMAT = "hdemu %(role)s: %(message)s"
_ROOT = "hdemu."


def role_logger(role: str) -> logging.Logger:
    """The logger of one role instance: ``role_logger("cp0")`` is ``logging.getLogger("hdemu.cp0")``."""
    return logging.getLogger(_ROOT + role)


class _RoleFilter(logging.Filter):
    """Gives every record the ``role`` the format prints (its logger name without ``hdemu.``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        record.role = name[len(_ROOT):] if name.startswith(_ROOT) else name
        return True


def configure_stderr(level: int = logging.INFO) -> None:
    """One stderr handler on the root logger (idempotent: a second call changes nothing)."""
    root = logging.getLogger()
    if any(getattr(h, "_hdemu_role_handler", False) for h in root.handlers):
        return
    h = logging.StreamHandler(sys.stderr)
    h.setFormatter(logging.Formatter(FORMAT))
    h.addFilter(_RoleFilter())
    h._hdemu_role_handler = True
    root.addHandler(h)
    root.setLevel(level)
