"""The one runner of scenario programs: ``tests/scenarios/<area>/<name>/program.py``.

A scenario folder holds ``program.py`` (a plain Python program that prints its results as one JSON
object on the last line of stdout), optionally ``platform.toml`` (a ``[platform]`` table; the runner
points ``HDEMU_CONFIG`` at it) and ``expected.json`` (static expectations, checked by ``run``).
Tests reach the runner through the ``scenario`` fixture of ``tests/conftest.py``; tests/README.md
describes the API. This module does not import pytest, so programs and tools may use it too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.paths import ROOT, SCENARIOS

#: the hdemu command line (what the ``hdemu`` console script runs), e.g. as a ``launcher``
HDEMU_ARGS = ["-m", "hostside.platform.cli"]
HDEMU = [sys.executable, *HDEMU_ARGS]
DEFAULT_TIMEOUT_S = 90.0
REAP_TIMEOUT_S = 10.0
TAIL_LINES = 40
#: variables that choose the platform; never inherited, only set from the scenario or the test
PLATFORM_VARS = ("HDEMU_PLATFORM", "HDEMU_CONFIG")
EXPECTED_KEYS = {"returncode", "stderr_contains", "stdout_contains"}


# -- environment and files ------------------------------------------------------------------------
def child_env(env: dict | None = None, *, inherit_platform: bool = True) -> dict:
    """os.environ with PYTHONPATH = the repo root, plus ``env`` (values made str; None removes)."""
    out = dict(os.environ)
    if not inherit_platform:
        for k in PLATFORM_VARS:
            out.pop(k, None)
    out["PYTHONPATH"] = str(ROOT) + (os.pathsep + out["PYTHONPATH"] if out.get("PYTHONPATH") else "")
    for k, v in (env or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = str(v)
    return out


def scenario_dir(name: str) -> Path:
    """``"replay/five_passes"`` -> its folder; it must hold a program.py."""
    d = SCENARIOS / name
    if not (d / "program.py").is_file():
        known = sorted(str(p.parent.relative_to(SCENARIOS)) for p in SCENARIOS.glob("*/*/program.py"))
        raise LookupError(f"no scenario {name!r} (no {d / 'program.py'}); known: {known}")
    return d


def load_expected(d: Path) -> dict | None:
    p = d / "expected.json"
    if not p.is_file():
        return None
    with open(p) as f:
        exp = json.load(f)
    unknown = set(exp) - EXPECTED_KEYS
    if unknown:
        raise ValueError(f"{p}: unknown keys {sorted(unknown)}; known: {sorted(EXPECTED_KEYS)}")
    return exp


def last_json(stdout: str) -> dict | None:
    """The last non-empty line of ``stdout`` parsed as a JSON object, or None."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        v = json.loads(lines[-1])
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def merge(base: dict, over: dict) -> dict:
    """``over`` merged into a copy of ``base``, nested tables merged key by key."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def to_toml(d: dict, prefix: str = "platform") -> str:
    """A tiny TOML writer for the nested ``[platform]`` tables (scalars, lists, tables)."""
    scal, tabs = [], []
    for k, v in d.items():
        (tabs if isinstance(v, dict) else scal).append((k, v))
    out = f"[{prefix}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in scal)
    for k, v in tabs:
        out += to_toml(v, f"{prefix}.{k}")
    return out


def tail(text: str, n: int = TAIL_LINES) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-n:]) if lines else "(empty)"


def wait_until(cond, timeout: float, what: str, interval: float = 0.02):
    """Poll ``cond()`` until it returns a true value (returned) or ``timeout`` runs out (AssertionError
    naming ``what``). The way to wait for something: never a bare sleep."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# -- results --------------------------------------------------------------------------------------
@dataclass
class ScenarioResult:
    """What one run of a program gave."""
    name: str
    argv: list
    returncode: int | None
    stdout: str
    stderr: str
    result: dict | None           # the last stdout line as a JSON object, or None
    expected: dict | None         # expected.json, or None
    duration_s: float
    timed_out: bool = False
    pid: int | None = None

    def describe(self) -> str:
        killed = " (timed out, killed)" if self.timed_out else ""
        return (f"scenario {self.name} (pid {self.pid}): exit {self.returncode}{killed}"
                f" after {self.duration_s:.1f} s\nargv: {self.argv}\n"
                f"--- stdout (last {TAIL_LINES} lines) ---\n{tail(self.stdout)}\n"
                f"--- stderr (last {TAIL_LINES} lines) ---\n{tail(self.stderr)}")

    __str__ = describe

    def check(self) -> "ScenarioResult":
        """Assert expected.json (returncode, stderr_contains, stdout_contains) and, when exit 0 is
        expected, that the program printed its result line. Messages carry the stderr tail."""
        assert not self.timed_out, self.describe()
        exp = self.expected or {}
        if "returncode" in exp:
            assert self.returncode == exp["returncode"], \
                f"exit {self.returncode}, expected {exp['returncode']}\n{self.describe()}"
            if exp["returncode"] == 0:
                assert self.result is not None, f"no JSON result on the last stdout line\n{self.describe()}"
        for s in exp.get("stderr_contains", []):
            assert s in self.stderr, f"{s!r} not in stderr\n{self.describe()}"
        for s in exp.get("stdout_contains", []):
            assert s in self.stdout, f"{s!r} not in stdout\n{self.describe()}"
        return self


class _Reader(threading.Thread):
    """Collects one pipe line by line, so that output can be awaited with a deadline."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe, self.lines, self.cv = pipe, [], threading.Condition()
        self.eof = False
        self.start()

    def run(self):
        try:
            for line in self.pipe:
                with self.cv:
                    self.lines.append(line)
                    self.cv.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self.cv:
                self.eof = True
                self.cv.notify_all()

    def text(self) -> str:
        with self.cv:
            return "".join(self.lines)

    def finish(self, timeout: float) -> str:
        self.join(timeout)
        return self.text()


class ScenarioProcess:
    """A running program (``ScenarioRunner.start``): await its lines, signal it, wait for its result.
    Killed and reaped by the runner at teardown if the test did not."""

    def __init__(self, name, argv, popen, expected):
        self.name, self.argv, self.popen, self.expected = name, argv, popen, expected
        self.pid = popen.pid
        self.t0 = time.monotonic()
        self._out, self._err = _Reader(popen.stdout), _Reader(popen.stderr)
        self._seen = 0
        self.outcome: ScenarioResult | None = None

    @property
    def stdout(self) -> str:
        return self._out.text()

    @property
    def stderr(self) -> str:
        return self._err.text()

    def describe(self) -> str:
        state = "running" if self.popen.poll() is None else f"exit {self.popen.returncode}"
        return (f"scenario {self.name} (pid {self.pid}, {state})\nargv: {self.argv}\n"
                f"--- stdout (last {TAIL_LINES} lines) ---\n{tail(self.stdout)}\n"
                f"--- stderr (last {TAIL_LINES} lines) ---\n{tail(self.stderr)}")

    def expect(self, prefix: str, timeout: float = 60.0) -> str:
        """Wait for the next stdout line that starts with ``prefix``; returns the rest of it, stripped.
        AssertionError (with the stderr tail) when the program ends or ``timeout`` runs out first."""
        deadline = time.monotonic() + timeout
        with self._out.cv:
            while True:
                while self._seen < len(self._out.lines):
                    line = self._out.lines[self._seen].rstrip("\n")
                    self._seen += 1
                    if line.startswith(prefix):
                        return line[len(prefix):].strip()
                left = deadline - time.monotonic()
                if self._out.eof or left <= 0:
                    break
                self._out.cv.wait(left)
        why = "its stdout ended" if self._out.eof else f"{timeout} s passed"
        raise AssertionError(f"expected a line starting with {prefix!r}, but {why}\n{self.describe()}")

    def send_signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def running(self) -> bool:
        return self.popen.poll() is None

    def release(self) -> None:
        """Close its stdin (a program that holds on ``common.hold()`` then ends)."""
        if self.popen.stdin and not self.popen.stdin.closed:
            try:
                self.popen.stdin.close()
            except OSError:
                pass

    def wait(self, timeout: float = DEFAULT_TIMEOUT_S) -> ScenarioResult:
        """Wait for it to end (killed when ``timeout`` runs out) and return its ScenarioResult."""
        if self.outcome is not None:
            return self.outcome
        timed_out = False
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self.popen.kill()
            self.popen.wait(REAP_TIMEOUT_S)
        self.release()
        out, err = self._out.finish(REAP_TIMEOUT_S), self._err.finish(REAP_TIMEOUT_S)
        self.outcome = ScenarioResult(self.name, self.argv, self.popen.returncode, out, err, last_json(out),
                                      self.expected, time.monotonic() - self.t0, timed_out, self.pid)
        return self.outcome

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        try:
            self.wait(REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
        for pipe in (self.popen.stdout, self.popen.stderr):
            if pipe:
                pipe.close()


class ScenarioRunner:
    """Starts scenario programs and hdemu commands for one test; everything it started is killed and
    reaped by ``close()`` (the fixture's teardown)."""

    def __init__(self, tmp_dir: str | os.PathLike | None = None):
        self.tmp_dir = Path(tmp_dir) if tmp_dir is not None else None
        self.handles: list[ScenarioProcess] = []
        self._configs = 0

    # the program's command line and environment
    def _prepare(self, name, args, env, platform, launcher):
        d = scenario_dir(name)
        cfg = d / "platform.toml"
        e = {}
        if cfg.is_file() or platform:
            e["HDEMU_CONFIG"] = str(self.config_file(name, platform or {}))
        e.update(env or {})
        argv = [sys.executable, *launcher, str(d / "program.py"), *[str(a) for a in args]]
        return argv, child_env(e, inherit_platform=False), load_expected(d)

    def config_file(self, name: str, overrides: dict | None = None) -> Path:
        """The scenario's platform.toml, or (with ``overrides`` merged into its ``[platform]`` table)
        a copy written to the test's tmp dir."""
        cfg = scenario_dir(name) / "platform.toml"
        if not overrides:
            return cfg
        base = {}
        if cfg.is_file():
            with open(cfg, "rb") as f:
                doc = tomllib.load(f)
            base = doc.get("platform", {})
        if self.tmp_dir is None:
            raise RuntimeError("config overrides need the runner's tmp dir")
        self._configs += 1
        out = self.tmp_dir / f"{name.replace('/', '.')}.{self._configs}.toml"
        out.write_text(to_toml(merge(base, overrides)))
        return out

    def run(self, name: str, *args, env: dict | None = None, platform: dict | None = None,
            launcher=(), timeout: float = DEFAULT_TIMEOUT_S, check: bool = True) -> ScenarioResult:
        """Run ``tests/scenarios/<name>/program.py`` to its end (killed after ``timeout``).

        ``args``: its argv; ``env``: extra variables (None removes one); ``platform``: overrides merged
        into platform.toml; ``launcher``: interpreter arguments before the program (e.g. ``["-m",
        "hostside.platform.cli", "counters", "--", "python"]``). With ``check``, asserts expected.json."""
        argv, e, expected = self._prepare(name, args, env, platform, launcher)
        h = self._spawn(name, argv, e, expected, stdin=subprocess.DEVNULL)
        r = h.wait(timeout)
        return r.check() if check else r

    def start(self, name: str, *args, env: dict | None = None, platform: dict | None = None,
              launcher=()) -> ScenarioProcess:
        """Start the program and return its handle (stdin is a pipe: ``release()`` closes it)."""
        argv, e, expected = self._prepare(name, args, env, platform, launcher)
        return self._spawn(name, argv, e, expected, stdin=subprocess.PIPE)

    def hdemu(self, *args, env: dict | None = None, timeout: float = 60.0) -> ScenarioResult:
        """Run an ``hdemu`` command (``up``, ``status``, ``down``, ``clean``, ...) to its end."""
        argv = HDEMU + [str(a) for a in args]
        h = self._spawn("hdemu " + " ".join(map(str, args)), argv, child_env(env, inherit_platform=False), None,
                        stdin=subprocess.DEVNULL)
        return h.wait(timeout)

    def _spawn(self, name, argv, env, expected, stdin) -> ScenarioProcess:
        p = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        h = ScenarioProcess(name, argv, p, expected)
        self.handles.append(h)
        return h

    def report(self) -> list[tuple[str, str]]:
        """(title, text) of every program this runner started: for failure reports."""
        return [(f"scenario {h.name} (pid {h.pid})", h.describe()) for h in self.handles]

    def close(self) -> None:
        for h in self.handles:
            h.close()
