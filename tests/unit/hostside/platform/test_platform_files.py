"""The platform's own files at start and across users: a /dev/shm too small is a clear error at start
naming the segment, its size and the free space (every segment, device memory included, is
pre-allocated), and a platform or dead segments of another user give one-line errors, never a
``PermissionsError`` traceback.

Another user is played two ways: this process is root, so it may chown a segment to another uid; and
a child that drops to ``nobody`` (after importing everything it needs, as the interpreter lives under
/root) meets root's segments as a real other user.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from contextlib import contextmanager

import pytest

from hostside.platform import Platform, cli, serve
from shm_layout import segments
from shm_layout.errors import SegmentError
from shm_layout.segments import Segment, list_segments, segment_name, sweep
from tests.paths import ROOT

CFG = {"agents": 1, "engines": 1, "memory_mib": 8, "host_pool_mib": 4, "max_allocs": 64, "signals": 256}
NOBODY = 65534

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="plays another user by chown and setuid: needs root")


# -- a /dev/shm too small ----------------------------------------------------------------------------------
def fallocate_failing(monkeypatch, fails):
    """os.posix_fallocate records (segment name, length) and raises ENOSPC where ``fails(name)``."""
    real = os.posix_fallocate
    calls = []

    def fake(fd, offset, length):
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        calls.append((name, offset, length))
        if fails(name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", fake)
    return calls


def test_a_full_dev_shm_is_a_clear_error_at_start_naming_the_segment(monkeypatch):
    plat = Platform(dict(CFG))
    mem0 = plat.topo.names["mem0"]
    fallocate_failing(monkeypatch, lambda name: name == mem0)
    with pytest.raises(SegmentError) as ei:
        plat.start()
    msg = str(ei.value)
    assert mem0 in msg and f"{8 << 20} bytes" in msg and "bytes free" in msg, msg
    assert "No space left on device" in msg, msg
    assert not plat.procs, "no role may start on a platform whose segments could not be allocated"
    assert not [n for n, _p, _t in list_segments() if n.startswith(mem0.rsplit("-", 1)[0])]


def test_every_segment_device_memory_included_is_preallocated_in_full(monkeypatch, tmp_path):
    out = tmp_path / "dfx-out"
    cfg = dict(CFG, profiling={"enabled": True, "lanes": 1, "output_dir": str(out)})
    plat = Platform(cfg)
    sizes = {plat.topo.names[k]: s for k, s in plat.topo.segment_sizes().items()}
    last = list(sizes)[-1]
    calls = fallocate_failing(monkeypatch, lambda name: name == last)   # stop before any role starts
    with pytest.raises(SegmentError, match=last):
        plat.start()
    assert {name: length for name, offset, length in calls if offset == 0} == sizes
    # the DFX output directory the failed start made is gone again (it was left behind, empty: the
    # default one, ./hdemu-dfx-<platform>, in the current directory)
    assert not out.exists()


def test_hdemu_up_reports_a_full_dev_shm_on_its_ready_line(monkeypatch, tmp_path):
    """``serve`` (what ``hdemu up`` runs) announces the allocation error for ``hdemu up`` to print."""
    cfg = tmp_path / "p.toml"
    cfg.write_text("[platform]\nagents = 1\nengines = 1\nmemory_mib = 8\nhost_pool_mib = 4\n")
    fallocate_failing(monkeypatch, lambda name: name.endswith("-mem0"))
    import signal
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    r, w = os.pipe()
    try:
        assert serve(str(cfg), w) == 1
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    with os.fdopen(r) as f:
        info = json.loads(f.readline())
    assert "-mem0" in info["error"] and f"{8 << 20} bytes" in info["error"] and "bytes free" in info["error"]


# -- other users ---------------------------------------------------------------------------------------------
AS_NOBODY = f"""
import json, os, pwd, sys
import hostside.platform.cli as cli
from shm_layout.errors import HdemuError
from shm_layout.segments import Segment
os.setgroups([])
os.setgid({NOBODY})
os.setuid({NOBODY})
if sys.argv[1] == "attach":
    try:
        Segment.attach(sys.argv[2])
    except HdemuError as exc:
        print(type(exc).__name__, exc)
    sys.exit(0)
sys.exit(cli.main(sys.argv[1:]))
"""


def as_nobody(*args, timeout=60):
    env = dict(os.environ)
    env.pop("HDEMU_PLATFORM", None)
    return subprocess.run([sys.executable, "-c", AS_NOBODY, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def one_line_error(r, *needles):
    assert r.returncode != 0, r
    assert "Traceback" not in r.stderr and "PermissionsError" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(30)
    return p.pid


@contextmanager
def fake_platform():
    """A platform's segments (root's, mode 0600), initialised as ``Platform.start`` does, no roles."""
    plat = Platform(dict(CFG))
    try:
        for key, size in plat.topo.segment_sizes().items():
            plat.segments[key] = Segment.create(plat.topo.names[key], size)
        plat._init_boot()
        plat._init_agents()
        yield plat
    finally:
        plat.stop()


@contextmanager
def dead_run_segment(uid: int | None = None):
    """One segment of a run whose creator is dead, owned by ``uid`` (root's when None)."""
    name = segment_name(dead_pid(), "feed", "orphan")
    seg = Segment.create(name, 4096)
    seg.close()
    if uid is not None:
        os.chown(os.path.join(segments.SHM_DIR, name), uid, -1)
    try:
        yield name
    finally:
        segments.unlink_name(name)


def test_attaching_a_segment_of_another_user_is_one_clear_error():
    with fake_platform() as plat:
        r = as_nobody("attach", plat.name)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r
        assert r.stdout.startswith("SegmentError ") and "belongs to another user (root, uid 0)" in r.stdout, r


@pytest.mark.parametrize("cmd", ["status", "down", "trace"])
def test_a_platform_of_another_user_is_one_line(cmd, tmp_path):
    with fake_platform() as plat:
        args = [cmd, plat.name] if cmd != "trace" else [cmd, str(tmp_path / "t.json"), "--name", plat.name]
        one_line_error(as_nobody(*args), plat.name, "another user", "uid 0")


def test_ls_all_lists_another_users_platform_without_reading_it():
    with fake_platform() as plat:
        r = as_nobody("ls", "--all", "--json")
        assert r.returncode == 0 and not r.stderr, r
        mine = [p for p in json.loads(r.stdout) if p["name"] == plat.name]
        assert mine == [{"name": plat.name, "supervisor_pid": os.getpid(), "uid": 0, "mode": "?",
                         "age_s": None, "state": "?"}]
        r = as_nobody("ls", "--json")
        assert plat.name not in r.stdout


def test_clean_beside_another_users_dead_segments_leaves_them_and_says_nothing_wrong():
    # another user's (not root's: a root sweep of a parallel test worker would rightly remove a dead
    # segment of root's), seen by nobody
    with dead_run_segment(uid=12345) as name:
        r = as_nobody("clean")
        assert r.returncode == 0 and not r.stderr, r
        assert "0 segment(s)" in r.stdout and name not in r.stdout
        assert name in [n for n, _p, _t in list_segments()]


@pytest.mark.xdist_group("sweep")   # sweeps every dead segment: one worker, one at a time
def test_clean_as_root_leaves_a_dead_segment_chowned_to_another_uid(capsys):
    with dead_run_segment(uid=12345) as name, dead_run_segment() as mine:
        assert cli.main(["clean"]) == 0
        out = capsys.readouterr().out
        left = [n for n, _p, _t in list_segments()]
        # ours is gone (removed by this clean, or by a parallel worker's sweep just before it)
        assert mine not in left and name not in out
        assert name in left
        assert name not in sweep()


def test_status_of_a_platform_chowned_to_another_uid_is_one_line():
    with fake_platform() as plat:
        os.chown(os.path.join(segments.SHM_DIR, plat.name), 12345, -1)
        env = dict(os.environ)
        env.pop("HDEMU_PLATFORM", None)
        r = subprocess.run([sys.executable, "-m", "hostside.platform.cli", "status", plat.name],
                           capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
        one_line_error(r, plat.name, "another user", "uid 12345")


CLIENT_AS_NOBODY = f"""
import os, pwd
from hostside import hip
os.setgroups([])
os.setgid({NOBODY})
os.setuid({NOBODY})
try:
    hip.hipGetDeviceCount()
except Exception as exc:
    print("ERROR", exc)
"""


def test_a_client_of_another_users_platform_gets_a_clear_error():
    with fake_platform() as plat:
        env = dict(os.environ, HDEMU_PLATFORM=plat.name)
        r = subprocess.run([sys.executable, "-c", CLIENT_AS_NOBODY], capture_output=True, text=True,
                           timeout=60, cwd=ROOT, env=env)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r
        assert r.stdout.startswith("ERROR ") and plat.name in r.stdout and "another user" in r.stdout, r
