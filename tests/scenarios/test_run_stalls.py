"""`hdemu run` with an engine stall (the CP's engine honours engine_stats.stall_until_ns) and with
triggers by event (a DFX lane's first stall, the workload's n-th replay window); the run directory's
trace (fault track, clock origin), per-role statistics and latency plot. Scenario validation of the
new keys, without a platform."""
import json

import pytest

from hostside.faults import builtin_scenarios, load_scenario_text
from shm_layout.errors import ConfigError
from tests.scenarios.runkit import check_consistent, of, run, verdicts

pytestmark = pytest.mark.timeout(120)

STALL = """
[platform]
agents = 1
engines = 2
[workload]
builtin = "launch_loop"
[[fault]]
kind = "stall_engine"
target = "cp0"
engine = 0
after_dispatches = 10
duration_s = 0.5
[[promise]]
kind = "engine_stalled"
"""


@pytest.mark.parametrize("edit, message", [
    (("duration_s = 0.5", ""), "s.toml: fault[0]: duration_s is required for kind 'stall_engine'"),
    (('target = "cp0"', 'target = "collector"'), "s.toml: fault[0]: target of kind 'stall_engine' is a command"),
    (("engine = 0", "engine = 3"), "s.toml: fault[0].engine must be at most 2 (engines; 2 is the SDMA engine)"),
    (("after_dispatches = 10", "on_lane_stall = 0"), "s.toml: fault[0].on_lane_stall needs [platform.profiling]"),
    (("after_dispatches = 10", "on_replay_window = 1"), "s.toml: fault[0].on_replay_window needs a workload"),
    (("after_dispatches = 10", "on_replay_window = 0"), "s.toml: fault[0].on_replay_window must be greater than"),
    (('kind = "stall_engine"\ntarget = "cp0"', 'kind = "memory_pressure"'),
     "s.toml: fault[0]: after_dispatches does not apply to kind 'memory_pressure'"),
])
def test_new_keys_are_validated_naming_the_key(edit, message):
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(STALL.replace(*edit), "s.toml")
    assert str(exc.value).splitlines()[0].startswith(message), str(exc.value)


@pytest.mark.slow
def test_stall_engine_other_engine_serves_stalled_queue_resumes(tmp_path):
    r, rep, hist = run("stall-engine", tmp_path)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["end_t_s"] > f["t_s"]
    (end,) = of(hist, "fault_end", index=0)
    assert end["cleared_by"] == "engine"                    # the engine honoured the deadline on its own
    during = end["packets_during"]
    assert during[0] <= rep["promises"][0]["details"]["limit"] < during[1]
    syncs = [h for h in of(hist, "workload") if h["ev"] == "sync"]
    # the stalled stream waited the stall out in one sync: one of its syncs was in flight at the engine's
    # deadline (the fault's until_ns) and ended after it (a sync spans lat_s up to its t_s). Not the
    # run's end_t_s: that is when the run loop noticed the engine had cleared its word, polls and
    # scheduling later; the other stream synchronised during the stall
    deadline_s = (f["evidence"]["until_ns"] - of(hist, "run")[0]["clock_origin_ns"]) / 1e9
    assert f["t_s"] < deadline_s < f["end_t_s"]
    assert [h for h in syncs if h["stream"] == 0 and h["t_s"] - h["lat_s"] < deadline_s <= h["t_s"] + 1e-6], \
        (deadline_s, [h for h in syncs if h["stream"] == 0 and abs(h["t_s"] - deadline_s) < 0.1])
    assert [h for h in syncs if h["stream"] == 1 and f["t_s"] < h["t_s"] < f["end_t_s"]]
    assert verdicts(rep) == {(0, "engine_stalled"): "HELD", (1, "no_host_error"): "HELD", (2, "others_served"): "HELD",
                             (3, "workload_completes"): "HELD", (4, "roles_alive"): "HELD"}
    out = tmp_path / "run-stall-engine"
    # one timeline: the fault window is a track of its own, on the rings' clock, the origin kept
    trace = json.loads((out / "trace.json").read_text())
    origin = trace["otherData"]["clock_origin_ns"]
    (win,) = [e for e in trace["traceEvents"] if e.get("cat") == "fault"]
    t0 = of(hist, "run")[0]["clock_origin_ns"]
    assert win["ph"] == "X" and win["pid"] == 0
    assert abs(origin + win["ts"] * 1e3 - (t0 + f["t_s"] * 1e9)) < 1e3        # the same instant, within 1 us
    assert win["dur"] * 1e3 == pytest.approx((f["end_t_s"] - f["t_s"]) * 1e9, abs=1e3)
    assert any(e.get("name") == "kernel" for e in trace["traceEvents"])
    stats = json.loads((out / "stats.json").read_text())
    eng = stats["roles"]["cp0"]["engines"]
    assert [e["engine"] for e in eng] == [0, 1, 2] and eng[2]["sdma"] and eng[1]["packets"] > 0
    assert stats["streams"]["0"]["syncs"] == sum(1 for h in syncs if h["stream"] == 0)
    assert stats["streams"]["0"]["max_s"] == max(h["lat_s"] for h in syncs if h["stream"] == 0)
    if rep["outputs"]["plot"]:
        assert (out / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "matplotlib" in rep["outputs"]["plot_note"]


def with_faults(name: str, tmp_path, *faults: str) -> str:
    """A copy of the shipped scenario ``name`` in ``tmp_path`` (the same file name: ``run`` writes to the same
    ``run-<name>`` folder) with ``faults`` (``[[fault]]`` tables, as TOML) appended after its own; its path."""
    src = builtin_scenarios()[name]
    dst = tmp_path / src.name
    dst.write_text(src.read_text() + "".join("\n[[fault]]\n" + f.strip() + "\n" for f in faults))
    return str(dst)


#: lane-stall-stop-collector's trigger (lane 0's first stall) left to the free flow may never come: on a
#: loaded 2-core machine a collector woken by the lane's publish can preempt it and hand its one buffer
#: back before the lane's pop gate looks, every time. A slow collector from the lanes' first record (the
#: lanes write for at least 1 s, rate-limited) makes the drain shard sleep 50 ms after each buffer, so
#: the lane's next publish of its one buffer finds none free: lane 0 waits at its pop gate for certain.
FORCED_STALL = """
kind = "slow_collector"
after_records = 1
delay_s = 0.05
duration_s = 0.3
"""


@pytest.mark.slow
def test_fault_triggered_when_a_dfx_lane_first_stalls(tmp_path):
    r, rep, hist = run(with_faults("lane-stall-stop-collector", tmp_path, FORCED_STALL), tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    stop, slow = rep["faults"][1], rep["faults"][2]
    assert slow["kind"] == "slow_collector" and slow["state"] == "injected"
    assert stop["state"] == "injected" and stop["trigger"] == {"on_lane_stall": 0}
    lanes = of(hist, "dfx_lanes")[0]["lanes"]
    assert lanes[0]["stalls"] >= 1
    assert sum(p["dropped"] for p in of(hist, "dfx_pool")) == 0
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "HELD", (2, "roles_alive"): "HELD"}


@pytest.mark.slow
def test_fault_triggered_when_replay_enters_a_window(tmp_path):
    r, rep, hist = run("replay-window-stall", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    windows = [h for h in of(hist, "workload") if h["ev"] == "replay_window"]
    assert f["state"] == "injected" and f["trigger"] == {"on_replay_window": 20}
    assert windows[19]["t_s"] <= f["t_s"] and len(windows) == 20 * 4      # 20 iterations of 4 dispatches
    (done,) = [h for h in of(hist, "workload") if h["ev"] == "done"]
    assert done["verified"] == [True] and done["launched"] == [80]         # replayed twice, counted once
    assert verdicts(rep) == {(0, "no_host_error"): "HELD", (1, "workload_completes"): "HELD",
                             (2, "roles_alive"): "HELD"}
