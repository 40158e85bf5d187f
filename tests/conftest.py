"""Shared fixtures: the /dev/shm leak check, the session sweep, and the ``scenario`` runner."""
from __future__ import annotations

import os
import signal
import time

import pytest

# host waits on device work fail loudly after this bound instead of hanging a test (see hostside.hsa)
os.environ.setdefault("HDEMU_WAIT_TIMEOUT_S", "60")
# a suite started in the background by a shell without job control (``./scripts/test &``) inherits
# SIGINT ignored, and so would every program it starts, which the Ctrl-C tests then cannot stop: a
# handler (unlike an ignore) is reset to the default at exec, so the programs get SIGINT as usual
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from shm_layout.segments import list_segments, sweep  # noqa: E402 - after the env default
from tests.paths import KERNELS, ROOT  # noqa: E402,F401 - ROOT and KERNELS kept importable from here
from tests.scenarios.runner import ScenarioRunner  # noqa: E402


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
    """Remove what earlier, killed runs left, once, before any test of this worker makes segments. Not
    again at the end: another worker may still run a test whose dead segments must survive until it
    checks them (those tests share the xdist group "sweep", run with --dist loadgroup)."""
    sweep()
    yield


@pytest.fixture
def scenario(tmp_path):
    """The scenario runner (tests/scenarios/runner.py): ``run(name, ...)`` a program to its end,
    ``start(name, ...)`` one to act on while it runs, ``hdemu(...)`` a CLI command. Every process it
    started is killed and reaped at teardown."""
    runner = ScenarioRunner(tmp_path)
    yield runner
    runner.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test that ran scenario programs shows each one's exit, stdout and stderr tails."""
    outcome = yield
    rep = outcome.get_result()
    runner = getattr(item, "funcargs", {}).get("scenario")
    if rep.failed and rep.when == "call" and isinstance(runner, ScenarioRunner):
        for title, text in runner.report():
            if hasattr(rep.longrepr, "addsection"):
                rep.longrepr.addsection(title, text)
            else:
                rep.sections.append((title, text))
