"""`hdemu run` itself: scenario validation (one line per problem, naming the key; exit 2), the
built-in scenarios by name, and Ctrl-C in the middle of a run (exit 130, every process reaped, no
segment left)."""
import json
import signal
import subprocess

import pytest

from hostside.faults import builtin_scenarios, load_scenario, load_scenario_text
from shm_layout.errors import ConfigError
from shm_layout.segments import list_segments
from shm_layout.sync import pid_alive
from tests.scenarios.runner import HDEMU, ROOT, child_env, wait_until

pytestmark = pytest.mark.timeout(120)

GOOD = """
[platform]
agents = 1
[workload]
builtin = "launch_loop"
[[fault]]
kind = "kill"
target = "cp0"
at_s = 0.1
[[promise]]
kind = "role_dead"
role = "cp0"
"""


def test_every_shipped_scenario_loads_and_has_a_fault_and_a_promise():
    names = builtin_scenarios()
    assert len(names) >= 6
    kinds = set()
    for name in names:
        sc, cfg, _p = load_scenario(name)
        assert sc.name == name and sc.fault and sc.promise
        kinds |= {f.kind for f in sc.fault}
    assert kinds == {"kill", "stop", "corrupt_header", "shrink_pool", "stall_engine", "corrupt_kernel_object",
                     "corrupt_kernarg", "corrupt_dependency", "corrupt_read_index", "corrupt_doorbell",
                     "memory_pressure", "slow_collector", "stall_shard", "slow_wakeup", "corrupt_ready_entry",
                     "miopen_db"}
    # the supervisor is a target too (a platform under a supervisor process of its own)
    assert {f.target for name in names for f in load_scenario(name)[0].fault} >= {"supervisor", "collector"}


@pytest.mark.parametrize("edit, message", [
    (("at_s = 0.1", "at_s = true"), "s.toml: fault[0].at_s must be a number, not True"),
    (('kind = "kill"', 'kind = "kil"'), "s.toml: fault[0].kind must be 'kill', 'stop', 'corrupt_header', 'shrink_pool',"),
    (("at_s = 0.1", "at_s = 0.1\nduration_s = 1.0"), "s.toml: fault[0]: duration_s does not apply to kind 'kill'"),
    (("at_s = 0.1", ""), "s.toml: fault[0]: needs exactly one of at_s, after_dispatches, after_records"),
    (('target = "cp0"', 'target = "cp3"'), "s.toml: fault[0].target 'cp3': the platform has 1 agent(s)"),
    (('target = "cp0"', 'target = "gpu"'), "s.toml: fault[0].target must match"),
    (("agents = 1", "agents = 0"), "s.toml: platform.agents must be an integer in [1, 16], not 0"),
    (('builtin = "launch_loop"', 'builtin = "launch_loop"\nprogram = "p.py"'),
     "s.toml: workload: needs exactly one of builtin, entry, program (given: builtin, program)"),
    (('role = "cp0"', 'role = "cp0"\nbogus = 1'), "s.toml: promise[0].bogus is not a known key"),
    (('kind = "role_dead"', 'kind = "host_error"'), "s.toml: promise[0]: kind 'host_error' needs error and within_s"),
])
def test_a_bad_scenario_is_refused_naming_the_key(edit, message):
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(GOOD.replace(*edit), "s.toml")
    assert str(exc.value).splitlines()[0].startswith(message), str(exc.value)


def test_the_good_scenario_loads():
    sc, cfg = load_scenario_text(GOOD, "s.toml")
    assert sc.name == "s" and cfg["agents"] == 1 and sc.fault[0].trigger == ("at_s", 0.1)


def test_cli_exit_2_for_a_bad_scenario_and_a_list_of_built_ins(scenario, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("at_s = 0.1", "at_s = -1"))
    r = scenario.hdemu("run", bad, timeout=60)
    assert r.returncode == 2, r
    assert "fault[0].at_s must be greater than or equal to 0, not -1" in r.stderr and "Traceback" not in r.stderr
    r = scenario.hdemu("run", "no-such-scenario", timeout=60)
    assert r.returncode == 2 and "kill-collector" in r.stderr, r
    r = scenario.hdemu("run", "--list", timeout=60)
    assert r.returncode == 0 and all(n in r.stdout for n in builtin_scenarios()), r


@pytest.mark.slow
def test_ctrl_c_mid_run_reaps_everything_and_removes_the_segments(tmp_path):
    # stop-cp with its CP stopped for 30 s (shipped: 0.5 s) and a host wait bound above that: the run is
    # certainly mid-fault when the Ctrl-C lands, however late the test sees the fault (the Ctrl-C ends it)
    text = builtin_scenarios()["stop-cp"].read_text()
    for old, new in (("duration_s = 0.5", "duration_s = 30.0"), ("wait_timeout_s = 10.0", "wait_timeout_s = 60.0")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    scenario_file = tmp_path / "stop-cp.toml"
    scenario_file.write_text(text)
    sc, _cfg, _p = load_scenario(str(scenario_file))
    assert [(f.kind, f.duration_s) for f in sc.fault] == [("stop", 30.0)]
    out = tmp_path / "run"
    p = subprocess.Popen([*HDEMU, "run", str(scenario_file), "--out", str(out)], cwd=ROOT,
                         env=child_env(inherit_platform=False), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    history = out / "history.jsonl"

    def lines():            # the history's complete lines so far
        return [json.loads(ln) for ln in history.read_text().split("\n")[:-1]] if history.is_file() else []
    try:
        # the CP is stopped (fault 0 injected, not ended): interrupt the run right there
        wait_until(lambda: [h for h in lines() if h["type"] == "fault"], 60, "fault 0 to be injected")
        assert [(h["type"], h.get("injected")) for h in lines() if h["type"].startswith("fault")] == [("fault", True)]
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=10)
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    hist = [json.loads(ln) for ln in history.read_text().splitlines()]
    assert "fault_end" not in {h["type"] for h in hist}         # interrupted while the CP was stopped
    run = next(h for h in hist if h["type"] == "run")
    pids = [*run["roles"].values(), next(h["pid"] for h in hist if h["type"] == "workload_start")]
    assert not [q for q in pids if pid_alive(q)]
    creator = int(run["platform"].split("-")[1])
    assert not [n for n, pid, _t in list_segments() if pid == creator]
    assert not (out / "report.json").exists()
