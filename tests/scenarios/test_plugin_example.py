"""The pytest plugin of hdemu (hostside/faults/_pytest_plugin.py, entry point pytest11) used from a
project outside tests/: examples/fault_tests run by a separate ``python -m pytest``, its outcomes read
from a JUnit XML file; and the plugin's footprint in this suite (registered, nothing autouse)."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import metadata

import pytest

from hostside.faults import _pytest_plugin
from shm_layout.errors import ConfigError
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from tests.scenarios.runner import ROOT, child_env

EXAMPLE = ROOT / "examples" / "fault_tests"
FAILING = "test_what_a_failure_looks_like"
WANT = {"test_a_killed_device_ends_the_host_wait_in_a_clear_error": "passed",
        "test_a_stall_shorter_than_the_wait_bound_is_not_an_error": "passed",
        "test_a_stall_longer_than_the_wait_bound_breaks_the_promise": "passed",
        FAILING: "failed"}


def test_the_plugin_is_an_entry_point_and_loaded_here_without_autouse_fixtures(request):
    eps = [e.value for e in metadata.entry_points(group="pytest11") if e.name == "hdemu"]
    assert eps == ["hostside.faults._pytest_plugin"], (
        f"pytest11 entry point 'hdemu': {eps} (an editable install older than pyproject.toml: pip install -e .)")
    assert request.config.pluginmanager.get_plugin("hdemu") is _pytest_plugin
    assert "hdemu_faults" not in request.fixturenames          # an autouse fixture would be listed here


def test_a_scenario_keyword_mistake_names_the_key(tmp_path):
    runner = _pytest_plugin.FaultRunner(tmp_path / "runs", tmp_path, "t")
    with pytest.raises(ConfigError) as exc:
        runner.run(builtin="launch_loop", faults=[runner.stop("cp0", duration_s=0.5)], promises=["roles_alive"])
    assert str(exc.value).startswith("t: fault[0]: needs exactly one of at_s, after_dispatches"), exc.value
    with pytest.raises(ConfigError) as exc:
        runner.run(program="nope.py", promises=["roles_alive"])
    assert "workload.program 'nope.py': no such file" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        runner.run(entry=lambda ev: True, promises=["roles_alive"])
    assert "must be a function defined at the top level of a module" in str(exc.value)
    assert not (tmp_path / "runs").exists()                     # refused before anything started


def _outcomes(xml_path) -> dict:
    out = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        out[case.get("name")] = ("failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags
                                 else "passed")
    return out


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_example_project_runs_with_the_plugin(tmp_path):
    runs, xml = tmp_path / "runs", tmp_path / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(EXAMPLE.relative_to(ROOT)),
           f"--junitxml={xml}", f"--hdemu-run-dir={runs}", "--timeout=60"]
    env = child_env({"HDEMU_EXAMPLE_SHOW_FAILURE": "1", "PYTHONDONTWRITEBYTECODE": "1"}, inherit_platform=False)
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=100)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=10)
    assert xml.is_file(), out[-4000:]
    assert _outcomes(xml) == WANT, out[-4000:]
    assert p.returncode == 1, out[-4000:]

    # the failing test's run directory is kept, named in its failure report; the passing tests' are removed
    kept = sorted(runs.iterdir())
    assert len(kept) == 1 and kept[0].name.startswith(FAILING + "-"), (kept, out[-4000:])
    run = kept[0]
    assert {"history.jsonl", "report.json", "workload.log", "roles.log"} <= {f.name for f in run.iterdir()}
    assert f"run directory kept: {run}" in out and "hdemu runs" in out, out[-4000:]
    rep = json.loads((run / "report.json").read_text())
    assert rep["verdict"] == "FAILED" and rep["scenario"] == FAILING
    (promise,) = rep["promises"]
    assert promise["kind"] == "no_host_error" and promise["verdict"] == "FAILED"
    assert "[0] FAILED no_host_error" in out and promise["evidence"][:60] in out
    (fault,) = rep["faults"]
    assert fault["state"] == "injected" and fault["end_t_s"] > fault["t_s"]

    # every process reaped, no segment left by the inner pytest (it supervised every platform)
    hist = [json.loads(ln) for ln in (run / "history.jsonl").read_text().splitlines()]
    roles = next(h for h in hist if h["type"] == "run")["roles"]
    assert not [q for q in [*roles.values(), rep["workload"]["pid"]] if pid_alive(q)]
    assert not [n for n, pid, _t in list_segments() if pid == p.pid]
