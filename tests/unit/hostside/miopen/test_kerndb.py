"""The binary cache (hostside.miopen._kerndb): MIOpen's kern_db schema read back with sqlite3, records
(bz2 or raw, md5), user db before a never-written system db, paths from the env, file naming, and the
injectable database faults with MIOpen's errors. Busy back-off and two writers: test_kerndb_concurrency."""
import bz2
import hashlib
import os
import sqlite3

import pytest

from hostside.miopen import _kerndb as kdb
from hostside.miopen._errors import MiopenError, miopenStatus_t
from hostside.miopen._kerndb import KernDb, inject_fault, write_system_db

pytestmark = pytest.mark.timeout(30)

S = miopenStatus_t
NAME = "MIOpenPooling.cl.o"
ARGS = "-DMLO_POOLING_OP_ID=1 -DMLO_POOLING_KERNEL_SZ0=2 -mcpu=gfx90a"
SRC = ("def pooling(ctx):\n    pass\n" * 200).encode()  # compresses well
RANDOM = os.urandom(3000)  # does not

# MIOpen's DDL, written out here independently of the module's constant
TABLE_SQL = ("CREATE TABLE `kern_db` (`id` INTEGER PRIMARY KEY ASC,`kernel_name` TEXT NOT NULL,"
             "`kernel_args` TEXT NOT NULL,`kernel_blob` BLOB NOT NULL,`kernel_hash` TEXT NOT NULL,"
             "`uncompressed_size` INT NOT NULL)")
INDEX_SQL = "CREATE UNIQUE INDEX `idx_kern_db` ON kern_db(kernel_name, kernel_args)"


def rows(path):
    c = sqlite3.connect(path)
    try:
        return c.execute("SELECT kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size "
                         "FROM kern_db ORDER BY id").fetchall()
    finally:
        c.close()


@pytest.fixture
def ukdb(tmp_path):
    return tmp_path / "cache" / "gfx90a68.ukdb"


def expect(status, text, fn, *a, **kw):
    with pytest.raises(MiopenError) as ei:
        fn(*a, **kw)
    assert ei.value.status == status, str(ei.value)
    assert text in str(ei.value), str(ei.value)
    return ei.value


# ------------------------------------------------------------------------------------------ schema
def test_schema_is_miopens(ukdb):
    KernDb(ukdb).store(NAME, ARGS, SRC)
    c = sqlite3.connect(ukdb)
    try:
        master = c.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        cols = c.execute("PRAGMA table_info(kern_db)").fetchall()
        idx = c.execute("PRAGMA index_list(kern_db)").fetchall()
        idx_cols = [r[2] for r in c.execute("PRAGMA index_info(idx_kern_db)")]
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        c.close()
    assert master == [("index", "idx_kern_db", "kern_db", INDEX_SQL), ("table", "kern_db", "kern_db", TABLE_SQL)]
    assert [(r[1], r[2], r[3], r[5]) for r in cols] == [
        ("id", "INTEGER", 0, 1), ("kernel_name", "TEXT", 1, 0), ("kernel_args", "TEXT", 1, 0),
        ("kernel_blob", "BLOB", 1, 0), ("kernel_hash", "TEXT", 1, 0), ("uncompressed_size", "INT", 1, 0)]
    assert [(r[1], r[2]) for r in idx] == [("idx_kern_db", 1)]  # unique
    assert idx_cols == ["kernel_name", "kernel_args"]
    assert mode == "wal"


# ------------------------------------------------------------------------------------------ records
def test_round_trip_compressed_and_raw(ukdb):
    db = KernDb(ukdb)
    assert db.load(NAME, ARGS) is None
    db.store(NAME, ARGS, SRC)
    db.store("raw.s.o", ARGS, RANDOM)
    db.store("empty.o", ARGS, b"")
    assert db.load(NAME, ARGS) == (SRC, "user")
    assert db.load("raw.s.o", ARGS) == (RANDOM, "user")
    assert db.load("empty.o", ARGS) == (b"", "user")
    (n1, a1, b1, h1, s1), (_, _, b2, h2, s2), (_, _, b3, _, s3) = rows(ukdb)
    assert (n1, a1) == (NAME, ARGS)
    assert s1 == len(SRC) and len(b1) < len(SRC) and bz2.decompress(b1) == SRC
    assert h1 == hashlib.md5(SRC).hexdigest()
    assert s2 == 0 and b2 == RANDOM and h2 == hashlib.md5(RANDOM).hexdigest()
    assert s3 == 0 and b3 == b""
    st = db.stats()
    assert (st["stores"], st["compressed_stores"], st["raw_stores"], st["user_hits"], st["misses"]) == (3, 1, 2, 3, 1)


def test_store_replaces_the_record_with_the_same_key(ukdb):
    db = KernDb(ukdb)
    db.store(NAME, ARGS, b"first" * 10)
    db.store(NAME, ARGS, b"second" * 10)
    db.store(NAME, ARGS + " -DX=1", b"other")
    assert len(rows(ukdb)) == 2
    assert db.load(NAME, ARGS) == (b"second" * 10, "user")
    assert db.load(NAME, ARGS + " -DX=1") == (b"other", "user")


def test_bad_input_names_what_is_wrong(ukdb):
    db = KernDb(ukdb)
    expect(S.miopenStatusBadParm, "blob must be bytes, got str", db.store, NAME, ARGS, "text")
    expect(S.miopenStatusBadParm, "kernel_args must be a str", db.load, NAME, None)
    expect(S.miopenStatusBadParm, "num_cu must be a positive int", KernDb.for_device, "gfx90a", 0)
    expect(S.miopenStatusBadParm, "arch must be a gfx name", KernDb.for_device, "", 4)
    db.close()
    expect(S.miopenStatusNotInitialized, "closed", db.load, NAME, ARGS)


def test_broken_bz2_stream_is_check_bz2_errors_message(ukdb):
    KernDb(ukdb).store(NAME, ARGS, SRC)
    c = sqlite3.connect(ukdb)
    c.execute("UPDATE kern_db SET kernel_blob = ?", (b"BZh9" + b"\x00" * 60,))
    c.commit()
    c.close()
    expect(S.miopenStatusUnknownError, "BZ2_bzBuffToBuffDecompress failed: a data integrity error",
           KernDb(ukdb).load, NAME, ARGS)


# ------------------------------------------------------------------------------------------ system db
def test_system_db_is_consulted_after_the_user_db_and_never_written(tmp_path, ukdb):
    kdb_file = write_system_db(tmp_path / "sys" / "gfx90a68.kdb",
                               {(NAME, ARGS): SRC, ("sys_only.o", ARGS): RANDOM})
    before = kdb_file.read_bytes()
    db = KernDb(ukdb, kdb_file)
    assert db.load("sys_only.o", ARGS) == (RANDOM, "system")
    assert db.load(NAME, ARGS) == (SRC, "system")
    db.store(NAME, ARGS, b"user copy" * 4)  # the user db answers first from now on
    assert db.load(NAME, ARGS) == (b"user copy" * 4, "user")
    assert db.load("missing.o", ARGS) is None
    assert kdb_file.read_bytes() == before
    assert [r[0] for r in rows(ukdb)] == [NAME]
    st = db.stats()
    assert (st["system_hits"], st["user_hits"], st["misses"], st["stores"]) == (2, 1, 1, 1)


def test_no_user_db_means_system_only_and_stores_dropped(tmp_path):
    kdb_file = write_system_db(tmp_path / "x.kdb", {(NAME, ARGS): SRC})
    db = KernDb(None, kdb_file)
    assert db.load(NAME, ARGS) == (SRC, "system")
    db.store("new.o", ARGS, b"x")
    assert db.load("new.o", ARGS) is None
    assert [r[0] for r in rows(kdb_file)] == [NAME]


def test_tiny_system_db_is_skipped_with_a_warning(tmp_path, ukdb):
    tiny = tmp_path / "gfx90a68.kdb"
    tiny.write_bytes(b"x" * 100)
    db = KernDb(ukdb, tiny)
    assert db.load(NAME, ARGS) is None
    assert db.stats()["warnings"] == 1 and "Missing system database file" in db.warnings[0]


def test_malformed_system_db_raises(tmp_path, ukdb):
    bad = tmp_path / "gfx90a68.kdb"
    bad.write_bytes(b"not sqlite " * 100)
    expect(S.miopenStatusInternalError, "file is not a database", KernDb(ukdb, bad).load, NAME, ARGS)


# ------------------------------------------------------------------------------------------ naming and env
@pytest.mark.parametrize("arch, cu, base", [
    ("gfx90a", 1, "gfx90a_1"), ("gfx90a", 64, "gfx90a_64"), ("gfx90a", 65, "gfx90a41"),
    ("gfx90a", 104, "gfx90a68"), ("gfx90a", 110, "gfx90a6e"), ("gfx908", 120, "gfx90878"),
    ("gfx942", 304, "gfx942130"), ("gfx90a:sramecc+:xnack-", 104, "gfx90a68"),
    ("gfx90a:sramecc+:xnack+", 110, "gfx90a_xnack6e"), ("gfx1030", 36, "gfx1030_36")])
def test_db_basename_follows_get_db_basename(arch, cu, base):
    assert kdb.db_basename(arch, cu) == base


def test_paths_from_env(tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    db = KernDb.for_device("gfx90a", 110, environ=env)
    assert db.user_path == home / ".cache" / "miopen" / kdb.KDB_VERSION / "gfx90a6e.ukdb"
    assert kdb.KDB_VERSION == "3.4.0.hdemu"
    env["MIOPEN_CUSTOM_CACHE_DIR"] = str(tmp_path / "custom")
    assert KernDb.for_device("gfx90a", 64, environ=env).user_path == \
        tmp_path / "custom" / kdb.KDB_VERSION / "gfx90a_64.ukdb"
    env["MIOPEN_CUSTOM_CACHE_DIR"] = "~/mine"
    assert KernDb.for_device("gfx90a", 64, environ=env).user_path.parent.parent == home / "mine"
    # MIOPEN_USER_DB_PATH is MIOpen's perf/find db dir: it does not move the kernel cache
    env["MIOPEN_USER_DB_PATH"] = str(tmp_path / "udb")
    assert KernDb.for_device("gfx90a", 64, environ=env).user_path.parent.parent == home / "mine"
    assert kdb.user_db_dir(env) == tmp_path / "udb"
    assert kdb.user_db_dir({"HOME": str(home)}) == home / ".config" / "miopen"
    assert kdb.expand_user("~/a", {"HOME": "/"}) == kdb.expand_user("~/a", {}) != home / "a"


def test_system_db_path_from_env(tmp_path):
    sysdir = tmp_path / "share"
    env = {"HOME": str(tmp_path), "MIOPEN_SYSTEM_DB_PATH": str(sysdir)}
    assert KernDb.for_device("gfx90a", 104, environ=env).system_path is None  # dir missing
    write_system_db(sysdir / "gfx90a.kdb", {(NAME, ARGS): SRC})
    assert KernDb.for_device("gfx90a", 104, environ=env).system_path == sysdir / "gfx90a.kdb"  # db id fallback
    write_system_db(sysdir / "gfx90a68.kdb", {(NAME, ARGS): RANDOM})
    db = KernDb.for_device("gfx90a", 104, environ=env)
    assert db.system_path == sysdir / "gfx90a68.kdb"
    assert db.load(NAME, ARGS) == (RANDOM, "system")


def test_for_device_reads_os_environ_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(tmp_path / "a"))
    first = KernDb.for_device("gfx90a", 8)
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(tmp_path / "b"))
    assert first.user_path.parents[1] == tmp_path / "a"
    assert KernDb.for_device("gfx90a", 8).user_path.parents[1] == tmp_path / "b"


@pytest.mark.parametrize("value", ["1", "yes", "ON", "true", "Enabled"])
def test_disable_cache_misses_and_stores_nothing(tmp_path, value):
    env = {"HOME": str(tmp_path), "MIOPEN_CUSTOM_CACHE_DIR": str(tmp_path / "c")}
    live = KernDb.for_device("gfx90a", 8, environ=env)
    live.store(NAME, ARGS, SRC)
    off = KernDb.for_device("gfx90a", 8, environ=dict(env, MIOPEN_DISABLE_CACHE=value))
    assert not off.enabled and off.user_path is None and off.system_path is None
    assert off.load(NAME, ARGS) is None
    off.store("other.o", ARGS, SRC)
    assert [r[0] for r in rows(live.user_path)] == [NAME]
    assert off.stats()["misses"] == 1 and off.stats()["stores"] == 0
    assert KernDb.for_device("gfx90a", 8, environ=dict(env, MIOPEN_DISABLE_CACHE="off")).enabled


def test_disable_cache_bad_value_is_invalid_value(tmp_path):
    expect(S.miopenStatusInvalidValue, "Invalid value for env variable (value='maybe')",
           KernDb.for_device, "gfx90a", 8, environ={"HOME": str(tmp_path), "MIOPEN_DISABLE_CACHE": "maybe"})


# ------------------------------------------------------------------------------------------ faults
@pytest.mark.parametrize("blob", [SRC, RANDOM], ids=["compressed", "raw"])
def test_md5_mismatch_is_possible_database_corruption(ukdb, blob):
    db = KernDb(ukdb)
    db.store(NAME, ARGS, blob)
    db.store("ok.o", ARGS, b"fine")
    with inject_fault("md5_mismatch", ukdb, kernel_name=NAME, kernel_args=ARGS):
        expect(S.miopenStatusInternalError, "Possible database corruption", db.load, NAME, ARGS)
        assert db.load("ok.o", ARGS) == (b"fine", "user")
    assert db.load(NAME, ARGS) == (blob, "user")
    assert db.stats()["errors"] == 1


def test_malformed_file_raises_on_load_and_store(ukdb):
    db = KernDb(ukdb)
    db.store(NAME, ARGS, SRC)
    with inject_fault("malformed_file", ukdb):
        e = expect(S.miopenStatusInternalError,
                   "Internal error while accessing SQLite database: file is not a database", db.load, NAME, ARGS)
        expect(S.miopenStatusInternalError, "file is not a database", db.store, "x.o", ARGS, b"x")
    assert "kern_db" not in str(e)
    assert db.load(NAME, ARGS) == (SRC, "user")


def test_readonly_dir_missing_file_cannot_be_opened(ukdb):
    ukdb.parent.mkdir(parents=True)
    db = KernDb(ukdb)
    with inject_fault("readonly_dir", ukdb):
        expect(S.miopenStatusInternalError, f"Cannot open database file:{ukdb}", db.load, NAME, ARGS)
        expect(S.miopenStatusInternalError, "Cannot open database file:", db.store, NAME, ARGS, SRC)
    assert not ukdb.exists()
    db.store(NAME, ARGS, SRC)  # mode restored
    assert db.load(NAME, ARGS) == (SRC, "user")


def test_readonly_dir_existing_file_fails_the_wal_pragma(ukdb):
    db = KernDb(ukdb)
    db.store(NAME, ARGS, SRC)
    mode = ukdb.parent.stat().st_mode
    with inject_fault("readonly_dir", ukdb):
        assert ukdb.parent.stat().st_mode & 0o222 == 0
        expect(S.miopenStatusInternalError, "attempt to write a readonly database", db.load, NAME, ARGS)
    assert ukdb.parent.stat().st_mode == mode


def test_readonly_parent_cache_dir_cannot_be_created(tmp_path):
    ukdb = tmp_path / "ro" / "3.4.0" / "gfx90a_8.ukdb"
    with inject_fault("readonly_dir", tmp_path / "ro" / "marker"):
        expect(S.miopenStatusUnknownError, "cannot create directories", KernDb(ukdb).store, NAME, ARGS, SRC)
    assert not ukdb.parent.exists()


def test_fault_arguments_are_checked(ukdb):
    with pytest.raises(ValueError, match="unknown db fault 'melted'"):
        inject_fault("melted", ukdb)
    with pytest.raises(ValueError, match="does not exist"):
        inject_fault("md5_mismatch", ukdb)
    KernDb(ukdb).store(NAME, ARGS, SRC)
    with pytest.raises(ValueError, match="no record to corrupt"):
        inject_fault("md5_mismatch", ukdb, kernel_name="nope.o", kernel_args=ARGS)
    assert set(kdb.FAULTS) == {"malformed_file", "md5_mismatch", "locked", "readonly_dir"}


def test_locked_fault_on_a_new_file_creates_a_kern_db_first(ukdb):
    with inject_fault("locked", ukdb) as fault:
        assert fault.active
        db = KernDb(ukdb, busy_limit_s=0.05)
        assert db.load(NAME, ARGS) is None  # readers pass the writer's lock
        expect(S.miopenStatusUnknownError, "Timeout while waiting for Database", db.store, NAME, ARGS, SRC)
    assert not fault.active
    KernDb(ukdb).store(NAME, ARGS, SRC)
    assert [r[0] for r in rows(ukdb)] == [NAME]


def test_busy_limit_from_env_for_the_scenario_runner(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert KernDb.for_device("gfx90a", 8, environ=env).busy_limit_s == 30.0
    assert KernDb.for_device("gfx90a", 8, environ=dict(env, HDEMU_MIOPEN_DB_BUSY_LIMIT_S="0.5")).busy_limit_s == 0.5
    assert KernDb.for_device("gfx90a", 8, busy_limit_s=2, environ=env).busy_limit_s == 2.0
    expect(S.miopenStatusInvalidValue, "HDEMU_MIOPEN_DB_BUSY_LIMIT_S must be a number", KernDb.for_device,
           "gfx90a", 8, environ=dict(env, HDEMU_MIOPEN_DB_BUSY_LIMIT_S="soon"))
