"""What the ported stream cases share: hip-tests catch/unit/stream/streamCommon.cc (``hip::checkStream``,
``hip::checkStreamPriorityAndFlags``) and the null / per-thread / created stream choice of many cases."""
from __future__ import annotations

import contextlib

from hostside import hip
from tests.upstream.hipkit import Gate

__all__ = ["gates", "STREAM_KINDS", "make_stream", "drop_stream", "check_stream", "check_stream_priority_and_flags"]

#: hip::nullStream, hip::streamPerThread and a stream from hipStreamCreate
STREAM_KINDS = ("null", "per_thread", "created")


def make_stream(kind: str):
    """The stream a case runs on: ``None`` (null stream), ``hip.hipStreamPerThread`` or a new stream."""
    if kind == "null":
        return None
    if kind == "per_thread":
        return hip.hipStreamPerThread
    if kind == "created":
        return hip.hipStreamCreate()
    raise ValueError(f"stream kind must be one of {STREAM_KINDS}, not {kind!r}")


def drop_stream(kind: str, stream) -> None:
    if kind == "created":
        hip.hipStreamDestroy(stream)


def _priority_ok(stream, expected: int | None) -> bool:
    priority = hip.hipStreamGetPriority(stream)
    if expected is not None:
        return priority == expected
    low, high = hip.hipDeviceGetStreamPriorityRange()
    return high <= priority <= low


def check_stream(stream) -> bool:
    """hip::checkStream: default flags and a priority inside the device's range."""
    return hip.hipStreamGetFlags(stream) == hip.hipStreamDefault and _priority_ok(stream, None)


def check_stream_priority_and_flags(stream, priority: int, flags: int | None = None) -> bool:
    """hip::checkStreamPriorityAndFlags: exactly these flags (default: hipStreamDefault) and priority."""
    want = hip.hipStreamDefault if flags is None else flags
    return hip.hipStreamGetFlags(stream) == want and _priority_ok(stream, priority)


@contextlib.contextmanager
def gates(mod, n: int):
    """``n`` independent gates (upstream's delays of different lengths). On the way out every gate is
    opened before any is closed: ``Gate.close`` synchronizes the device, which would otherwise wait
    for a gate still shut."""
    gs = [Gate(mod) for _ in range(n)]
    try:
        yield gs
    finally:
        for g in gs:
            g.open()
        for g in gs:
            g.close()
