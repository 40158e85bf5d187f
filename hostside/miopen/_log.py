"""MIOpen's log switch and the per-call record of which cache level answered.

``MIOPEN_LOG_LEVEL`` (read at each line, as MIOpen reads its env var): 0 default (= 4, warnings, as a
release build), 1 quiet, 2 fatal, 3 error, 4 warning, 5 info, 6 info2, 7 trace. A line goes to stderr
as MIOpen prints it: ``MIOpen(HIP): Info [FunctionName] message``. ``MIOPEN_ENABLE_LOGGING_MPMT=1``
prefixes the thread id, as MIOpen does.

hdemu has no host-side trace hook reachable through ``hostside.hip``'s public face, so the per-call
records live in ``statistics()`` (and the log) only.
"""
from __future__ import annotations

import os
import sys
import threading

QUIET, FATAL, ERROR, WARNING, INFO, INFO2, TRACE = 1, 2, 3, 4, 5, 6, 7
_NAMES = {1: "Quiet", 2: "Fatal", 3: "Error", 4: "Warning", 5: "Info", 6: "Info2", 7: "Trace"}


def level() -> int:
    raw = os.environ.get("MIOPEN_LOG_LEVEL", "")
    try:
        v = int(raw) if raw.strip() else 0
    except ValueError:
        v = 0
    return WARNING if v <= 0 else v


def enabled(lvl: int) -> bool:
    return level() >= lvl


def log(lvl: int, fn: str, msg: str) -> None:
    """One MIOpen log line (``MIOpen(HIP): Info [fn] msg``) on stderr when the level allows it."""
    if level() < lvl:
        return
    prefix = f"{threading.get_native_id()} " if os.environ.get("MIOPEN_ENABLE_LOGGING_MPMT", "") not in ("", "0") \
        else ""
    sys.stderr.write(f"{prefix}MIOpen(HIP): {_NAMES.get(lvl, 'Trace')} [{fn}] {msg}\n")
    sys.stderr.flush()


def log_i(fn: str, msg: str) -> None:
    if level() >= INFO:
        log(INFO, fn, msg)


def log_i2(fn: str, msg: str) -> None:
    if level() >= INFO2:
        log(INFO2, fn, msg)


def log_w(fn: str, msg: str) -> None:
    if level() >= WARNING:
        log(WARNING, fn, msg)
