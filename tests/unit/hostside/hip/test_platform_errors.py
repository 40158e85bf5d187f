"""A HIP call whose runtime cannot come up (a stale HDEMU_PLATFORM, a bad HDEMU_CONFIG) raises a
HipError (hipErrorNoDevice; hipErrorNotInitialized for the config) that is also the original
PlatformError / SegmentError / ConfigError, and is the thread's last error: a program that catches HipError around
its first HIP call sees it (it used to get a bare PlatformError)."""
import json
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.timeout(60)

PROGRAM = r"""
import json
from hostside import hip
from shm_layout.errors import ConfigError, PlatformError, SegmentError
out = {}
for name, call in (("malloc", lambda: hip.hipMalloc(64)),
                   ("launch", lambda: hip.hipModuleLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, []))):
    try:
        call()
        out[name] = None
    except hip.HipError as exc:
        out[name] = {"error": exc.error.name, "platform": isinstance(exc, (PlatformError, SegmentError)),
                     "config": isinstance(exc, ConfigError), "last": hip.hipGetLastError().name, "msg": str(exc)}
print(json.dumps(out))
"""


def _run(env_extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HDEMU_PLATFORM", "HDEMU_CONFIG")}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=45, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_stale_hdemu_platform_is_a_hip_error_no_device():
    out = _run({"HDEMU_PLATFORM": "hdemu-4194303-deadbeef-boot"})
    for name in ("malloc", "launch"):
        got = out[name]
        assert got is not None, out
        assert got["error"] == "hipErrorNoDevice" and got["last"] == "hipErrorNoDevice", got
        assert got["platform"] and "hdemu-4194303-deadbeef-boot" in got["msg"], got


def test_a_bad_hdemu_config_is_a_hip_error_not_initialized(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[platform]\nagents = 0\n")
    got = _run({"HDEMU_CONFIG": str(cfg)})["malloc"]
    assert got is not None and got["error"] == "hipErrorNotInitialized" and got["config"], got
    assert "agents" in got["msg"], got
