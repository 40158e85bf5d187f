"""Shared-memory segments: create (supervisor), attach (everyone), unlink (owner only), sweep.

Names are ``hdemu-<creator pid>-<run token>-<what>``: unique per run, and the creator pid in the
name is what ``sweep()`` (``hdemu clean``) uses to find segments whose creator is dead. Segments are
created with O_EXCL and mode 0600 and are pre-faulted with ``posix_fallocate`` so that the first
touch of a buffer does not run at page-fault speed (FACTS: 1.7 GB/s on first touch of 64 MiB).

We use posix_ipc rather than ``multiprocessing.shared_memory``: on Python 3.11 the latter's resource
tracker unlinks a segment when an unrelated process that merely attached to it exits.
"""
from __future__ import annotations

import mmap
import os
import re
import secrets

import numpy as np
import posix_ipc

from .sync import pid_alive

PREFIX = "hdemu-"
_NAME_RE = re.compile(r"^hdemu-(\d+)-([0-9a-f]+)-[A-Za-z0-9_.-]+$")
SHM_DIR = "/dev/shm"


class SegmentError(RuntimeError):
    """A segment could not be created, attached or removed."""


def new_run_token() -> str:
    return secrets.token_hex(4)


def segment_name(pid: int, token: str, what: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", what):
        raise ValueError(f"segment suffix must be [A-Za-z0-9_.-]+, not {what!r}")
    return f"{PREFIX}{pid}-{token}-{what}"


class Segment:
    """One POSIX shared-memory segment mapped into this process.

    ``buf`` is the mmap; ``u8`` a numpy byte view of it. ``close()`` unmaps (views must be gone);
    ``unlink()`` removes the name and may only be called by the creator.
    """

    def __init__(self, name: str, size: int, mm: mmap.mmap, owner: bool):
        self.name = name
        self.size = size
        self.buf = mm
        self.owner = owner
        self.u8 = np.frombuffer(mm, dtype=np.uint8, count=size)
        self.addr = self.u8.ctypes.data

    @classmethod
    def create(cls, name: str, size: int, *, prefault: bool = True) -> "Segment":
        if size <= 0:
            raise ValueError(f"segment size must be positive, not {size}")
        try:
            shm = posix_ipc.SharedMemory("/" + name, posix_ipc.O_CREX, mode=0o600, size=size)
        except posix_ipc.ExistentialError as exc:
            raise SegmentError(f"segment {name} already exists") from exc
        try:
            if prefault:
                try:
                    os.posix_fallocate(shm.fd, 0, size)
                except OSError:
                    pass
            mm = mmap.mmap(shm.fd, size)
        finally:
            shm.close_fd()
        return cls(name, size, mm, owner=True)

    @classmethod
    def attach(cls, name: str) -> "Segment":
        try:
            shm = posix_ipc.SharedMemory("/" + name)
        except posix_ipc.ExistentialError as exc:
            raise SegmentError(f"segment {name} does not exist (platform gone?)") from exc
        try:
            size = os.fstat(shm.fd).st_size
            mm = mmap.mmap(shm.fd, size)
        finally:
            shm.close_fd()
        return cls(name, size, mm, owner=False)

    def view(self, dtype, offset: int = 0, count: int = -1) -> np.ndarray:
        return np.frombuffer(self.buf, dtype=dtype, offset=offset, count=count)

    def close(self) -> None:
        """Unmap. Tolerates live numpy views (the mapping then goes when they are collected)."""
        self.u8 = None
        try:
            self.buf.close()
        except BufferError:
            pass

    def unlink(self) -> None:
        if not self.owner:
            raise SegmentError(f"only the creator may unlink {self.name}")
        unlink_name(self.name)


def unlink_name(name: str) -> bool:
    try:
        posix_ipc.unlink_shared_memory("/" + name)
        return True
    except posix_ipc.ExistentialError:
        return False


def list_segments() -> list[tuple[str, int, str]]:
    """(name, creator pid, run token) of every hdemu segment in /dev/shm."""
    out = []
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return out
    for n in names:
        m = _NAME_RE.match(n)
        if m:
            out.append((n, int(m.group(1)), m.group(2)))
    return sorted(out)


def sweep(*, only_pid: int | None = None) -> list[str]:
    """Unlink every hdemu segment whose creator is dead (or of ``only_pid``'s runs if it is dead)."""
    removed = []
    for name, pid, _tok in list_segments():
        if only_pid is not None and pid != only_pid:
            continue
        if not pid_alive(pid):
            if unlink_name(name):
                removed.append(name)
    return removed
