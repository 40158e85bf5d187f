"""The pytest plugin of hdemu (entry point ``pytest11``: ``hdemu``): the ``hdemu_faults`` fixture, for
a user's own fault-injection tests. docs/PLUGIN.md is its manual.

``hdemu_faults.run(program=... | entry=... | builtin=..., platform=..., faults=[...], promises=[...])``
builds a scenario (the same schema and validation as a scenario file of ``hdemu run``), runs it with
``run_scenario`` (this process supervises the platform, the workload runs in a child process, the
injector of ``_inject`` injects each fault on schedule, ``_promises`` judges each promise) and returns
a ``FaultRun``; with ``check=True`` (the default) a FAILED promise fails the test with the terminal
report and the run directory's path. ``hdemu_faults.run_file("s.toml")`` runs a scenario file.

Each run writes its directory (``history.jsonl``, ``report.json``, ``workload.log``, ``roles.log``)
under ``--hdemu-run-dir`` / the ini key ``hdemu_run_dir`` (default: pytest's temporary directory); it
is kept when the test fails (the failure report names it) and removed when the test passes (kept
too with ``--hdemu-keep-runs``). The plugin registers a fixture, two options and one ini key, and
a report hook that does nothing for tests without the fixture: nothing autouse.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
from contextlib import contextmanager
from pathlib import Path

import pytest

from shm_layout.errors import ConfigError
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive

from ._cli import format_report
from ._run import run_scenario
from ._schema import load_scenario, load_scenario_text

__all__ = ["FaultRunner", "FaultRun", "scenario_toml", "fault", "kill", "stop", "corrupt_header", "corrupt",
           "shrink_pool", "miopen_db", "promise", "hdemu_faults", "pytest_addoption", "pytest_runtest_makereport",
           "LEFTOVER_WAIT_S"]

#: How long a finished run may take to show no process and no segment of its own (they are gone
#: when ``run_scenario`` returns; the wait only absorbs a slow /proc or /dev/shm listing).
LEFTOVER_WAIT_S = 5.0
_FAILED = pytest.StashKey[bool]()
_RUNNER = pytest.StashKey["FaultRunner"]()
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


# -- faults and promises, as the dicts of a scenario's [[fault]] and [[promise]] ----------------------
def fault(kind: str, **keys) -> dict:
    """A ``[[fault]]`` entry of any kind (docs/FAULTS.md); the keys are validated when the run starts."""
    return {"kind": kind, **keys}


def kill(target: str, **when) -> dict:
    """SIGKILL ``target`` (``workload``, ``cp<i>``, ``lane<i>``, ``collector``) when ``at_s`` /
    ``after_dispatches`` / ``after_records`` says."""
    return fault("kill", target=target, **when)


def stop(target: str, duration_s: float, **when) -> dict:
    """SIGSTOP ``target``, then SIGCONT it ``duration_s`` later."""
    return fault("stop", target=target, duration_s=duration_s, **when)


def corrupt_header(queue: int = 0, packet_type: int = 4, **when) -> dict:
    """Overwrite the packet type of a queued packet of the workload's ``queue``-th AQL queue."""
    return fault("corrupt_header", queue=queue, packet_type=packet_type, **when)


corrupt = corrupt_header


def shrink_pool(thread: int, buffers: int) -> dict:
    """Shrink AICPU thread ``thread``'s DFX pool to ``buffers`` (applied when the platform starts)."""
    return fault("shrink_pool", thread=thread, buffers=buffers)


def miopen_db(how: str, duration_s: float | None = None, **when) -> dict:
    """Damage the workload's MIOpen binary cache (``how``: ``malformed_file``, ``md5_mismatch``, ``locked``,
    ``readonly_dir``) when ``at_s`` / ``after_calls`` / ... says; released ``duration_s`` later, or when
    the workload has ended."""
    return fault("miopen_db", how=how, **({} if duration_s is None else {"duration_s": duration_s}), **when)


def promise(kind: str, **keys) -> dict:
    """A ``[[promise]]`` entry (docs/FAULTS.md, *Promise kinds*); a bare kind name works too."""
    return {"kind": kind, **keys}


# -- a scenario dict as TOML text (load_scenario_text is the one validating loader) ----------------------
def _key(k) -> str:
    k = str(k)
    return k if _BARE_KEY.match(k) else json.dumps(k)


def _value(v, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, (str, os.PathLike)):
        return json.dumps(os.fspath(v))            # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x, f'{where}.{k}')}" for k, x in v.items()
                               if x is not None) + "}"
    raise ConfigError(f"{where} must be a number, string, boolean, list or table, not {type(v).__name__} "
                      f"{v!r}", where)


def scenario_toml(data: dict) -> str:
    """``data`` (top-level keys of a scenario) as a TOML document; a None value is left out."""
    return "".join(f"{_key(k)} = {_value(v, k)}\n" for k, v in data.items() if v is not None)


# -- the result of one run --------------------------------------------------------------------------
class FaultRun:
    """One finished run: ``report`` (report.json), ``history`` (history.jsonl, one dict per line),
    ``out_dir`` and the progress lines; ``check()`` fails the test if a promise FAILED."""

    def __init__(self, report: dict, history: list[dict], out_dir: Path, progress: list[str]):
        self.report, self.history, self.out_dir, self.progress = report, history, out_dir, progress

    @property
    def verdict(self) -> str:
        return self.report["verdict"]

    @property
    def held(self) -> bool:
        return self.verdict == "HELD"

    @property
    def promises(self) -> list[dict]:
        return self.report["promises"]

    @property
    def faults(self) -> list[dict]:
        return self.report["faults"]

    def promise(self, which: int | str) -> dict:
        """A promise's verdict and evidence, by index or by kind (the first of that kind)."""
        if isinstance(which, int):
            return self.promises[which]
        for p in self.promises:
            if p["kind"] == which:
                return p
        raise KeyError(f"no promise of kind {which!r} in this run (kinds: {[p['kind'] for p in self.promises]})")

    def of(self, type_: str, **match) -> list[dict]:
        """History lines of ``type_`` (``fault``, ``workload``, ``role_died``, ...) whose keys match."""
        return [h for h in self.history if h["type"] == type_ and all(h.get(k) == v for k, v in match.items())]

    def events(self, ev: str | None = None) -> list[dict]:
        """What the workload recorded (``start``, ``sync``, ``error``, ``done`` or the user's own names)."""
        return [h for h in self.of("workload") if ev is None or h["ev"] == ev]

    @property
    def text(self) -> str:
        """The terminal report of ``hdemu run``."""
        return format_report(self.report)

    def failure_text(self) -> str:
        bad = [f"[{p['index']}] {p['kind']}" for p in self.promises if p["verdict"] == "FAILED"]
        return (f"hdemu: promise(s) FAILED in scenario {self.report['scenario']}: {', '.join(bad)}\n{self.text}\n"
                f"run directory kept: {self.out_dir} (history.jsonl, report.json, workload.log, roles.log)")

    def check(self) -> "FaultRun":
        if not self.held:
            pytest.fail(self.failure_text(), pytrace=False)
        return self

    def __repr__(self) -> str:
        return f"<FaultRun {self.report['scenario']} {self.verdict} {self.out_dir}>"


# -- the fixture's object -----------------------------------------------------------------------------
@contextmanager
def _environ(extra: dict[str, str], paths: list[str]):
    """os.environ with ``extra`` set (a None value: removed) and ``paths`` in front of PYTHONPATH,
    restored afterwards (the platform's roles and the workload inherit os.environ when they start)."""
    saved = dict(os.environ)
    try:
        for k, v in extra.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        if paths:
            old = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _import_root(fn, source: str) -> tuple[str, str]:
    """(``module:name``, the sys.path entry a child process needs to import it) of a callable."""
    mod, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    m = sys.modules.get(mod or "")
    f = getattr(m, "__file__", None)
    what = f"{source}: entry {getattr(fn, '__name__', fn)!r}"
    if not re.match(r"^[A-Za-z_]\w*$", name) or getattr(m, name, None) is not fn:
        raise ConfigError(f"{what} must be a function defined at the top level of a module (a child process "
                          f"imports it by name), not {name!r}", "workload.entry")
    if not f or mod == "__main__":
        raise ConfigError(f"{what}: its module {mod!r} has no file a child process could import", "workload.entry")
    path = Path(f).resolve()
    parts = mod.split(".")
    if path.name == "__init__.py":
        root = path.parents[len(parts)]
        expect = root.joinpath(*parts, "__init__.py")
    else:
        root = path.parents[len(parts) - 1]
        expect = root.joinpath(*parts[:-1], parts[-1] + ".py")
    if expect != path:
        raise ConfigError(f"{what}: module {mod!r} ({path}) cannot be imported by that name from a sys.path "
                          f"entry (pytest --import-mode=importlib?); put the function in a module on sys.path",
                          "workload.entry")
    return f"{mod}:{name}", str(root)


class FaultRunner:
    """``hdemu_faults``: runs scenarios for one test; every run's directory is removed at teardown
    when the test passed, kept when it failed."""

    fault, kill, stop, corrupt_header, corrupt = (staticmethod(fault), staticmethod(kill), staticmethod(stop),
                                                  staticmethod(corrupt_header), staticmethod(corrupt))
    shrink_pool, miopen_db, promise = staticmethod(shrink_pool), staticmethod(miopen_db), staticmethod(promise)

    def __init__(self, base: Path, test_dir: Path, label: str, keep: bool = False):
        self.base, self.test_dir, self.label, self.keep = base, test_dir, label, keep
        self.runs: list[FaultRun] = []
        self.dirs: list[Path] = []

    def _path(self, p, key: str, source: str) -> Path:
        p = Path(p)
        for cand in ([p] if p.is_absolute() else [self.test_dir / p, Path.cwd() / p]):
            if cand.is_file():
                return cand.resolve()
        raise ConfigError(f"{source}: {key} {str(p)!r}: no such file"
                          + ("" if p.is_absolute() else f" (looked in {self.test_dir} and {Path.cwd()})"), key)

    def _platform(self, platform, source: str) -> dict:
        if platform is None:
            return {}
        if isinstance(platform, dict):
            return platform
        path = self._path(platform, "platform", source)
        try:
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not valid TOML: {e}", "platform") from None
        return data.get("platform", data)

    def run(self, *, program=None, entry=None, builtin=None, args=(), platform=None, faults=(), promises=(),
            env=None, name=None, description="", check=True, **workload) -> FaultRun:
        """Run one scenario: the workload (``program`` path, ``entry`` callable or ``"module:function"``,
        or ``builtin`` name; other ``[workload]`` keys as keywords), ``platform`` (a config dict or a
        TOML file), ``faults`` and ``promises`` (dicts, or promise kind names). ``env`` is set for the
        run's processes. ``check``: fail the test if a promise FAILED."""
        source = name or self.label
        paths = []
        if program is not None:
            program = self._path(program, "workload.program", source)
            paths.append(str(program.parent))          # as `python prog.py` would: its folder on sys.path
        if callable(entry):
            entry, root = _import_root(entry, source)
            paths.append(root)
        data = {"name": name or self.label, "description": description,
                "platform": self._platform(platform, source),
                "workload": {"program": program, "entry": entry, "builtin": builtin,
                             "args": [str(a) for a in args], **workload},
                "fault": list(faults),
                "promise": [promise(p) if isinstance(p, str) else p for p in promises]}
        sc, cfg = load_scenario_text(scenario_toml(data), source)
        return self._execute(sc, cfg, env or {}, paths, check)

    def run_file(self, path, *, env=None, check=True) -> FaultRun:
        """Run a scenario file (a path, relative to the test's folder or the cwd, or a built-in name)."""
        p = Path(path)
        if not p.is_absolute() and (self.test_dir / p).is_file():
            path = str(self.test_dir / p)
        sc, cfg, _p = load_scenario(str(path))
        return self._execute(sc, cfg, env or {}, [], check)

    def _execute(self, sc, cfg: dict, env: dict, paths: list[str], check: bool) -> FaultRun:
        self.base.mkdir(parents=True, exist_ok=True)
        out = Path(tempfile.mkdtemp(prefix=re.sub(r"[^\w.-]+", "_", sc.name)[:60] + "-", dir=self.base))
        self.dirs.append(out)
        lines: list[str] = []
        with _environ(env, paths):
            rep = run_scenario(sc, cfg, out, progress=lines.append)
        hist = [json.loads(ln) for ln in (out / "history.jsonl").read_text().splitlines() if ln.strip()]
        r = FaultRun(rep, hist, out, lines)
        self.runs.append(r)
        _check_nothing_left(r)
        return r.check() if check else r

    def close(self, failed: bool) -> None:
        if failed or self.keep:
            return
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def _check_nothing_left(r: FaultRun) -> None:
    """Every process of the run reaped, every segment of its platform removed; else the test fails."""
    run = r.of("run")
    if not run:
        return
    creator = int(r.report["platform"].split("-")[1])
    pids = [*run[0]["roles"].values(), *(h["pid"] for h in r.of("workload_start")), *(h["pid"] for h in r.of("probe"))]
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while True:
        alive = [p for p in pids if pid_alive(p)]
        segs = [n for n, pid, _t in list_segments() if pid == creator and r.report["platform"] in n]
        if not (alive or segs) or time.monotonic() > deadline:
            break
        time.sleep(0.05)            # a poll period: the listing is read again
    if alive or segs:
        pytest.fail(f"hdemu: run {r.out_dir} left processes {alive} and segments {segs}", pytrace=False)


# -- pytest hooks and the fixture ---------------------------------------------------------------------
def pytest_addoption(parser) -> None:
    group = parser.getgroup("hdemu", "hdemu fault-injection runs (the hdemu_faults fixture)")
    group.addoption("--hdemu-run-dir", dest="hdemu_run_dir", default=None, metavar="DIR",
                    help="where hdemu_faults writes its run directories (default: the hdemu_run_dir ini key, "
                         "else pytest's temporary directory)")
    group.addoption("--hdemu-keep-runs", dest="hdemu_keep_runs", action="store_true",
                    help="keep the run directories of passing tests too (a failing test's are always kept)")
    parser.addini("hdemu_run_dir", "where hdemu_faults writes its run directories (relative to the ini file)",
                  default="")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """For a test that uses hdemu_faults: note a failure (its runs are kept) and name the runs'
    directories in the failure report. Other tests: nothing."""
    rep = yield
    if rep.failed and "hdemu_faults" in getattr(item, "fixturenames", ()):
        item.stash[_FAILED] = True
        runner = item.stash.get(_RUNNER, None)
        if runner is not None and runner.dirs:
            text = "\n".join(f"run directory kept: {d}" for d in runner.dirs)
            if hasattr(rep.longrepr, "addsection"):
                rep.longrepr.addsection("hdemu runs", text)
            else:
                rep.sections.append(("hdemu runs", text))
    return rep


def _base_dir(config, tmp_path_factory) -> Path:
    opt = config.getoption("hdemu_run_dir")
    if opt:
        return Path(opt).resolve()
    ini = config.getini("hdemu_run_dir")
    if ini:
        root = Path(config.inipath).parent if config.inipath else config.rootpath
        return (root / ini).resolve()
    return tmp_path_factory.getbasetemp() / "hdemu-runs"


@pytest.fixture
def hdemu_faults(request, tmp_path_factory) -> FaultRunner:
    """Runs fault-injection scenarios against an hdemu platform (docs/PLUGIN.md): ``run(...)``,
    ``run_file(path)``, and the fault / promise helpers ``kill``, ``stop``, ``corrupt_header``,
    ``shrink_pool``, ``miopen_db``, ``fault``, ``promise``."""
    runner = FaultRunner(_base_dir(request.config, tmp_path_factory), Path(request.path).parent,
                         request.node.name, keep=request.config.getoption("hdemu_keep_runs"))
    request.node.stash[_RUNNER] = runner
    yield runner
    runner.close(failed=request.node.stash.get(_FAILED, False))
