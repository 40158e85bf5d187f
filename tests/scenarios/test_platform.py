"""The platform across processes: a terminal's Ctrl-C in a profiled program, and SIGINT to a
standalone platform, each end as a normal stop does (outputs written, pools balanced, nothing left)."""
import json
import os
import signal

import pytest

from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from tests.scenarios.runner import to_toml, wait_until

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

#: a launcher that makes the program the leader of a session (and process group) of its own before
#: it runs, as a shell does for a foreground job: the test then sends SIGINT to that whole group, as a
#: terminal's Ctrl-C does, without hitting its own group
NEW_SESSION = ["-c", "import os, runpy, sys; os.setsid(); sys.argv = sys.argv[1:]; "
                     "runpy.run_path(sys.argv[0], run_name='__main__')"]
DFX_OUTPUTS = ("swimlane.csv", "stalls.json", "summary.json", "accounting.json")


def assert_balanced(out_dir):
    with open(os.path.join(out_dir, "accounting.json")) as f:
        acc = json.load(f)
    assert sum(p["total"] for p in acc["pools"]) > 0, acc
    for p in acc["pools"]:
        assert p["collected"] + p["dropped"] == p["total"], p
    return acc


def test_ctrl_c_in_a_profiled_program_is_a_normal_stop(scenario, tmp_path):
    out = tmp_path / "out"
    h = scenario.start("platform/ctrl_c_profiling", launcher=NEW_SESSION,
                       platform={"profiling": {"output_dir": str(out)}})
    h.expect("READY", timeout=120)
    assert os.getpgid(h.pid) == h.pid != os.getpgrp()
    os.killpg(h.pid, signal.SIGINT)                       # the terminal's Ctrl-C: the whole group
    r = h.wait(120)
    assert r.returncode == -signal.SIGINT and not r.timed_out, r
    # one message: the user's own KeyboardInterrupt, no traceback or error line from any role
    err = r.stderr.strip()
    assert err.count("Traceback (most recent call last)") == 1 and err.startswith("Traceback"), r
    assert err.splitlines()[-1] == "KeyboardInterrupt", r
    assert "During handling" not in err and "hdemu." not in err, r
    for f in DFX_OUTPUTS:
        assert (out / f).is_file(), (f, sorted(os.listdir(out)))
    acc = assert_balanced(out)
    assert all(lane["state"] == "exited" for lane in acc["lanes"]), acc["lanes"]
    assert not any(pid_alive(lane["pid"]) for lane in acc["lanes"])
    assert not [n for n, p, _t in list_segments() if p == h.pid]


def test_sigint_to_a_standalone_platform_is_a_normal_stop(scenario, tmp_path):
    out = tmp_path / "out"
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4,
           "profiling": {"enabled": True, "lanes": 1, "output_dir": str(out)}}
    (tmp_path / "p.toml").write_text(to_toml(cfg))
    r = scenario.hdemu("up", "--config", tmp_path / "p.toml", timeout=60)
    assert r.returncode == 0, r
    name = r.stdout.split()[2]
    pid = int(r.stdout.split("supervisor pid ")[1].split(")")[0])
    try:
        w = scenario.run("dfx/empty_launches", env={"HDEMU_PLATFORM": name}, timeout=60)
        assert w.returncode == 0, w
    finally:
        os.kill(pid, signal.SIGINT)
    wait_until(lambda: not [n for n, _p, _t in list_segments() if n.startswith(name[:-len("boot")])], 60,
               f"{name}'s segments to go after SIGINT")
    wait_until(lambda: not pid_alive(pid), 30, "the supervisor to exit")
    for f in DFX_OUTPUTS:
        assert (out / f).is_file(), (f, sorted(os.listdir(out)))
    assert_balanced(out)
