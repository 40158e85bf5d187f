"""Found by using the ``hdemu`` command line as a user would: a Ctrl-C of ``hdemu up`` while its platform
starts, a platform start cut short before the DFX lanes, a fault lasting longer than its deadline word
holds, ``hdemu status`` after a SIGKILL of the collector, an output path that cannot be written,
``hdemu demo`` under an exported ``HDEMU_PLATFORM``, a sweep axis below 1. Each leaves no process, no
segment and no traceback behind, and says what happened."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import types

import pytest

from hostside.faults._schema import load_scenario
from hostside.platform import Platform, cli, format_status, status
from hostside.platform import _supervisor
from hostside.studies._sweep_spec import SpecError, parse_inline
from shm_layout import topology
from shm_layout.errors import ConfigError, PlatformError
from shm_layout.segments import list_segments, unlink_name
from tests.paths import ROOT


def _segments_of(pid: int) -> list[str]:
    return [n for n, p, _t in list_segments() if p == pid]


def _remove_segments_of(pid: int) -> None:
    for n in _segments_of(pid):
        unlink_name(n)


def test_serve_whose_starter_went_away_stops_its_platform():
    """``hdemu up`` interrupted while its platform starts closes the ready pipe: the platform comes up,
    cannot announce its name, and must stop (no traceback, no segment left), not crash leaving its
    segments behind."""
    r, w = os.pipe()
    env = dict(os.environ)
    env.pop("HDEMU_PLATFORM", None)
    p = subprocess.Popen([sys.executable, "-m", "hostside.platform", "serve", "--ready-fd", str(w)],
                         pass_fds=(w,), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, start_new_session=True)
    os.close(w)
    os.close(r)                              # the reader is gone before the platform is up
    try:
        _out, err = p.communicate(timeout=90)
        left = _segments_of(p.pid)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
        _remove_segments_of(p.pid)
    assert "Traceback" not in err, err
    assert p.returncode == 1, (p.returncode, err)
    assert "went away" in err, err
    assert left == [], left


def test_up_interrupted_while_the_platform_starts_leaves_no_process(monkeypatch, capsys):
    """A Ctrl-C of ``hdemu up`` before the ready line: exit 130 with one line, and the detached serve
    process it started is gone too (with its segments)."""
    monkeypatch.delenv("HDEMU_PLATFORM", raising=False)
    started = []
    real_popen = cli.subprocess.Popen

    def popen(*a, **kw):
        started.append(real_popen(*a, **kw))
        return started[-1]

    class Interrupted:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def readline(self):
            raise KeyboardInterrupt

    real_fdopen = os.fdopen
    monkeypatch.setattr(cli.subprocess, "Popen", popen)
    monkeypatch.setattr(cli.os, "fdopen", lambda fd, *a, **kw: Interrupted(real_fdopen(fd, *a, **kw)))
    try:
        rc = cli.main(["up"])
        monkeypatch.undo()
        assert rc == 130
        assert "hdemu up: interrupted" in capsys.readouterr().err
        assert len(started) == 1
        assert started[0].poll() is not None, "the serve process still runs after `hdemu up` returned"
    finally:
        monkeypatch.undo()
        for p in started:
            if p.poll() is None:
                p.kill()
            p.wait(30)
            _remove_segments_of(p.pid)
    assert _segments_of(started[0].pid) == []


def test_a_start_cut_short_before_the_lanes_stops_without_the_collector_flush_wait(tmp_path, monkeypatch):
    """The collector waits for every lane to finish (``FLUSH_TIMEOUT_S``, 60 s, its own bound). A start
    interrupted after the collector runs but before a lane is spawned must not leave it waiting for
    lanes that never existed: it finishes by itself and is not killed by the supervisor's bound."""
    cfg = _supervisor.load_config(None)
    cfg.update(agents=1, memory_mib=4, host_pool_mib=4)
    cfg["profiling"].update(enabled=True, lanes=2, output_dir=str(tmp_path / "dfx"))
    monkeypatch.setattr(_supervisor, "FLUSH_TIMEOUT_S", 20.0)   # a third of the collector's own bound
    real_spawn = Platform._spawn

    def spawn(self, index, argv):
        if argv[0] == "deviceside.aicpu":
            raise KeyboardInterrupt("Ctrl-C before the lanes")
        return real_spawn(self, index, argv)

    monkeypatch.setattr(Platform, "_spawn", spawn)
    plat = Platform(cfg, embedded=False)
    with pytest.raises(KeyboardInterrupt):
        plat.start()
    col = plat.procs[plat.dfx_roles["collector"][0]]
    assert col.returncode == 0, f"collector exit code {col.returncode} (killed after the supervisor's bound)"
    assert plat.salvaged == 0


def test_a_fault_longer_than_its_deadline_word_is_a_scenario_error(tmp_path):
    """``duration_s`` of a stall becomes a nanosecond deadline in a 64-bit word: 1e12 s used to raise
    OverflowError (a traceback) in the middle of the run; now the scenario is refused, naming the key."""
    src = (ROOT / "hostside/faults/scenarios/stall-engine.toml").read_text()
    assert "\nduration_s = 0.5\n" in src
    path = tmp_path / "long-stall.toml"
    path.write_text(src.replace("\nduration_s = 0.5\n", "\nduration_s = 1e12\n"))
    with pytest.raises(ConfigError, match=r"fault\[0\]\.duration_s"):
        load_scenario(str(path))
    r = subprocess.run([sys.executable, "-m", "hostside.faults", "run", str(path), "--out", str(tmp_path / "run")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr and "fault[0].duration_s" in r.stderr, r.stderr


def test_status_says_a_killed_collector_is_dead(tmp_path):
    """``hdemu status`` after a SIGKILL of the DFX collector: its role line said "dead (not running)"
    while the profiling line still said "collector pid ... running" (the state word it left)."""
    cfg = _supervisor.load_config(None)
    cfg.update(agents=1, memory_mib=4, host_pool_mib=4)
    cfg["profiling"].update(enabled=True, lanes=1, output_dir=str(tmp_path / "dfx"))
    with Platform(cfg, embedded=False) as plat:
        col = plat.procs[plat.dfx_roles["collector"][0]]
        assert status(plat.name)["profiling"]["collector_state"] == "running"
        col.send_signal(signal.SIGKILL)
        col.wait(30)
        st = status(plat.name)
        assert st["profiling"]["collector_state"] == "dead", st["profiling"]
        assert f"collector pid {col.pid} dead" in format_status(st)


def _hdemu(*args, timeout=60):
    env = dict(os.environ)
    env.pop("HDEMU_PLATFORM", None)
    return subprocess.run([sys.executable, "-m", "hostside.platform.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def _one_line_error(r, *needles):
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), r.stderr


def test_an_output_path_that_cannot_be_written_is_one_line(tmp_path):
    """``hdemu up --log`` and ``hdemu trace OUT`` with a missing directory or a directory as the file
    were a FileNotFoundError / IsADirectoryError traceback."""
    missing = str(tmp_path / "no-such-dir" / "x")
    _one_line_error(_hdemu("up", "--log", missing), "hdemu up", missing, "No such file or directory")
    _one_line_error(_hdemu("up", "--log", str(tmp_path)), "hdemu up", "Is a directory")
    with Platform({"agents": 1, "memory_mib": 4, "host_pool_mib": 4}) as plat:
        _one_line_error(_hdemu("trace", missing, "--name", plat.name), "hdemu trace", missing)
        _one_line_error(_hdemu("trace", str(tmp_path), "--name", plat.name), "hdemu trace", "Is a directory")
        ok = _hdemu("trace", str(tmp_path / "t.json"), "--name", plat.name)
        assert ok.returncode == 0 and (tmp_path / "t.json").stat().st_size > 0, ok


def _demo(env_extra: dict, timeout=180):
    env = dict(os.environ)
    env.pop("HDEMU_PLATFORM", None)
    env.pop("HDEMU_CONFIG", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "hostside.platform.cli", "demo"], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_demo_runs_on_its_own_platform_whatever_hdemu_platform_says():
    """``hdemu demo`` with ``HDEMU_PLATFORM`` exported (as ``hdemu up`` tells you to): it attached to
    that platform, said "embedded platform up" and "platform torn down" of a platform it neither
    started nor stopped, then its profiling run (which needs a platform of its own) died with a
    FileNotFoundError traceback."""
    with Platform({"agents": 1, "memory_mib": 4, "host_pool_mib": 4}, embedded=False) as plat:
        r = _demo({"HDEMU_PLATFORM": plat.name})
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
        assert "Traceback" not in r.stderr, r.stderr
        assert f"platform {plat.name}" not in r.stdout
        assert "profiling run: 100 dispatches" in r.stdout, r.stdout[-2000:]


def test_demo_with_a_bad_hdemu_config_is_one_line(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[platform]\nagents = 0\n")
    r = _demo({"HDEMU_CONFIG": str(cfg)})
    _one_line_error(r, "hdemu demo", "platform.agents")


@pytest.mark.parametrize("inline", ["launches=-5", "launches=0", "agents=0,1"])
def test_a_sweep_axis_below_one_is_refused(inline):
    """``hdemu study dispatch --sweep launches=-5`` was accepted: the point never finished and was
    killed at its 300 s timeout (then the sweep exited 0 with the point failed). Every numeric axis
    counts something, so a value below 1 is a spec error, one line, exit 2."""
    axis, _, value = inline.partition("=")
    with pytest.raises(SpecError, match=f"axis '{axis}' of dispatch takes values of at least 1"):
        parse_inline(inline, "dispatch")
    r = subprocess.run([sys.executable, "-m", "hostside.studies", "dispatch", "--sweep", inline, "--out", os.devnull],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "at least 1" in r.stderr, r


def test_a_dead_supervisor_is_said_in_plain_words():
    """``hdemu status`` of a platform whose supervisor was SIGKILLed said "its supervisor (pid N) it is
    gone"."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(60)                                      # a pid that ran and is gone
    topo = types.SimpleNamespace(supervisor={"pid": p.pid, "start": 1})
    with pytest.raises(PlatformError) as err:
        topology._check_supervisor(topo, "hdemu-1-aa-boot")
    assert f"its supervisor (pid {p.pid}) is gone;" in str(err.value), err.value


@pytest.mark.parametrize("where", ["file/dfx", "file"])
def test_a_dfx_output_dir_that_cannot_be_written_is_said_at_start(tmp_path, where):
    """``[platform.profiling] output_dir`` that cannot be created (a file on the way, or the path a
    file): the platform failed with only "the DFX collector did not start (exit code 1)", after a
    FileNotFoundError / FileExistsError traceback of the collector's."""
    (tmp_path / "file").write_text("")
    cfg = _supervisor.load_config(None)
    cfg.update(agents=1, memory_mib=4, host_pool_mib=4)
    cfg["profiling"].update(enabled=True, lanes=1, output_dir=str(tmp_path / where))
    plat = Platform(cfg, embedded=False)
    with pytest.raises(PlatformError, match=r"platform\.profiling\.output_dir: cannot write the DFX outputs to ") as err:
        plat.start()
    assert "not a directory" in str(err.value).lower(), err.value
    assert plat.procs == {}                          # refused before any role or segment
