"""Faults across real processes: a client killed mid-run, a command processor killed mid-wait, the
embedded platform's owner dying, and the standalone platform's CLI life cycle. The clients are the
programs in tests/scenarios/faults/<name>/."""
import json
import signal
import time

import pytest

from hostside.platform import Platform
from shm_layout import layouts as L
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from tests.scenarios.runner import wait_until

pytestmark = pytest.mark.timeout(120)
CFG = {"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "queue_size_max": 1024}


@pytest.fixture
def platform():
    p = Platform(CFG, embedded=False, quiet_roles=True).start()
    yield p
    p.stop()


def _owned_by(pm, pid):
    q = [i for i in range(pm.topo.max_queues) if int(pm.agents[0].qdesc[i]["owner"]) & 0xFFFFFFFF == pid]
    allocs = int(((pm.alloc_recs[1]["owner_pid"] == pid) & (pm.alloc_recs[1]["kind"] != 0)).sum()) \
        + int(((pm.alloc_recs[0]["owner_pid"] == pid) & (pm.alloc_recs[0]["kind"] != 0)).sum())
    sigs = int(((pm.signals["owner"] & 0xFFFFFFFF) == pid).sum())
    return q, allocs, sigs


def test_sigkill_client_is_reclaimed_and_next_client_served(platform, scenario):
    c = scenario.start("faults/client_holds_work", env={"HDEMU_PLATFORM": platform.name})
    c.expect("READY", timeout=60)
    pm = platform.pm
    q, allocs, sigs = _owned_by(pm, c.pid)
    assert q and allocs and sigs
    c.kill()
    c.wait(10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_owned_by(pm, c.pid)):
        time.sleep(0.05)
    assert _owned_by(pm, c.pid) == ([], 0, 0)
    assert int(pm.agents[0].hdr["reclaimed_queues"][0]) >= 1
    assert pid_alive(platform.procs[0].pid)
    r = scenario.run("faults/good_client", env={"HDEMU_PLATFORM": platform.name}, timeout=60)
    assert r.result == {"ok": True}, r


def _sleeping_on_a_signal(pm, pid) -> bool:
    """``pid`` sleeps in a host wait: a signal it owns counts a waiter."""
    mine = (pm.signals["owner"] & 0xFFFFFFFF) == pid
    return bool((pm.signals["waiters"][mine] > 0).any())


def test_sigkill_command_processor_ends_host_waits_with_hip_error(platform, scenario):
    c = scenario.start("faults/sync_while_cp_killed", env={"HDEMU_PLATFORM": platform.name})
    c.expect("LAUNCHED", timeout=60)
    wait_until(lambda: _sleeping_on_a_signal(platform.pm, c.pid), 30, "the client to sleep in its wait")
    cp = platform.procs[0]
    t = time.monotonic()
    cp.send_signal(signal.SIGKILL)
    r = c.wait(30).check()
    took = time.monotonic() - t
    assert r.result is not None and r.result.get("error") == "hipErrorLaunchFailure", r
    assert "is gone" in r.result["message"]
    print(f"host wait ended {took * 1e3:.0f} ms after the CP was killed")
    deadline = time.monotonic() + 5
    while int(platform.pm.roles[0]["state"]) != L.ROLE_DEAD and time.monotonic() < deadline:
        time.sleep(0.05)
    assert int(platform.pm.roles[0]["state"]) == L.ROLE_DEAD


def test_embedded_platform_is_torn_down_at_exit_even_on_exception(scenario):
    r = scenario.run("faults/embedded_teardown_on_exception", timeout=60)   # exit 1, "user code failed"
    assert r.returncode != 0 and "user code failed" in r.stderr
    pid = r.result["pid"]
    assert pid == r.pid
    assert not [n for n, p, _t in list_segments() if p == pid]


@pytest.mark.xdist_group("sweep")   # sweeps every dead segment: one worker, one at a time
def test_owner_killed_leaves_segments_that_clean_removes(scenario):
    p = scenario.start("faults/owner_killed_holds_platform")     # the embedded default platform
    info = json.loads(p.expect("READY", timeout=60))
    pid, cps = info["pid"], info["cps"]
    p.kill()
    p.wait(10)
    assert [n for n, q, _t in list_segments() if q == pid]
    deadline = time.monotonic() + 10     # the CPs notice their supervisor died and exit
    while any(pid_alive(c) for c in cps) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(c) for c in cps)
    r = scenario.hdemu("clean", timeout=30)
    assert r.returncode == 0 and "removed" in r.stdout, r
    assert not [n for n, q, _t in list_segments() if q == pid]


def test_cli_up_status_down(scenario, tmp_path):
    cfg = tmp_path / "p.toml"
    cfg.write_text("[platform]\nagents = 1\nengines = 1\nmemory_mib = 8\nhost_pool_mib = 8\n")
    r = scenario.hdemu("up", "--config", cfg, "-q", timeout=60)
    assert r.returncode == 0, r
    name = r.stdout.strip()
    try:
        r = scenario.run("faults/good_client", env={"HDEMU_PLATFORM": name}, timeout=60)
        assert r.result == {"ok": True}, r
        r = scenario.hdemu("status", name, "--json", timeout=30)
        st = json.loads(r.stdout)
        assert st["state"] == "up" and not st["embedded"]
        assert [x["kind"] for x in st["roles"]] == ["command-processor"] and st["roles"][0]["alive"]
        assert st["agents"][0]["packets"] >= 1
        r = scenario.hdemu("status", name, timeout=30)
        assert "command-processor" in r.stdout and "engine 0" in r.stdout
        r = scenario.hdemu("trace", tmp_path / "t.json", "--name", name, timeout=30)
        assert r.returncode == 0, r
        t = json.loads((tmp_path / "t.json").read_text())
        assert any(e.get("name") == "kernel" and e["ph"] == "X" for e in t["traceEvents"])
    finally:
        r = scenario.hdemu("down", name, timeout=60)
    assert r.returncode == 0, r
    assert not [n for n, _p, _t in list_segments() if n.startswith(name.rsplit("-", 1)[0])]


def test_bad_config_is_refused_with_a_clear_error(tmp_path):
    from hostside.platform import load_config
    from shm_layout.errors import ConfigError
    cfg = tmp_path / "p.toml"
    cfg.write_text("[platform]\nqueue_size_max = 1000\n")
    with pytest.raises(ConfigError, match="platform.queue_size_max must be a power of two, not 1000"):
        load_config(str(cfg))
    cfg.write_text("[platform]\nagnets = 2\n")
    with pytest.raises(ConfigError, match="platform.agnets is not a known key") as exc:
        load_config(str(cfg))
    assert exc.value.key == "platform.agnets"


def test_host_wait_is_bounded_and_names_the_queue(scenario):
    r = scenario.run("faults/host_wait_bounded", env={"HDEMU_WAIT_TIMEOUT_S": "0.5"}, timeout=60)
    assert r.result.get("error") == "hipErrorLaunchTimeOut", r
    assert "HDEMU_WAIT_TIMEOUT_S" in r.result["message"] and "read index" in r.result["message"]
