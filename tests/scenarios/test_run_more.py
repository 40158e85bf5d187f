"""`hdemu run` with the fault kinds of issue 11 added last: the platform's supervisor SIGKILLed or
SIGSTOPped (the run supervises the platform from a process of its own), a slow collector, a stalled
drain shard, a slow wake-up path, a corrupted DFX ready-queue entry. Each shipped scenario runs from the
CLI; each test checks its report.json against its history.jsonl. Scenario validation of the new keys,
without a platform."""
import json

import pytest

from hostside.faults import load_scenario_text
from hostside.faults._outputs import DFX_PID_BASE
from shm_layout.errors import ConfigError
from shm_layout.sync import pid_alive
from tests.scenarios.runkit import check_consistent, of, run, show_latencies, untimed, verdicts

pytestmark = pytest.mark.timeout(150)

BASE = """
[platform]
agents = 1
[workload]
builtin = "launch_loop"
[[fault]]
kind = "kill"
target = "supervisor"
after_dispatches = 10
[[promise]]
kind = "roles_exit"
within_s = 3.0
"""


@pytest.mark.parametrize("edit, message", [
    (('kind = "kill"', 'kind = "stall_engine"\nengine = 0\nduration_s = 1.0'),
     "s.toml: fault[0]: target 'supervisor' takes kind 'kill' or 'stop', not 'stall_engine'"),
    (('kind = "kill"', 'kind = "corrupt_header"'), "s.toml: fault[0]: target 'supervisor' takes kind 'kill' or 'stop', not 'corrupt_header'"),
    (("within_s = 3.0", ""), "s.toml: promise[0]: kind 'roles_exit' needs within_s"),
    (('target = "supervisor"', 'target = "cp0"'),
     None),                                                   # roles_exit about a CP kill: valid
    (('kind = "roles_exit"\nwithin_s = 3.0', 'kind = "roles_alive"\nroles = ["supervisor"]'), None),
    (('target = "supervisor"\nafter_dispatches = 10\n[[promise]]\nkind = "roles_exit"\nwithin_s = 3.0',
      'target = "cp0"\nafter_dispatches = 10\n[[promise]]\nkind = "roles_alive"\nroles = ["supervisor"]'),
     "s.toml: promise[0] names the supervisor, which only a scenario with a fault on target 'supervisor'"),
    (('target = "supervisor"', 'target = "superviser"'), "s.toml: fault[0].target must match"),
])
def test_supervisor_keys_are_validated_naming_the_key(edit, message):
    text = BASE.replace(*edit)
    assert text != BASE
    if message is None:
        load_scenario_text(text, "s.toml")
        return
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(text, "s.toml")
    assert str(exc.value).splitlines()[0].startswith(message), str(exc.value)


@pytest.mark.slow
@pytest.mark.xdist_group("sweep")   # its dead supervisor's segments must survive until the run sweeps them
def test_kill_supervisor_roles_exit_host_errors_no_segment_left(tmp_path):
    # the shipped scenario with its two latency bounds (roles_exit 3.0 s, host_error 1.5 s) raised: what is
    # asserted is that every role exited on its own and the host wait ended in the error, after the kill
    path, bounds = untimed("kill-supervisor", tmp_path)
    r, rep, hist = run(path, tmp_path, "--no-plot")
    show_latencies(rep, bounds)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    start = of(hist, "run")[0]
    assert f["state"] == "injected" and f["evidence"]["pid"] == start["supervisor_pid"]
    assert start["supervisor_pid"] == int(rep["platform"].split("-")[1])     # the segments' creator
    died = {d["role"]: d for d in of(hist, "role_died")}
    assert set(died) == {"supervisor", *start["roles"]}
    assert died["supervisor"]["exit_code"] == -9
    # every role noticed on its own and exited cleanly (the run reaped it: its subreaper)
    assert all(died[n]["exit_code"] == 0 and died[n]["t_s"] > f["t_s"] for n in start["roles"]), (died, f["t_s"])
    (gone,) = of(hist, "roles_exited")
    assert gone["left"] == []
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert errs and {e["name"] for e in errs} == {"hipErrorLaunchFailure"} and errs[0]["t_s"] > f["t_s"]
    assert rep["workload"]["exit_code"] not in (None, -9)                   # it ended, it was not killed
    (end,) = of(hist, "platform_end")
    assert end["segments_left"] == [] and len(end["swept"]) == end["segments"] > 0
    assert not pid_alive(start["supervisor_pid"])
    assert verdicts(rep) == {(0, "roles_exit"): "HELD", (1, "host_error"): "HELD", (2, "segments_removed"): "HELD",
                             (3, "dfx_balanced"): "HELD"}
    assert rep["promises"][0]["details"]["left"] == []
    # one timeline: the DFX swimlane rows (mode real: the CP's CLOCK_MONOTONIC times) are in the merged
    # trace as processes of their own, each AicoreTask on the very instant of the CP's kernel slice
    trace = json.loads((tmp_path / "run-kill-supervisor" / "trace.json").read_text())
    ev = trace["traceEvents"]
    cores = sorted(e["ts"] for e in ev if e.get("cat") == "dfx" and e["name"] == "kernel")
    kernels = sorted(e["ts"] for e in ev if e.get("cat") == "kernel")
    assert cores and len(cores) == trace["otherData"]["dfx_tasks"] == rep["outputs"]["dfx_trace_tasks"]
    assert {e["pid"] for e in ev if e.get("cat") == "dfx"} == {DFX_PID_BASE}
    # the CP's trace ring overwrites its oldest events when full (16384 events: 8192 kernels, fewer
    # than a fast machine runs before the CP sees the supervisor gone): the tasks from its first kept one on
    held = [c for c in cores if c >= kernels[0]]
    assert held and set(held) <= set(kernels)
    assert any(e.get("name") == "process_name" and e["pid"] == DFX_PID_BASE and "DFX swimlane" in e["args"]["name"]
               for e in ev)


@pytest.mark.slow
def test_stop_supervisor_platform_keeps_working(tmp_path):
    r, rep, hist = run("stop-supervisor", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["end_t_s"] - f["t_s"] >= 1.0
    syncs = [h["t_s"] for h in of(hist, "workload") if h["ev"] == "sync"]
    assert [t for t in syncs if f["t_s"] < t < f["end_t_s"]]                # served while the supervisor was stopped
    assert not of(hist, "role_died")
    (end,) = of(hist, "platform_end")
    assert end["segments_left"] == [] and end["swept"] == []                 # the supervisor removed them itself
    assert not pid_alive(of(hist, "run")[0]["supervisor_pid"])
    assert verdicts(rep) == {(0, "no_host_error"): "HELD", (1, "others_served"): "HELD",
                             (2, "workload_completes"): "HELD", (3, "roles_alive"): "HELD",
                             (4, "probe_served"): "HELD", (5, "dfx_balanced"): "HELD",
                             (6, "segments_removed"): "HELD"}


DFX = """
[platform]
agents = 1
[platform.profiling]
enabled = true
lanes = 2
mode = "synthetic"
[workload]
builtin = "dfx_synthetic"
[[fault]]
kind = "stall_shard"
shard = 1
after_records = 10
duration_s = 0.5
[[promise]]
kind = "shard_stalled"
"""


@pytest.mark.parametrize("edit, message", [
    (("shard = 1", "shard = 2"), "s.toml: fault[0].shard must be below 2 (the collector's drain shards"),
    (("lanes = 2", "lanes = 1"), "s.toml: fault[0].shard must be below 1"),
    (("enabled = true", "enabled = false"), "s.toml: fault[0] (stall_shard) needs [platform.profiling] enabled"),
    (("duration_s = 0.5", ""), "s.toml: fault[0]: duration_s is required for kind 'stall_shard'"),
    (("shard = 1", 'shard = 1\ntarget = "cp0"'), "s.toml: fault[0]: target of kind 'stall_shard' is the DFX collector"),
    (('kind = "stall_shard"', 'kind = "slow_collector"'), "s.toml: fault[0]: kind 'slow_collector' needs delay_s"),
    (('kind = "stall_shard"', 'kind = "slow_collector"\ndelay_s = 2.0'), "s.toml: fault[0].delay_s must be less than"),
    (("shard = 1", "shard = 1\ndelay_s = 0.01"), "s.toml: fault[0]: delay_s does not apply to kind 'stall_shard'"),
    (('kind = "stall_shard"\nshard = 1', 'kind = "stop"\ntarget = "collector"'),
     "s.toml: promise[0] (shard_stalled) is about a stall_shard fault, not 'stop'"),
])
def test_collector_fault_keys_are_validated_naming_the_key(edit, message):
    text = DFX.replace(*edit)
    assert text != DFX
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(text, "s.toml")
    assert any(ln.startswith(message) for ln in str(exc.value).splitlines()), str(exc.value)


def _pools(hist):
    pools = of(hist, "dfx_pool")
    assert pools and all(p["collected"] + p["dropped"] == p["total"] for p in pools)
    return pools


@pytest.mark.slow
def test_slow_collector_under_block_stalls_the_lanes_and_loses_nothing(tmp_path):
    r, rep, hist = run("slow-collector", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["delay_ns"] == 50_000_000 and f["target"] == "collector"
    (end,) = of(hist, "fault_end", index=0)
    # while it was slow, the shards drained at most one buffer per delay each
    span = end["t_s"] - f["t_s"]
    assert all(0 < n <= span / 0.05 + 2 for n in end["buffers_during"]), (end, span)
    assert sum(p["dropped"] for p in _pools(hist)) == 0
    lanes = of(hist, "dfx_lanes")[0]["lanes"]
    assert all(x["stalls"] >= 1 for x in lanes)
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_no_loss"): "HELD", (2, "dfx_lanes_stalled"): "HELD",
                             (3, "roles_alive"): "HELD"}
    # the effect in the one timeline: the lanes' gate stalls (a track of their own) fall in the fault window
    trace = json.loads((tmp_path / "run-slow-collector" / "trace.json").read_text())
    origin, t0 = trace["otherData"]["clock_origin_ns"], of(hist, "run")[0]["clock_origin_ns"]
    stalls = [e for e in trace["traceEvents"] if e.get("cat") == "dfx_stall"]
    assert len(stalls) == rep["outputs"]["dfx_trace_stalls"] == sum(x["stalls"] for x in lanes)
    a, b = t0 + f["t_s"] * 1e9, t0 + f["end_t_s"] * 1e9
    assert any(a <= origin + e["ts"] * 1e3 <= b for e in stalls)
    assert not [e for e in trace["traceEvents"] if e.get("cat") == "dfx"]      # synthetic tasks have no clock


@pytest.mark.slow
def test_slow_collector_under_drop_drops_and_counts(tmp_path):
    r, rep, hist = run("slow-collector-drop", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    dropped = sum(p["dropped"] for p in _pools(hist))
    assert dropped > 0
    assert rep["promises"][1]["details"]["dropped"] == dropped
    assert verdicts(rep) == {(0, "dfx_balanced"): "HELD", (1, "dfx_drops_counted"): "HELD", (2, "roles_alive"): "HELD"}


@pytest.mark.slow
def test_stall_shard_other_shard_drains_nothing_lost_stalled_catches_up(tmp_path):
    r, rep, hist = run("stall-shard", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    (end,) = of(hist, "fault_end", index=0)
    assert end["cleared_by"] == "collector"                 # the shard honoured the deadline on its own
    stalled, other = end["shards"]
    assert stalled["stalls"] == 1 and stalled["stall_ns"] > 0 and other["stalls"] == 0
    during = end["buffers_during"]
    assert during[0] <= f["evidence"]["sweep_limit"] and during[1] > 0
    (final,) = of(hist, "dfx_shards")
    assert final["shards"][0]["buffers"] > stalled["buffers"]
    assert sum(p["dropped"] for p in _pools(hist)) == 0
    lanes = of(hist, "dfx_lanes")[0]["lanes"]
    assert lanes[0]["stalls"] >= 1                          # thread 0 (shard 0's) waited at its gate
    assert verdicts(rep) == {(0, "shard_stalled"): "HELD", (1, "dfx_balanced"): "HELD", (2, "dfx_no_loss"): "HELD",
                             (3, "roles_alive"): "HELD"}


WAKE = """
[platform]
agents = 1
engines = 2
[workload]
builtin = "launch_loop"
[[fault]]
kind = "slow_wakeup"
target = "cp0"
engine = 1
at_s = 0.5
delay_s = 0.01
duration_s = 0.5
[[promise]]
kind = "latency_rose"
"""


@pytest.mark.parametrize("edit, message", [
    (("delay_s = 0.01", ""), "s.toml: fault[0]: kind 'slow_wakeup' needs delay_s (seconds per wake-up)"),
    (("duration_s = 0.5", ""), "s.toml: fault[0]: duration_s is required for kind 'slow_wakeup'"),
    (('target = "cp0"', 'target = "collector"'), "s.toml: fault[0]: target of kind 'slow_wakeup' is a command"),
    (("engine = 1", "engine = 3"), "s.toml: fault[0].engine must be at most 2 (engines; 2 is the SDMA engine)"),
    (('kind = "latency_rose"', 'kind = "latency_rose"\nfault = 1'), "s.toml: promise[0].fault must name one of"),
])
def test_slow_wakeup_keys_are_validated_naming_the_key(edit, message):
    text = WAKE.replace(*edit)
    assert text != WAKE
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(text, "s.toml")
    assert any(ln.startswith(message) for ln in str(exc.value).splitlines()), str(exc.value)


@pytest.mark.slow
def test_slow_wakeup_results_correct_latency_rises(tmp_path):
    r, rep, hist = run("slow-wakeup", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["delay_ns"] == 20_000_000
    (end,) = of(hist, "fault_end", index=0)
    assert end["wakeups_during"] > 0 and end["packets_during"][0] > 0      # it kept serving, slowly
    (done,) = [h for h in of(hist, "workload") if h["ev"] == "done"]
    assert done["verified"] == [True] and rep["workload"]["exit_code"] == 0
    m = rep["promises"][0]["details"]["medians_s"]
    assert m["during"] > m["before"]                                          # rose (no timed assertion beyond)
    assert verdicts(rep) == {(0, "latency_rose"): "HELD", (1, "no_host_error"): "HELD",
                             (2, "workload_completes"): "HELD", (3, "roles_alive"): "HELD"}


READY = DFX.replace('kind = "stall_shard"\nshard = 1\nafter_records = 10\nduration_s = 0.5',
                    'kind = "corrupt_ready_entry"\nthread = 1\nafter_records = 10').replace(
    'kind = "shard_stalled"', 'kind = "dfx_loss_reported"')


@pytest.mark.parametrize("edit, message", [
    (("thread = 1", "thread = 2"), "s.toml: fault[0].thread must be below 2 (lanes * threads_per_lane), not 2"),
    (("thread = 1", 'thread = 1\nfield = "seq"'), "s.toml: fault[0].field must be 'buffer_ptr', 'core_index'"),
    (("after_records = 10", 'after_records = 10\n[[fault]]\nkind = "kill"\ntarget = "cp0"\nat_s = 1.0\nfield = "buffer_ptr"'),
     "s.toml: fault[1]: field does not apply to kind 'kill'"),
    (('kind = "dfx_loss_reported"', 'kind = "dfx_loss_reported"\nfault = 1'), "s.toml: promise[0].fault must name"),
])
def test_ready_entry_keys_are_validated_naming_the_key(edit, message):
    load_scenario_text(READY, "s.toml")
    text = READY.replace(*edit)
    assert text != READY
    with pytest.raises(ConfigError) as exc:
        load_scenario_text(text, "s.toml")
    assert any(ln.startswith(message) for ln in str(exc.value).splitlines()), str(exc.value)


@pytest.mark.slow
def test_corrupt_ready_entry_rejected_loss_reported_others_flow(tmp_path):
    r, rep, hist = run("corrupt-ready-entry", tmp_path, "--no-plot")
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    ev = f["evidence"]
    assert f["state"] == "injected" and ev["thread"] == 0 and ev["field"] == "buffer_ptr" and ev["new"] != ev["old"]
    pools = of(hist, "dfx_pool")
    (hit,) = [p for p in pools if p["thread"] == 0 and p["kind"] == ev["record_kind"]]
    # the entry named no buffer: its buffer's records are lost, and the accounting says why
    assert hit["missing"] == ev["record_count"] and any("rejected (malformed entry)" in c for c in hit["causes"])
    assert hit["collected"] > ev["collected"][ev["record_kind"]]             # thread 0 drained on
    assert all(p["collected"] + p["dropped"] == p["total"] for p in pools if p is not hit)
    assert not of(hist, "role_died")
    assert "ready entry rejected (malformed entry)" in (tmp_path / "run-corrupt-ready-entry" / "roles.log").read_text()
    assert verdicts(rep) == {(0, "dfx_loss_reported"): "HELD", (1, "workload_completes"): "HELD",
                             (2, "roles_alive"): "HELD"}
