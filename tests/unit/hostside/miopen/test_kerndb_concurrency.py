"""The binary cache under contention: MIOpen's busy back-off against a write lock held by another
connection or process (then "Timeout while waiting for Database", or success once the lock goes), WAL
readers not blocked by a writer, and two processes filling one .ukdb at the same time."""
import json
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from hostside.miopen._errors import MiopenError, miopenStatus_t
from hostside.miopen._kerndb import KernDb, inject_fault

pytestmark = pytest.mark.timeout(60)

NAME = "MIOpenPoolingND.cl.o"
ARGS = "-DMLO_POOLING_OP_ID=0 -mcpu=gfx942"

HOLDER = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
c.execute("ROLLBACK")
c.close()
"""

WRITER = """
import json, sys
from hostside.miopen._kerndb import KernDb
path, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = KernDb(path, busy_limit_s=20)
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    db.store(f"own{i}.cl.o", f"-DW={wid} -mcpu=gfx942", (f"w{wid} i{i} " * (1 + i % 50)).encode())
    db.store(f"shared{i % 20}.cl.o", "-mcpu=gfx942", (f"shared {i % 20} " * 40).encode())
    if i % 10 == 0:
        assert db.load(f"own{i}.cl.o", f"-DW={wid} -mcpu=gfx942") is not None
print(json.dumps(db.stats()), flush=True)
"""


def start(script, *args):
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def reap(p):
    if p.poll() is None:
        p.kill()
    p.communicate(timeout=10)


def wait_for(cond, what, limit=15.0):
    deadline = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


@pytest.fixture
def ukdb(tmp_path):
    p = tmp_path / "gfx942130.ukdb"
    KernDb(p).store(NAME, ARGS, b"seed" * 100)
    return p


def test_locked_store_backs_off_then_times_out(ukdb):
    db = KernDb(ukdb, busy_limit_s=0.3)
    with inject_fault("locked", ukdb):
        assert db.load(NAME, ARGS) == (b"seed" * 100, "user")  # WAL readers are not blocked
        with pytest.raises(MiopenError) as ei:
            db.store("new.cl.o", ARGS, b"x" * 64)
    assert ei.value.status == miopenStatus_t.miopenStatusUnknownError
    assert str(ei.value).endswith(f"Timeout while waiting for Database: {ukdb}")
    st = db.stats()
    assert st["timeouts"] == 1 and st["errors"] == 1 and st["stores"] == 0
    assert st["busy_waits"] > 10  # the yielding tries, then the sleeping ones
    assert st["busy_wait_s"] > 0.3  # gave up only after the limit
    db.store("new.cl.o", ARGS, b"x" * 64)  # lock released
    assert db.load("new.cl.o", ARGS) == (b"x" * 64, "user")


def test_lock_from_another_process_is_waited_out(ukdb):
    holder = start(HOLDER, ukdb)
    try:
        assert holder.stdout.readline().strip() == "locked"
        db = KernDb(ukdb, busy_limit_s=30)
        failure = []

        def store():
            try:
                db.store("late.cl.o", ARGS, b"late" * 50)
            except BaseException as e:  # noqa: BLE001 - reported below
                failure.append(e)
        t = threading.Thread(target=store)
        t.start()
        wait_for(lambda: db.stats()["busy_waits"] > 10, "the store to hit the lock")
        assert t.is_alive() and db.stats()["stores"] == 0
        holder.stdin.write("\n")
        holder.stdin.flush()
        t.join(timeout=30)
        assert not t.is_alive() and not failure, failure
        assert holder.wait(timeout=10) == 0
    finally:
        reap(holder)
    assert db.load("late.cl.o", ARGS) == (b"late" * 50, "user")
    assert db.stats()["timeouts"] == 0


def test_two_processes_fill_one_ukdb(tmp_path):
    path = tmp_path / "shared" / "gfx942130.ukdb"  # neither process finds it: both create it
    n = 150
    procs = [start(WRITER, path, wid, n) for wid in (1, 2)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=45) for p in procs]
    finally:
        for p in procs:
            reap(p)
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    stats = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert [s["stores"] for s in stats] == [2 * n, 2 * n]
    assert all(s["errors"] == 0 and s["timeouts"] == 0 for s in stats)
    assert all(isinstance(s["busy_waits"], int) for s in stats)  # counted; how many is up to scheduling
    c = sqlite3.connect(path)
    try:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT count(*) FROM kern_db").fetchone()[0] == 2 * n + 20
    finally:
        c.close()
    db = KernDb(path)
    for wid in (1, 2):
        for i in range(n):
            assert db.load(f"own{i}.cl.o", f"-DW={wid} -mcpu=gfx942") == \
                ((f"w{wid} i{i} " * (1 + i % 50)).encode(), "user")
    for k in range(20):
        assert db.load(f"shared{k}.cl.o", "-mcpu=gfx942") == ((f"shared {k} " * 40).encode(), "user")
