"""The platform's own files: a corrupt or foreign boot block is a clear error at attach (never a
silent cross-wiring or a hang), and a supervisor or role whose pid was reused by a later process is
dead (the start time recorded next to the pid differs).

The platforms here are segments only (``fake_platform``: every segment created and initialised as
``Platform.start`` does, no role started), owned by this test process, so its pid is the supervisor's.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager

import posix_ipc
import pytest

from hostside.platform import Platform, cli
from shm_layout import layouts as L
from shm_layout.errors import HdemuError, LayoutError, PlatformError, SegmentError
from shm_layout.segments import Segment, list_segments, sweep
from shm_layout.topology import PlatformMap

CFG = {"agents": 1, "engines": 1, "memory_mib": 8, "host_pool_mib": 4, "max_allocs": 64, "signals": 256}


def start_of(pid: int) -> int:
    """Field 22 of /proc/<pid>/stat (its start time), read here independently of the code under test."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return int(stat[stat.rindex(b")") + 2:].split()[19])


@contextmanager
def fake_platform(**cfg):
    """A platform's segments, created and initialised as ``Platform.start`` does, without roles."""
    plat = Platform(dict(CFG, **cfg))
    try:
        for key, size in plat.topo.segment_sizes().items():
            plat.segments[key] = Segment.create(plat.topo.names[key], size)
        plat._init_boot()
        plat._init_agents()
        yield plat
    finally:
        plat.stop()


def header(plat):
    return plat.segments["boot"].view(L.boot_header, 0, 1)


def text_of(plat) -> bytes:
    n = int(header(plat)["json_len"][0])
    return bytes(plat.segments["boot"].u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + n])


def set_text(plat, raw: bytes, length: int | None = None) -> None:
    plat.segments["boot"].u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + len(raw)] = memoryview(raw)
    header(plat)["json_len"] = len(raw) if length is None else length


def edit_topology(plat, fn) -> None:
    """Rewrite the topology (the text's first line) through ``fn(dict)``, keeping what follows."""
    first, sep, rest = text_of(plat).partition(b"\n")
    d = json.loads(first)
    fn(d)
    set_text(plat, json.dumps(d).encode() + sep + rest)


def refused(plat, exc=HdemuError, **kw) -> str:
    with pytest.raises(exc) as ei:
        pm = PlatformMap.attach(plat.name, **kw)
        pm.close()
    return str(ei.value)


def test_a_good_boot_block_attaches_and_its_supervisor_is_alive():
    with fake_platform() as plat:
        pm = PlatformMap.attach(plat.name)
        try:
            assert pm.topo.supervisor == {"pid": os.getpid(), "start": start_of(os.getpid())}
            assert pm.supervisor_alive()
            assert sorted(pm.segs) == sorted(plat.topo.names)
        finally:
            pm.close()


@pytest.mark.parametrize("length", [0, L.BOOT_BYTES - L.BOOT_JSON_OFF + 1, 0xFFFFFFFF])
def test_a_bad_text_length(length):
    with fake_platform() as plat:
        header(plat)["json_len"] = length
        msg = refused(plat, LayoutError)
        assert plat.name in msg and f"text length is {length}" in msg


def test_text_that_is_not_json():
    with fake_platform() as plat:
        set_text(plat, b'{"config": {"agents": 1}, "names": ')
        msg = refused(plat, LayoutError)
        assert plat.name in msg and "not JSON" in msg


def test_text_that_is_not_utf8():
    with fake_platform() as plat:
        set_text(plat, b"\xff\xfe{}")
        assert "not UTF-8" in refused(plat, LayoutError)


@pytest.mark.parametrize("doc", [b"[1, 2]", b'"hello"', b'{"config": {}}'])
def test_json_of_the_wrong_shape(doc):
    with fake_platform() as plat:
        set_text(plat, doc)
        assert "must be an object with config, names and supervisor" in refused(plat, LayoutError)


def test_missing_segment_names():
    with fake_platform() as plat:
        edit_topology(plat, lambda d: d["names"].pop("mem0"))
        msg = refused(plat, LayoutError)
        assert "missing ['mem0']" in msg, msg


def test_names_of_another_platforms_segments_are_refused_not_cross_wired():
    with fake_platform() as plat, fake_platform() as other:
        theirs = other.topo.names["mem0"]
        edit_topology(plat, lambda d: d["names"].__setitem__("mem0", theirs))
        msg = refused(plat, LayoutError)
        assert "another run" in msg and theirs in msg, msg


def test_sizes_that_disagree_with_the_segments():
    with fake_platform() as plat:
        edit_topology(plat, lambda d: d["config"].__setitem__("memory_mib", 16))
        msg = refused(plat, LayoutError)
        assert plat.topo.names["mem0"] in msg and f"is {8 << 20} bytes" in msg and str(16 << 20) in msg, msg


def test_an_invalid_config_names_the_key():
    with fake_platform() as plat:
        edit_topology(plat, lambda d: d["config"].__setitem__("agents", 0))
        assert "platform.agents" in refused(plat, LayoutError)


def test_a_header_that_disagrees_with_the_topology_about_the_supervisor():
    with fake_platform() as plat:
        header(plat)["supervisor_pid"] = 1
        assert "supervisor is pid 1" in refused(plat, LayoutError)


def test_a_segment_of_another_user_under_a_right_name(tmp_path):
    with fake_platform() as plat:
        os.chown(os.path.join("/dev/shm", plat.topo.names["mem0"]), 12345, -1)   # root here: we may
        msg = refused(plat, LayoutError)
        assert "uid 12345" in msg and plat.topo.names["mem0"] in msg, msg


def test_a_boot_block_too_small_to_be_one():
    with fake_platform() as plat:
        name = plat.topo.names["boot"].replace("-boot", "-tiny-boot").replace(plat.token, plat.token + "0")
        seg = Segment.create(name, 16)
        try:
            with pytest.raises(SegmentError, match="not an hdemu boot block"):
                PlatformMap.attach(name)
        finally:
            seg.unlink()
            seg.close()


def test_an_empty_segment_is_a_clear_error():
    """What a creator that died between creating a segment and sizing it leaves behind."""
    name = f"hdemu-{os.getpid()}-e0e0-boot"
    shm = posix_ipc.SharedMemory("/" + name, posix_ipc.O_CREX, mode=0o600, size=0)
    shm.close_fd()
    try:
        with pytest.raises(SegmentError, match="is empty"):
            PlatformMap.attach(name)
    finally:
        posix_ipc.unlink_shared_memory("/" + name)


# -- liveness: a reused pid does not make a dead owner look alive --------------------------------------
def reused_supervisor(d):
    """What a boot block looks like to a process whose pid is the dead supervisor's, reused."""
    d["supervisor"] = {"pid": os.getpid(), "start": start_of(os.getpid()) + 1}


def test_a_supervisor_whose_pid_was_reused_is_dead_at_attach():
    with fake_platform() as plat:
        edit_topology(plat, reused_supervisor)
        msg = refused(plat, PlatformError)
        assert "is dead" in msg and "another process" in msg, msg
        msg = refused(plat, PlatformError, wait_up_s=600.0)      # booting: raised at once, not after the wait
        assert "is dead" in msg
        pm = PlatformMap.attach(plat.name, require_live=False)  # post mortem, on purpose
        assert not pm.supervisor_alive()
        pm.close()


def test_the_cli_lists_no_platform_whose_supervisor_pid_was_reused():
    with fake_platform() as plat:
        assert plat.name in [p["name"] for p in cli.live_platforms()]
        edit_topology(plat, reused_supervisor)
        assert plat.name not in [p["name"] for p in cli.live_platforms()]


@pytest.mark.xdist_group("sweep")   # sweeps every dead segment: one worker, one at a time
def test_hdemu_clean_removes_a_run_whose_supervisor_pid_was_reused(capsys):
    with fake_platform() as plat:
        assert plat.name not in sweep()              # alive: kept
        edit_topology(plat, reused_supervisor)
        assert cli.main(["clean"]) == 0
        assert f"removed /dev/shm/{plat.name}" in capsys.readouterr().out
        assert not [n for n in plat.topo.names.values() if n in [s for s, _p, _t in list_segments()]]


def test_a_role_whose_pid_was_reused_is_dead():
    with fake_platform() as plat:
        boot = plat.segments["boot"]
        boot.view(L.role_entry, L.BOOT_ROLES_OFF, L.BOOT_MAX_ROLES)[0]["pid"] = os.getpid()
        pm = PlatformMap.attach(plat.name)
        try:
            assert pm.role_records() == {}
            assert pm.role_alive(0)                      # nothing recorded: the pid alone decides
            line = json.dumps({"role": 0, "pid": os.getpid(), "start": start_of(os.getpid()) + 1}) + "\n"
            set_text(plat, text_of(plat) + line.encode())
            assert pm.role_records() == {0: (os.getpid(), start_of(os.getpid()) + 1)}
            assert not pm.role_alive(0)
            line = json.dumps({"role": 0, "pid": os.getpid(), "start": start_of(os.getpid())}) + "\n"
            set_text(plat, text_of(plat) + line.encode())   # a later line for the role wins
            assert pm.role_alive(0)
            set_text(plat, text_of(plat) + b"{garbage\n")
            with pytest.raises(LayoutError, match="role line"):
                pm.role_records()
        finally:
            pm.close()


def test_a_started_platform_records_every_role_with_its_start_time():
    with Platform(dict(CFG), quiet_roles=True) as plat:
        pm = PlatformMap.attach(plat.name)
        try:
            pid = plat.procs[0].pid
            assert pm.role_records() == {0: (pid, start_of(pid))}
            assert pm.role_alive(0)
        finally:
            pm.close()
