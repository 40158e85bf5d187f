"""Faults across real processes: a client killed mid-run, a command processor killed mid-wait, the
embedded platform's owner dying, and the standalone platform's CLI life cycle."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hostside.platform import Platform
from shm_layout import layouts as L
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from shm_layout.topology import PlatformMap

from conftest import ROOT, child_env

pytestmark = pytest.mark.timeout(120)
KFILE = os.path.join(ROOT, "tests", "kernels", "basic.py")
CFG = {"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "queue_size_max": 1024}

CLIENT = f"""
import sys, time, numpy as np
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
d = hip.hipMalloc(1 << 20)
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1,1,1, 1,1,1, 0, s, [0.5])
for _ in range(200):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "inc"), 1,1,1, 1,1,1, 0, s, [d, 1])
print("READY", flush=True)
time.sleep(60)
"""

GOOD_CLIENT = f"""
import numpy as np
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
n = 1000
a = np.arange(n, dtype=np.float32)
da, dc = hip.hipMalloc(4 * n), hip.hipMalloc(4 * n)
hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyHostToDevice)
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "vadd"), 4,1,1, 256,1,1, 0, None, [da, da, dc, n])
c = np.empty(n, np.float32)
hip.hipMemcpy(c, dc, 4 * n, hip.hipMemcpyDeviceToHost)
print("OK" if np.array_equal(c, 2 * a) else "BAD", flush=True)
"""


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


def test_sigkill_client_is_reclaimed_and_next_client_served(platform, procs):
    c = procs.start(CLIENT, HDEMU_PLATFORM=platform.name)
    line = c.stdout.readline()
    assert line.strip() == "READY", c.stderr.read()
    pm = platform.pm
    q, allocs, sigs = _owned_by(pm, c.pid)
    assert q and allocs and sigs
    c.send_signal(signal.SIGKILL)
    c.wait(10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_owned_by(pm, c.pid)):
        time.sleep(0.05)
    assert _owned_by(pm, c.pid) == ([], 0, 0)
    assert int(pm.agents[0].hdr["reclaimed_queues"][0]) >= 1
    assert pid_alive(platform.procs[0].pid)
    r = subprocess.run([sys.executable, "-c", GOOD_CLIENT], env=child_env(HDEMU_PLATFORM=platform.name),
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.stdout.strip() == "OK", r.stderr


def test_sigkill_command_processor_ends_host_waits_with_hip_error(platform, procs):
    code = f"""
import time
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1,1,1, 1,1,1, 0, s, [60.0])
print("LAUNCHED", flush=True)
try:
    hip.hipStreamSynchronize(s)
    print("RETURNED")
except hip.HipError as e:
    print("ERROR", e.name, str(e), flush=True)
"""
    c = procs.start(code, HDEMU_PLATFORM=platform.name)
    assert c.stdout.readline().strip() == "LAUNCHED", c.stderr.read()
    time.sleep(0.3)   # the client is now asleep in its wait
    cp = platform.procs[0]
    t = time.monotonic()
    cp.send_signal(signal.SIGKILL)
    out, err = c.communicate(timeout=30)
    took = time.monotonic() - t
    assert out.startswith("ERROR hipErrorLaunchFailure"), (out, err)
    assert "is gone" in out
    print(f"host wait ended {took * 1e3:.0f} ms after the CP was killed")
    deadline = time.monotonic() + 5
    while int(platform.pm.roles[0]["state"]) != L.ROLE_DEAD and time.monotonic() < deadline:
        time.sleep(0.05)
    assert int(platform.pm.roles[0]["state"]) == L.ROLE_DEAD


def test_embedded_platform_is_torn_down_at_exit_even_on_exception():
    code = f"""
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
import os; print(os.getpid(), flush=True)
raise RuntimeError("user code failed")
"""
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.returncode != 0 and "user code failed" in r.stderr
    pid = int(r.stdout.split()[0])
    assert not [n for n, p, _t in list_segments() if p == pid]


def test_owner_killed_leaves_segments_that_clean_removes():
    code = f"""
import os, time
from hostside import hip
hip.hipGetDeviceCount()
from hostside.hsa import runtime
print(os.getpid(), " ".join(str(a.cp_pid) for a in runtime().agents), flush=True)
time.sleep(60)
"""
    p = subprocess.Popen([sys.executable, "-c", code], env=child_env(HDEMU_CONFIG=""), cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        fields = p.stdout.readline().split()
        pid, cps = int(fields[0]), [int(x) for x in fields[1:]]
        p.kill()
        p.wait(10)
        assert [n for n, q, _t in list_segments() if q == pid]
        deadline = time.monotonic() + 10     # the CPs notice their supervisor died and exit
        while any(pid_alive(c) for c in cps) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(pid_alive(c) for c in cps)
        r = subprocess.run([sys.executable, "-m", "hostside.cli", "clean"], env=child_env(),
                           capture_output=True, text=True, timeout=30, cwd=ROOT)
        assert r.returncode == 0 and "removed" in r.stdout
        assert not [n for n, q, _t in list_segments() if q == pid]
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=10)


def test_cli_up_status_down(tmp_path):
    cfg = tmp_path / "p.toml"
    cfg.write_text("[platform]\nagents = 1\nengines = 1\nmemory_mib = 8\nhost_pool_mib = 8\n")
    cli = [sys.executable, "-m", "hostside.cli"]
    r = subprocess.run(cli + ["up", "--config", str(cfg), "-q"], env=child_env(), capture_output=True,
                       text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    name = r.stdout.strip()
    try:
        r = subprocess.run([sys.executable, "-c", GOOD_CLIENT], env=child_env(HDEMU_PLATFORM=name),
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert r.stdout.strip() == "OK", r.stderr
        r = subprocess.run(cli + ["status", name, "--json"], env=child_env(), capture_output=True,
                           text=True, timeout=30, cwd=ROOT)
        st = json.loads(r.stdout)
        assert st["state"] == "up" and not st["embedded"]
        assert [x["kind"] for x in st["roles"]] == ["command-processor"] and st["roles"][0]["alive"]
        assert st["agents"][0]["packets"] >= 1
        r = subprocess.run(cli + ["status", name], env=child_env(), capture_output=True, text=True,
                           timeout=30, cwd=ROOT)
        assert "command-processor" in r.stdout and "engine 0" in r.stdout
        r = subprocess.run(cli + ["trace", str(tmp_path / "t.json"), "--name", name], env=child_env(),
                           capture_output=True, text=True, timeout=30, cwd=ROOT)
        assert r.returncode == 0
        t = json.loads((tmp_path / "t.json").read_text())
        assert any(e.get("name") == "kernel" and e["ph"] == "X" for e in t["traceEvents"])
    finally:
        r = subprocess.run(cli + ["down", name], env=child_env(), capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not [n for n, _p, _t in list_segments() if n.startswith(name.rsplit("-", 1)[0])]


def test_bad_config_is_refused_with_a_clear_error(tmp_path):
    from hostside.platform import load_config
    cfg = tmp_path / "p.toml"
    cfg.write_text("[platform]\nqueue_size_max = 1000\n")
    with pytest.raises(ValueError, match="queue_size_max must be a power of two, not 1000"):
        load_config(str(cfg))
    cfg.write_text("[platform]\nagnets = 2\n")
    with pytest.raises(ValueError, match="unknown platform config keys"):
        load_config(str(cfg))


def test_host_wait_is_bounded_and_names_the_queue():
    code = f"""
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(m, "sleep"), 1,1,1, 1,1,1, 0, s, [5.0])
try:
    hip.hipStreamSynchronize(s)
except hip.HipError as e:
    print(e.name, str(e))
"""
    r = subprocess.run([sys.executable, "-c", code], env=child_env(HDEMU_WAIT_TIMEOUT_S="0.5"),
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.stdout.startswith("hipErrorLaunchTimeOut"), r.stdout + r.stderr
    assert "HDEMU_WAIT_TIMEOUT_S" in r.stdout and "read index" in r.stdout
