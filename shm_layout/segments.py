"""Shared-memory segments: create (supervisor), attach (everyone), unlink (owner only), sweep.

Names are ``hdemu-<creator pid>-<run token>-<what>``: unique per run, and the creator pid in the
name is what ``sweep()`` (``hdemu clean``) uses to find segments whose creator is dead. Segments are
created with O_EXCL and mode 0600 and are pre-faulted with ``posix_fallocate`` so that the first
touch of a buffer does not run at page-fault speed (FACTS: 1.7 GB/s on first touch of 64 MiB).

Liveness of a creator or owner by pid alone is fooled by a reused pid; ``process_start`` and
``alive_since`` pair a pid with its start time (``/proc/<pid>/stat``) so that a dead owner stays dead.

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

from .errors import SegmentError
from .sync import pid_alive

PREFIX = "hdemu-"
_NAME_RE = re.compile(r"^hdemu-(\d+)-([0-9a-f]+)-[A-Za-z0-9_.-]+$")
SHM_DIR = "/dev/shm"


def new_run_token() -> str:
    return secrets.token_hex(4)


def parse_name(name: str) -> tuple[int, str] | None:
    """(creator pid, run token) of an hdemu segment name, or None when it is not one."""
    m = _NAME_RE.match(name)
    return (int(m.group(1)), m.group(2)) if m else None


def segment_name(pid: int, token: str, what: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", what):
        raise ValueError(f"segment suffix must be [A-Za-z0-9_.-]+, not {what!r}")
    return f"{PREFIX}{pid}-{token}-{what}"


#: madvise advice values of Linux 5.14+ (the mmap module of this Python may not name them)
_MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)
_MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)
#: ``Segment.populate`` maps segments up to this size (the DFX segments by default: a few MiB)
POPULATE_MAX_BYTES = 256 << 20


class Segment:
    """One POSIX shared-memory segment mapped into this process.

    ``buf`` is the mmap; ``u8`` a numpy byte view of it. ``close()`` unmaps (views must be gone);
    ``unlink()`` removes the name and may only be called by the creator.
    """

    def __init__(self, name: str, size: int, mm: mmap.mmap, owner: bool, uid: int | None = None):
        self.name = name
        self.size = size
        self.buf = mm
        self.owner = owner
        self.uid = os.geteuid() if uid is None else uid    # the owner of /dev/shm/<name>
        self.u8 = np.frombuffer(mm, dtype=np.uint8, count=size)
        self.addr = self.u8.ctypes.data

    @classmethod
    def create(cls, name: str, size: int) -> "Segment":
        """Create, pre-allocate and map a new segment. Every segment is pre-allocated with
        ``posix_fallocate``: a /dev/shm too small fails here, naming the segment, its size and the
        free space, not later as a SIGBUS of whoever touches the page. The allocation also makes
        the first touch fast (FACTS: 1.7 GB/s at page-fault speed)."""
        if size <= 0:
            raise SegmentError(f"segment size must be positive, not {size}")
        try:
            shm = posix_ipc.SharedMemory("/" + name, posix_ipc.O_CREX, mode=0o600, size=size)
        except posix_ipc.ExistentialError as exc:
            raise SegmentError(f"segment {name} already exists") from exc
        except OSError as exc:
            raise SegmentError(f"cannot create segment {name} ({size} bytes): {exc}") from exc
        try:
            try:
                os.posix_fallocate(shm.fd, 0, size)
            except OSError as exc:
                shm.close_fd()
                unlink_name(name)
                raise SegmentError(f"cannot allocate segment {name} of {size} bytes in {SHM_DIR}: "
                                   f"{exc.strerror or exc} ({_free_bytes()} bytes free there)") from None
            mm = mmap.mmap(shm.fd, size)
        finally:
            if shm.fd >= 0:
                shm.close_fd()
        return cls(name, size, mm, owner=True)

    @classmethod
    def attach(cls, name: str) -> "Segment":
        try:
            shm = posix_ipc.SharedMemory("/" + name)
        except posix_ipc.ExistentialError:
            raise SegmentError(f"segment {name} does not exist (platform gone?)") from None
        except posix_ipc.PermissionsError:
            raise SegmentError(f"segment {name} belongs to another user ({_owner_name(name)}); "
                               f"hdemu platforms are private to the user who started them") from None
        try:
            st = os.fstat(shm.fd)
            if st.st_size <= 0:
                raise SegmentError(f"segment {name} is empty (a creator that died before sizing it?)")
            mm = mmap.mmap(shm.fd, st.st_size)
        finally:
            shm.close_fd()
        return cls(name, st.st_size, mm, owner=False, uid=st.st_uid)

    def view(self, dtype, offset: int = 0, count: int = -1) -> np.ndarray:
        return np.frombuffer(self.buf, dtype=dtype, offset=offset, count=count)

    def populate(self, write: bool) -> bool:
        """Map every page of the segment into this process now (``MADV_POPULATE_WRITE`` or ``_READ``,
        Linux 5.14+), instead of one minor page fault at each page's first touch (about 3 us a 4 KiB
        page here: a role that streams through a segment it has not touched yet, as an AICPU lane through
        its record buffers, pays more for the faults than for the copies). Contents are unchanged.
        False where the kernel does not support it, or for a segment over ``POPULATE_MAX_BYTES``
        (mapping it whole would cost its attach more than its faults cost a run): the pages then
        fault in as before."""
        if self.size > POPULATE_MAX_BYTES:
            return False
        try:
            self.buf.madvise(_MADV_POPULATE_WRITE if write else _MADV_POPULATE_READ)
        except (OSError, ValueError):
            return False
        return True

    def close(self) -> bool:
        """Unmap; True when unmapped. Tolerates live numpy views: False, and the mapping goes when
        they are collected."""
        self.u8 = None
        try:
            self.buf.close()
        except BufferError:
            return False
        return True

    def unlink(self) -> None:
        if not self.owner:
            raise SegmentError(f"only the creator may unlink {self.name}")
        unlink_name(self.name)


def _free_bytes() -> int:
    try:
        st = os.statvfs(SHM_DIR)
        return st.f_bavail * st.f_frsize
    except OSError:
        return -1


def _owner_name(name: str) -> str:
    """The user owning /dev/shm/<name>, as a name if it has one."""
    try:
        uid = os.stat(os.path.join(SHM_DIR, name)).st_uid
    except OSError:
        return "unknown"
    try:
        import pwd  # POSIX only, like the rest of this module; imported here because only errors need it
        return f"{pwd.getpwuid(uid).pw_name}, uid {uid}"
    except (ImportError, KeyError):
        return f"uid {uid}"


def segment_uid(name: str) -> int:
    """The uid owning /dev/shm/<name>, or -1 if it is gone."""
    try:
        return os.stat(os.path.join(SHM_DIR, name)).st_uid
    except OSError:
        return -1


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


#: starttime is field 22 of /proc/<pid>/stat; the fields after the command name start at field 3
_STARTTIME_FIELD = 22 - 3


def process_start(pid: int) -> int:
    """The start time of process ``pid`` (clock ticks since boot, field 22 of /proc/<pid>/stat), or
    0 when it is gone or unreadable. With the pid it names one process: a pid the kernel reused for
    a later process has a later start time."""
    if pid <= 0:
        return 0
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[_STARTTIME_FIELD])
    except (OSError, ValueError, IndexError):
        return 0


def alive_since(pid: int, start: int) -> bool:
    """``pid`` runs (not a zombie) and is the process that started at ``start`` (``process_start``):
    a dead owner whose pid was reused stays dead. ``start`` 0 (not recorded) checks the pid only."""
    if not pid_alive(pid):
        return False
    return not start or process_start(pid) == start


def sweep(*, only_pid: int | None = None, alive=None) -> list[str]:
    """Unlink every hdemu segment of this user whose creator is dead (or of ``only_pid``'s runs if
    it is dead). Other users' segments are left alone (we could not unlink them anyway).
    ``alive(pid, token)`` says whether the run's creator lives (default: ``pid_alive(pid)``; the CLI
    passes ``topology.run_alive``, which also sees a reused pid)."""
    removed = []
    me = os.getuid()
    verdicts: dict[tuple[int, str], bool] = {}
    for name, pid, tok in list_segments():
        if only_pid is not None and pid != only_pid:
            continue
        if segment_uid(name) != me:
            continue
        if (pid, tok) not in verdicts:
            verdicts[(pid, tok)] = pid_alive(pid) if alive is None else alive(pid, tok)
        if not verdicts[(pid, tok)]:
            try:
                if unlink_name(name):
                    removed.append(name)
            except posix_ipc.PermissionsError:
                continue
    return removed
