"""The binary cache: MIOpen's SQLite kernel database (user ``.ukdb``, read-only system ``.kdb``).

``Handle::LoadProgram`` asks ``LoadBinary`` for a code object before compiling and gives what it compiled
to ``SaveBinary``; both use a ``KernDb``. Checked against MIOpen (ROCm/MIOpen 2d1fd99, ROCm/rocm-libraries
``projects/miopen``): ``kern_db.hpp/.cpp``, ``sqlite_db.hpp/.cpp``, ``binary_cache.cpp``, ``db_path.cpp.in``,
``expanduser.cpp``, ``handle.hpp``, ``target_properties.cpp``, ``bz2.cpp``, ``exp_backoff.hpp``, ``env.hpp``.

Schema (``KernelConfig::CreateQuery``): table ``kern_db`` (``id INTEGER PRIMARY KEY ASC``, ``kernel_name``,
``kernel_args`` TEXT, ``kernel_blob`` BLOB, ``kernel_hash`` TEXT, ``uncompressed_size`` INT, all NOT NULL),
unique index ``idx_kern_db`` on ``(kernel_name, kernel_args)``; a store is ``INSERT OR REPLACE``.
Record: ``kernel_hash`` = lowercase md5 hex of the uncompressed blob; the blob is bz2 level 9 into a buffer
as large as the blob, raw with ``uncompressed_size = 0`` when that does not fit. A hash mismatch on load
throws ``miopenStatusInternalError`` "Possible database corruption" (nothing catches it). A broken bz2
stream is check_bz2_error's ``std::runtime_error`` ("BZ2_bzBuffToBuffDecompress failed: ..."): unknown error.

Files (``GetDb``, ``Handle::GetDbBasename``, ``TargetProperties::InitDbId``):
``<cache dir>/<major>.<minor>.<patch>.<tweak>/<db id><cu>.ukdb``, ``<cu>`` = ``_<n>`` for n <= 64, else n in
hex without separator (110 CUs: ``gfx90a6e``, as MIOpen's shipped ``gfx90a6e.kdb``); db id = arch name
before any ``:feature``, plus ``_xnack`` for ``:xnack+``. Cache dir: ``MIOPEN_CUSTOM_CACHE_DIR`` or
``~/.cache/miopen/``, the version directory appended to either (rocm-libraries; older ROCm/MIOpen used the
custom dir as is); ``~`` is ``$HOME`` (``/tmp`` if HOME is unset or ``/``). System db:
``$MIOPEN_SYSTEM_DB_PATH`` (MIOpen: ``<lib>/share/miopen/db``; here the package's ``db`` dir) +
``/<basename>.kdb``, else ``/<db id>.kdb``, else none; read-only, consulted after a user miss, never written.
``MIOPEN_DISABLE_CACHE`` (MIOpen's boolean parsing; a bad value is ``miopenStatusInvalidValue``): loads
miss, stores do nothing. ``MIOPEN_USER_DB_PATH`` (``~/.config/miopen/``) is MIOpen's perf/find db dir and
does not move the kernel cache; here it only feeds :func:`user_db_dir`.

SQLite use: every operation opens the database afresh (MIOpen's ``GetDb`` builds a ``KernDb`` per
``LoadBinary`` / ``SaveBinary``): read-write/create, ``PRAGMA journal_mode=WAL`` (refusal is only logged),
table and index created if missing, columns checked (a mismatch is only a warning). Busy
(``SQLite::Retry``): on ``SQLITE_BUSY`` yield for 10 tries, then sleep 100 us x 2**r (r uniform 0..10) until
30 s are up, then throw "Timeout while waiting for Database: <file>" (unknown error: MIOPEN_THROW with a
message only). MIOpen also sets a 10 ms ``sqlite3_busy_timeout``; here it is 0 so every busy return is
counted. Limit: ``busy_limit_s``, or ``HDEMU_MIOPEN_DB_BUSY_LIMIT_S`` for :meth:`KernDb.for_device`.

Faults (:func:`inject_fault`) and MIOpen's answer (from the code paths above; SQLite's messages checked
with SQLite 3.40 as a non-root user). MIOpen falls back to compiling for none of them, it raises:

- ``malformed_file``: open succeeds, the WAL pragma fails (SQLITE_NOTADB): ``miopenStatusInternalError``
  "Internal error while accessing SQLite database: file is not a database", on load and store. (A system
  ``.kdb`` under 512 bytes is skipped with a warning; a larger malformed one raises the same way.)
- ``md5_mismatch``: "Possible database corruption".
- ``locked``: another connection holds the write lock; WAL readers still answer, a store backs off and
  raises the timeout.
- ``readonly_dir``: no ``.ukdb`` yet: "Cannot open database file:<file>" (internal error); an existing one
  fails the WAL pragma, "... attempt to write a readonly database"; a cache dir that cannot be created is a
  ``std::filesystem_error`` (unknown error). Running as root ignores permission bits, so a directory whose
  mode has no write bit counts as read-only here, as it would for a user.
"""
from __future__ import annotations

import bz2
import hashlib
import logging
import os
import random
import sqlite3
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable, Mapping

from ._errors import MiopenError, miopenStatus_t

__all__ = [
    "MIOPEN_VERSION_MAJOR", "MIOPEN_VERSION_MINOR", "MIOPEN_VERSION_PATCH", "MIOPEN_VERSION_TWEAK",
    "KDB_VERSION", "KERN_DB_CREATE_TABLE", "KERN_DB_CREATE_INDEX", "DEFAULT_BUSY_LIMIT_S",
    "KernDb", "env_enabled", "expand_user", "db_id", "db_basename", "user_cache_dir", "system_db_dir",
    "user_db_dir", "kern_db_paths", "make_object_file_name", "md5_hex", "compress_blob", "decompress_blob",
    "FAULTS", "DbFault", "inject_fault", "write_system_db",
]

log = logging.getLogger("hostside.miopen.kerndb")

MIOPEN_VERSION_MAJOR = 3
MIOPEN_VERSION_MINOR = 4
MIOPEN_VERSION_PATCH = 0
MIOPEN_VERSION_TWEAK = "hdemu"  # MIOpen puts its git hash here
KDB_VERSION = f"{MIOPEN_VERSION_MAJOR}.{MIOPEN_VERSION_MINOR}.{MIOPEN_VERSION_PATCH}.{MIOPEN_VERSION_TWEAK}"

KERN_DB_CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS `kern_db` (`id` INTEGER PRIMARY KEY ASC,`kernel_name` TEXT NOT NULL,"
    "`kernel_args` TEXT NOT NULL,`kernel_blob` BLOB NOT NULL,`kernel_hash` TEXT NOT NULL,"
    "`uncompressed_size` INT NOT NULL);")
KERN_DB_CREATE_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS `idx_kern_db` ON kern_db(kernel_name, kernel_args);"
_CHECKED_FIELDS = ("kernel_name", "kernel_args", "kernel_blob")  # KernelConfig::FieldNames
_SELECT = "SELECT kernel_blob, kernel_hash, uncompressed_size FROM kern_db WHERE kernel_name = ? AND kernel_args = ?;"
_INSERT = ("INSERT OR REPLACE INTO kern_db(kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size) "
           "VALUES(?, ?, ?, ?, ?);")

DEFAULT_BUSY_LIMIT_S = 30.0
BUSY_LIMIT_ENV = "HDEMU_MIOPEN_DB_BUSY_LIMIT_S"
SYSTEM_DB_MIN_BYTES = 512  # "size of a very small database": smaller system files are skipped
DEFAULT_CACHE_DIR = "~/.cache/miopen/"
DEFAULT_USER_DB_DIR = "~/.config/miopen/"
PACKAGE_SYSTEM_DB_DIR = Path(__file__).resolve().parent / "db"
_SQL_ERR = "Internal error while accessing SQLite database: "
_SQLITE_BUSY = 5

_Env = Mapping[str, str]


# --------------------------------------------------------------------------------------------------- paths
def env_enabled(name: str, environ: _Env | None = None) -> bool:
    """A boolean MIOpen env var: unset/empty is False; bad values raise miopenStatusInvalidValue."""
    raw = (os.environ if environ is None else environ).get(name, "")
    low = raw.lower()
    if low in ("", "0", "disable", "disabled", "no", "off", "false"):
        return False
    if low in ("1", "enable", "enabled", "yes", "on", "true"):
        return True
    raise MiopenError(miopenStatus_t.miopenStatusInvalidValue,
                      f"Invalid value for env variable (value='{low}') in {name}")


def expand_user(path: str, environ: _Env | None = None) -> Path:
    """MIOpen's ExpandUser on Linux: every ``~`` becomes $HOME (the temp dir when HOME is unset or "/")."""
    home = (os.environ if environ is None else environ).get("HOME", "")
    if home in ("", "/"):
        home = tempfile.gettempdir()
    return Path(str(path).replace("~", home))


def db_id(arch: str) -> str:
    """TargetProperties::DbId: the name before any ``:feature``, plus ``_xnack`` for ``:xnack+``."""
    if not isinstance(arch, str) or not arch.split(":")[0]:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"arch must be a gfx name such as 'gfx90a', got {arch!r}")
    return arch.split(":")[0] + ("_xnack" if ":xnack+" in arch else "")


def db_basename(arch: str, num_cu: int) -> str:
    """Handle::GetDbBasename: ``<db id>_<n>`` up to 64 CUs, ``<db id><n in hex>`` above."""
    if isinstance(num_cu, bool) or not isinstance(num_cu, int) or num_cu <= 0:
        raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"num_cu must be a positive int, got {num_cu!r}")
    return db_id(arch) + (f"_{num_cu}" if num_cu <= 64 else f"{num_cu:x}")


def user_cache_dir(environ: _Env | None = None) -> Path:
    """``$MIOPEN_CUSTOM_CACHE_DIR`` or ``~/.cache/miopen/``, then the version directory."""
    custom = (os.environ if environ is None else environ).get("MIOPEN_CUSTOM_CACHE_DIR", "")
    return expand_user(custom or DEFAULT_CACHE_DIR, environ) / KDB_VERSION


def system_db_dir(environ: _Env | None = None) -> Path | None:
    """``$MIOPEN_SYSTEM_DB_PATH`` or the package's ``db`` directory; None when it does not exist."""
    p = (os.environ if environ is None else environ).get("MIOPEN_SYSTEM_DB_PATH", "")
    d = expand_user(p, environ) if p else PACKAGE_SYSTEM_DB_DIR
    return d if d.exists() else None


def user_db_dir(environ: _Env | None = None) -> Path:
    """Where MIOpen keeps user perf/find dbs (``$MIOPEN_USER_DB_PATH`` or ``~/.config/miopen/``); not the
    kernel cache."""
    p = (os.environ if environ is None else environ).get("MIOPEN_USER_DB_PATH", "")
    return expand_user(p or DEFAULT_USER_DB_DIR, environ)


def kern_db_paths(arch: str, num_cu: int, environ: _Env | None = None) -> tuple[Path, Path | None]:
    """(user ``.ukdb`` path, system ``.kdb`` path or None), resolved as ``GetDb`` does."""
    base = db_basename(arch, num_cu)
    user = user_cache_dir(environ) / f"{base}.ukdb"
    sysdir = system_db_dir(environ)
    system = None
    if sysdir is not None:
        for cand in (sysdir / f"{base}.kdb", sysdir / f"{db_id(arch)}.kdb"):
            if cand.exists():
                system = cand
                break
    return user, system


def make_object_file_name(name: str) -> str:
    """The ``kernel_name`` MIOpen stores: the program file name with ``.o`` appended."""
    return f"{name}.o"


# --------------------------------------------------------------------------------------------------- blobs
def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def compress_blob(data: bytes) -> tuple[bytes, int]:
    """(stored bytes, uncompressed_size): bz2 level 9 when it fits in len(data) bytes, else raw with 0."""
    packed = bz2.compress(data, 9)
    if len(packed) > len(data):
        return data, 0
    return packed, len(data)


def decompress_blob(stored: bytes, size: int) -> bytes:
    """Undo :func:`compress_blob`; bz2 failures carry check_bz2_error's messages (unknown error)."""
    if size == 0:
        return stored
    name = "BZ2_bzBuffToBuffDecompress failed: "
    if not stored.startswith(b"BZh"):
        why = "the compressed data doesn't begin with the right magic bytes"
    else:
        try:
            dec = bz2.BZ2Decompressor()
            out = dec.decompress(stored, max_length=size + 1)
            if len(out) > size:
                why = "the size of the compressed data exceeds *destLen"
            elif not dec.eof:
                why = "the compressed data ends unexpectedly"
            else:
                return out
        except OSError:
            why = "a data integrity error was detected in the compressed data"
    raise MiopenError(miopenStatus_t.miopenStatusUnknownError, name + why)


def _dir_read_only(d: Path) -> bool:
    try:
        mode = d.stat().st_mode
    except OSError:
        return False
    return (mode & 0o222) == 0 or not os.access(d, os.W_OK)


def _is_busy(e: sqlite3.Error) -> bool:
    return (getattr(e, "sqlite_errorcode", 0) & 0xFF) == _SQLITE_BUSY  # primary code, as MIOpen sees it


def _check_key(kernel_name, kernel_args) -> None:
    for what, value in (("kernel_name", kernel_name), ("kernel_args", kernel_args)):
        if not isinstance(value, str):
            raise MiopenError(miopenStatus_t.miopenStatusBadParm, f"{what} must be a str, got {type(value).__name__}")


# --------------------------------------------------------------------------------------------------- KernDb
class KernDb:
    """The user ``.ukdb`` (read-write) in front of an optional system ``.kdb`` (read-only).

    ``user_path=None`` means no user db (loads consult only the system db, stores do nothing);
    ``enabled=False`` is MIOPEN_DISABLE_CACHE (everything misses, nothing is stored). Thread-safe: each
    operation uses its own connection.
    """

    def __init__(self, user_path: str | os.PathLike | None, system_path: str | os.PathLike | None = None, *,
                 busy_limit_s: float = DEFAULT_BUSY_LIMIT_S, enabled: bool = True,
                 rng: random.Random | None = None):
        if not isinstance(busy_limit_s, (int, float)) or busy_limit_s < 0:
            raise MiopenError(miopenStatus_t.miopenStatusBadParm,
                              f"busy_limit_s must be a number >= 0, got {busy_limit_s!r}")
        self.user_path = Path(user_path) if user_path is not None else None
        self.system_path = Path(system_path) if system_path is not None else None
        self.enabled = bool(enabled)
        self.busy_limit_s = float(busy_limit_s)
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._closed = False
        self._warned: set[str] = set()
        self.warnings: list[str] = []
        self._n = dict(user_hits=0, system_hits=0, misses=0, stores=0, compressed_stores=0, raw_stores=0,
                       busy_waits=0, busy_wait_s=0.0, timeouts=0, errors=0, load_s=0.0, store_s=0.0)

    @classmethod
    def for_device(cls, arch: str, num_cu: int, *, busy_limit_s: float | None = None,
                   environ: _Env | None = None) -> "KernDb":
        """The db ``LoadBinary`` / ``SaveBinary`` would use for this device, paths from the env now."""
        env = os.environ if environ is None else environ
        user, system = kern_db_paths(arch, num_cu, env)
        if busy_limit_s is None:
            raw = env.get(BUSY_LIMIT_ENV, "")
            try:
                busy_limit_s = float(raw) if raw else DEFAULT_BUSY_LIMIT_S
            except ValueError:
                raise MiopenError(miopenStatus_t.miopenStatusInvalidValue,
                                  f"{BUSY_LIMIT_ENV} must be a number of seconds, got {raw!r}") from None
        if env_enabled("MIOPEN_DISABLE_CACHE", env):
            return cls(None, None, busy_limit_s=busy_limit_s, enabled=False)
        return cls(user, system, busy_limit_s=busy_limit_s)

    # ---------------------------------------------------------------- public
    def load(self, kernel_name: str, kernel_args: str) -> tuple[bytes, str] | None:
        """(blob, "user" | "system") or None; raises MiopenError on corruption, timeout or a bad file."""
        _check_key(kernel_name, kernel_args)
        self._check_open()
        t0 = time.perf_counter()
        try:
            for source, path, opener in (("user", self.user_path, self._open_user),
                                         ("system", self.system_path, self._open_system)):
                if self.enabled and path is not None:
                    blob = self._find(opener, path, kernel_name, kernel_args)
                    if blob is not None:
                        self._count(f"{source}_hits")
                        return blob, source
            self._count("misses")
            return None
        except MiopenError:
            self._count("errors")
            raise
        finally:
            self._count("load_s", time.perf_counter() - t0)

    def store(self, kernel_name: str, kernel_args: str, blob: bytes) -> None:
        """Insert or replace the record in the user db (never the system db)."""
        _check_key(kernel_name, kernel_args)
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise MiopenError(miopenStatus_t.miopenStatusBadParm,
                              f"blob must be bytes, got {type(blob).__name__}")
        self._check_open()
        if not self.enabled or self.user_path is None:
            return
        data = bytes(blob)
        stored, size = compress_blob(data)
        t0 = time.perf_counter()
        try:
            conn = self._open_user()
            try:
                self._check_columns(conn, self.user_path)
                self._sql(conn, self.user_path, _INSERT, (kernel_name, kernel_args, stored, md5_hex(data), size))
            finally:
                conn.close()
        except MiopenError:
            self._count("errors")
            raise
        finally:
            self._count("store_s", time.perf_counter() - t0)
        self._count("stores")
        self._count("compressed_stores" if size else "raw_stores")

    def stats(self) -> dict:
        with self._lock:
            return dict(self._n, enabled=self.enabled, warnings=len(self.warnings))

    def close(self) -> None:
        """No connection outlives an operation; close only makes later calls an error."""
        self._closed = True

    def __enter__(self) -> "KernDb":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "disabled" if not self.enabled else f"user={self.user_path} system={self.system_path}"
        return f"<KernDb {state}>"

    # ---------------------------------------------------------------- internals
    def _check_open(self) -> None:
        if self._closed:
            raise MiopenError(miopenStatus_t.miopenStatusNotInitialized, f"{self!r} is closed")

    def _count(self, key: str, by: float = 1) -> None:
        with self._lock:
            self._n[key] += by

    def _warn(self, msg: str) -> None:
        if msg not in self._warned:
            self._warned.add(msg)
            self.warnings.append(msg)
            log.warning("MIOpen(HIP): Warning [KernDb] %s", msg)

    def _retry(self, fn: Callable[[], object], path: Path):
        """SQLite::Retry: back off on SQLITE_BUSY until busy_limit_s, then the timeout error."""
        start = time.monotonic()
        deadline = start + self.busy_limit_s
        tries = 0
        try:
            while True:
                try:
                    return fn()
                except sqlite3.OperationalError as e:
                    if not _is_busy(e):
                        raise
                now = time.monotonic()
                self._count("busy_waits")
                if now > deadline:
                    self._count("timeouts")
                    raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                                      f"Timeout while waiting for Database: {path}")
                tries += 1
                if tries < 10:
                    time.sleep(0)
                else:
                    slot = 2 ** self._rng.randint(0, 10)
                    log.debug("Database busy, sleeping for: %d microseconds", 100 * slot)
                    time.sleep(min(100e-6 * slot, max(0.0, deadline - now) + 1e-4))
        finally:
            if tries:
                self._count("busy_wait_s", time.monotonic() - start)

    def _sql(self, conn: sqlite3.Connection, path: Path, query: str, params=()) -> list:
        try:
            return self._retry(lambda: conn.execute(query, params).fetchall(), path)
        except sqlite3.Error as e:
            raise MiopenError(miopenStatus_t.miopenStatusInternalError, _SQL_ERR + str(e)) from None

    def _check_columns(self, conn: sqlite3.Connection, path: Path) -> None:
        names = {row[1] for row in self._sql(conn, path, "PRAGMA table_info(kern_db);")}
        if not all(f in names for f in _CHECKED_FIELDS):
            self._warn(f"Invalid fields in table: kern_db disabling access to {path}")

    def _open_user(self) -> sqlite3.Connection:
        path = self.user_path
        d = path.parent
        if not d.exists():
            anc = d
            while not anc.exists() and anc != anc.parent:
                anc = anc.parent
            try:
                if _dir_read_only(anc):
                    raise PermissionError(13, "Permission denied")
                d.mkdir(parents=True, exist_ok=True)
            except OSError as exc:      # e.g. "Not a directory" when a path component is a file
                why = exc.strerror or "Permission denied"
                raise MiopenError(miopenStatus_t.miopenStatusUnknownError,
                                  f"filesystem error: cannot create directories: {why} [{d}]") from None
        if _dir_read_only(d):
            if not path.exists():
                raise MiopenError(miopenStatus_t.miopenStatusInternalError, f"Cannot open database file:{path}")
            raise MiopenError(miopenStatus_t.miopenStatusInternalError,
                              _SQL_ERR + "attempt to write a readonly database")
        try:
            conn = sqlite3.connect(str(path), timeout=0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            raise MiopenError(miopenStatus_t.miopenStatusInternalError, f"Cannot open database file:{path}") from None
        try:
            mode = self._sql(conn, path, "PRAGMA journal_mode=WAL;")
            if not mode or str(mode[0][0]).lower() != "wal":
                log.info("SQLite does not support WAL")
            self._sql(conn, path, KERN_DB_CREATE_TABLE)
            self._sql(conn, path, KERN_DB_CREATE_INDEX)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_system(self) -> sqlite3.Connection | None:
        path = self.system_path
        try:
            size = path.stat().st_size
        except OSError:
            log.info("database not present: %s", path)
            return None
        if size < SYSTEM_DB_MIN_BYTES:
            self._warn(f"Missing system database file: {path} Performance may degrade")
            return None
        uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            self._warn(f"Unable to read system database file:{path} Performance may degrade")
            return None
        return conn

    def _find(self, opener: Callable[[], sqlite3.Connection | None], path: Path, name: str, args: str):
        conn = opener()
        if conn is None:
            return None
        try:
            self._check_columns(conn, path)
            rows = self._sql(conn, path, _SELECT, (name, args))
        finally:
            conn.close()
        if not rows:
            return None
        stored, want, size = rows[0]
        blob = decompress_blob(bytes(stored), int(size))
        if md5_hex(blob) != want:
            raise MiopenError(miopenStatus_t.miopenStatusInternalError, "Possible database corruption")
        return blob


# --------------------------------------------------------------------------------------------------- faults
FAULTS = ("malformed_file", "md5_mismatch", "locked", "readonly_dir")


class DbFault:
    """An injected database fault; ``release()`` (or leaving the ``with`` block) undoes it."""

    def __init__(self, how: str, path: Path, undo: Callable[[], None]):
        self.how, self.path, self._undo, self.active = how, path, undo, True

    def release(self) -> None:
        if self.active:
            self.active = False
            self._undo()

    def __enter__(self) -> "DbFault":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _raw_conn(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=10, isolation_level=None)


def _sidecars(path: Path) -> list[Path]:
    return [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")]


def inject_fault(how: str, db_path: str | os.PathLike, *, kernel_name: str | None = None,
                 kernel_args: str | None = None) -> DbFault:
    """Damage the db at ``db_path`` the way ``how`` names (one of :data:`FAULTS`) and return the handle.

    ``malformed_file`` overwrites the file with non-SQLite bytes; ``md5_mismatch`` flips a byte in the
    stored blob(s) (optionally only the record named by kernel_name/kernel_args), keeping hash and size;
    ``locked`` holds the write lock from a separate connection until release; ``readonly_dir`` removes the
    write bits of the db's directory. Release restores the file, records, lock or mode.
    """
    path = Path(db_path)
    if how not in FAULTS:
        raise ValueError(f"unknown db fault {how!r}; expected one of {', '.join(FAULTS)}")
    if how == "readonly_dir":
        d = path.parent
        d.mkdir(parents=True, exist_ok=True)
        old = d.stat().st_mode & 0o7777
        os.chmod(d, old & ~0o222)
        return DbFault(how, path, lambda: os.chmod(d, old))
    if how == "locked":
        if not path.exists():
            conn = KernDb(path)._open_user()  # a real kern_db in WAL mode, as MIOpen leaves it
            conn.close()
        holder = sqlite3.connect(str(path), timeout=10, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN EXCLUSIVE")

        def unlock():
            holder.execute("ROLLBACK")
            holder.close()
        return DbFault(how, path, unlock)
    if not path.exists():
        raise ValueError(f"db fault {how!r} needs an existing database file, {path} does not exist")
    if how == "malformed_file":
        conn = _raw_conn(path)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        original = path.read_bytes()
        for side in _sidecars(path):
            side.unlink(missing_ok=True)
        path.write_bytes(b"hdemu: this is not an SQLite database\n" * 64)

        def restore():
            for side in _sidecars(path):
                side.unlink(missing_ok=True)
            path.write_bytes(original)
        return DbFault(how, path, restore)
    # md5_mismatch
    where, params = "", ()
    if kernel_name is not None or kernel_args is not None:
        if kernel_name is None or kernel_args is None:
            raise ValueError("md5_mismatch: give both kernel_name and kernel_args, or neither")
        where, params = " WHERE kernel_name = ? AND kernel_args = ?", (kernel_name, kernel_args)
    conn = _raw_conn(path)
    try:
        rows = conn.execute("SELECT id, kernel_blob, uncompressed_size FROM kern_db" + where, params).fetchall()
        if not rows:
            raise ValueError(f"md5_mismatch: no record to corrupt in {path}"
                             + (f" for ({kernel_name!r}, {kernel_args!r})" if where else ""))
        for rid, stored, size in rows:
            raw = bytearray(decompress_blob(bytes(stored), int(size)) or b"\0")
            raw[len(raw) // 2] ^= 0xFF
            bad = bz2.compress(bytes(raw), 9) if size else bytes(raw)
            conn.execute("UPDATE kern_db SET kernel_blob = ? WHERE id = ?", (bad, rid))
    finally:
        conn.close()

    def put_back():
        c = _raw_conn(path)
        try:
            for rid, stored, _size in rows:
                c.execute("UPDATE kern_db SET kernel_blob = ? WHERE id = ?", (stored, rid))
        finally:
            c.close()
    return DbFault(how, path, put_back)


def write_system_db(path: str | os.PathLike, records: Mapping[tuple[str, str], bytes]) -> Path:
    """Write a system ``.kdb`` (same schema, rollback journal, as MIOpen ships them) holding ``records``
    {(kernel_name, kernel_args): blob}. For tests and the scenario runner."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = _raw_conn(path)
    try:
        conn.execute(KERN_DB_CREATE_TABLE)
        conn.execute(KERN_DB_CREATE_INDEX)
        conn.execute("BEGIN")
        for (name, args), blob in records.items():
            data = bytes(blob)
            stored, size = compress_blob(data)
            conn.execute(_INSERT, (name, args, stored, md5_hex(data), size))
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path
