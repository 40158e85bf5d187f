"""Shared fixtures: a platform per test module, subprocess helpers, and the /dev/shm leak check."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

# host waits on device work fail loudly after this bound instead of hanging a test (see hostside.hsa)
os.environ.setdefault("HDEMU_WAIT_TIMEOUT_S", "60")

from shm_layout.segments import list_segments, sweep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "tests", "kernels")


def _mine():
    """Segments created by this test process (its pid is in their name)."""
    me = os.getpid()
    return [n for n, pid, _t in list_segments() if pid == me]


@pytest.fixture(autouse=True)
def no_segment_left():
    """Every test leaves /dev/shm as it found it (for segments this worker created)."""
    before = set(_mine())
    yield
    deadline = time.monotonic() + 5
    while True:
        left = set(_mine()) - before
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"segments left in /dev/shm: {sorted(left)}"


@pytest.fixture(scope="session", autouse=True)
def sweep_dead_runs():
    sweep()
    yield
    sweep()


def child_env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_py(code: str, timeout: float = 60, **env) -> subprocess.CompletedProcess:
    """Run Python code in a fresh interpreter; always reaped (timeout kills it)."""
    return subprocess.run([sys.executable, "-c", code], env=child_env(**env), capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


class Procs:
    """Processes a test starts; all killed and reaped at the end."""

    def __init__(self):
        self.procs = []

    def start(self, code: str, **env) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", code], env=child_env(**env), cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def procs():
    p = Procs()
    yield p
    p.close()
