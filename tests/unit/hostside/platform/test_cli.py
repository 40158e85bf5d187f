"""The ``hdemu`` CLI's expected errors: one line on stderr, a non-zero exit, never a traceback; and
the config errors from ``hdemu up --config`` and ``HDEMU_CONFIG`` naming the full key."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hostside.platform import Platform, cli
from shm_layout.errors import PlatformError
from tests.paths import ROOT


def hdemu(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.pop("HDEMU_PLATFORM", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "hostside.platform.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=e, cwd=ROOT)


def one_line_error(r, *needles):
    assert r.returncode != 0, r
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_version():
    r = hdemu("--version")
    assert r.returncode == 0 and r.stdout.startswith("hdemu "), r


BAD = [
    ("agents = 0", "platform.agents"),
    ('agents = "two"', "platform.agents"),
    ("agnets = 2", "platform.agnets"),
    ("[platform.profiling]\nblock_timeout_s = \"1s\"", "platform.profiling.block_timeout_s"),
    ("[platform.profiling]\nenabled = \"yes\"", "platform.profiling.enabled"),
    ("[platform.profiling]\nrecords_per_buffer = {pmu = 0}", "platform.profiling.records_per_buffer"),
]


@pytest.mark.parametrize("body, key", BAD)
def test_up_with_a_bad_config_names_the_key(tmp_path, body, key):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[platform]\n" + body + "\n")
    one_line_error(hdemu("up", "--config", str(cfg)), key, "bad.toml")


def test_up_with_a_toml_syntax_error(tmp_path):
    cfg = tmp_path / "broken.toml"
    cfg.write_text("[platform\nagents = 2\n")
    one_line_error(hdemu("up", "--config", str(cfg)), "broken.toml")


@pytest.mark.parametrize("body, key", BAD[:3])
def test_hdemu_config_env_names_the_key(tmp_path, body, key):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[platform]\n" + body + "\n")
    code = ("from hostside import hip\n"
            "try:\n    hip.hipGetDeviceCount()\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    env = dict(os.environ, HDEMU_CONFIG=str(cfg))
    env.pop("HDEMU_PLATFORM", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert f"HDEMU_CONFIG={cfg}" in r.stdout and key in r.stdout, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("cmd", ["status", "down", "trace"])
def test_a_stale_platform_name_is_one_line(cmd):
    args = [cmd, "hdemu-1-deadbeef-boot"] if cmd != "trace" else [cmd, "out.json", "--name", "hdemu-1-deadbeef-boot"]
    one_line_error(hdemu(*args), "hdemu-1-deadbeef-boot")


def test_a_stale_hdemu_platform_is_one_line():
    one_line_error(hdemu("status", env={"HDEMU_PLATFORM": "hdemu-1-deadbeef-boot"}), "HDEMU_PLATFORM")


def test_counters_with_a_missing_program_is_one_line(tmp_path):
    r = hdemu("counters", "--", str(tmp_path / "no_such_program.py"))
    one_line_error(r, "no_such_program.py")


@pytest.mark.parametrize("budget", ["-5", "abc", "1.5"])
def test_counters_with_a_bad_footprint_budget_is_a_usage_error(tmp_path, budget):
    prog = tmp_path / "prog.py"
    prog.write_text("print('never run')\n")
    r = hdemu("counters", "--footprint-budget", budget, "--", str(prog))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr      # was a ReplayError traceback for -5
    assert "--footprint-budget" in r.stderr and "never run" not in r.stdout


def test_run_with_a_missing_workload_program_is_a_scenario_error(tmp_path):
    sc = tmp_path / "nope.toml"
    sc.write_text('[workload]\nprogram = "no_such_program.py"\n\n[[promise]]\nkind = "roles_alive"\n')
    r = hdemu("run", "--out", str(tmp_path / "out"), str(sc))
    # was: a whole run whose workload failed, reported as a broken promise (exit 1)
    assert r.returncode == 2, r
    one_line_error(r, "workload.program", "no_such_program.py")
    assert not (tmp_path / "out").exists()


def test_a_closed_pipe_is_not_a_traceback():
    e = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-m", "hostside.platform.cli", "ls", "--all", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=ROOT)
    p.stdout.close()                      # the reader went away before the first write (`| head -0`)
    _out, err = p.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert p.returncode != 0 or not err


def test_down_refuses_an_embedded_platform():
    with Platform({"agents": 1, "memory_mib": 4, "host_pool_mib": 4}) as plat:
        one_line_error(hdemu("down", plat.name), "embedded")
        ls = hdemu("ls", "--json")
        assert plat.name in ls.stdout and '"embedded"' in ls.stdout, ls


def test_name_lookup_considers_only_my_standalone_platforms(monkeypatch):
    monkeypatch.delenv("HDEMU_PLATFORM", raising=False)
    mine = {"name": "hdemu-2-aa-boot", "mode": "standalone"}
    monkeypatch.setattr(cli, "live_platforms", lambda **_: [{"name": "hdemu-3-bb-boot", "mode": "embedded"}, mine])
    assert cli._platform_name(None) == "hdemu-2-aa-boot"
    monkeypatch.setattr(cli, "live_platforms", lambda **_: [{"name": "hdemu-3-bb-boot", "mode": "embedded"}])
    with pytest.raises(PlatformError, match="no running standalone platform"):
        cli._platform_name(None)


def test_a_platform_of_another_user_is_refused(monkeypatch):
    monkeypatch.setattr(cli, "list_segments", lambda: [("hdemu-9-cc-boot", 9, "cc")])
    monkeypatch.setattr(cli, "segment_uid", lambda name: os.getuid() + 1)
    with pytest.raises(PlatformError, match="another user"):
        cli._platform_name("hdemu-9-cc-boot")
