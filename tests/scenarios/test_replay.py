"""Kernel replay (hostside.replay) and the counter-collection tool (hostside.replay.counters).

The replay service is configured once per process, so every scenario is its own program, in
tests/scenarios/replay/<name>/program.py (run by the ``scenario`` fixture); its result is the JSON
object on its last stdout line. Kernels: tests/kernels/replay_kernels.py.
"""
import csv
import json
import signal
import time

import numpy as np
import pytest

from shm_layout import counters as C
from shm_layout.segments import list_segments, sweep
from shm_layout.sync import pid_alive
from tests.scenarios.runner import HDEMU_ARGS

pytestmark = pytest.mark.timeout(120)


def child(scenario, name: str, *args, timeout: float = 90, **kw):
    """Run replay/<name>; returns (its result dict, its ScenarioResult)."""
    r = scenario.run(f"replay/{name}", *args, timeout=timeout, **kw)
    return r.result, r


# -- memory is restored between passes -------------------------------------------------------------
def test_five_passes_of_inplace_updates_apply_once(scenario):
    r, run = child(scenario, "five_passes_apply_once")
    x = np.arange(1000, dtype=np.float32)
    assert r["y"] == (3.0 + 2.0 * x).tolist()                     # not 3 + 5 * 2x
    assert r["y2"] == (3.0 + 0.5 * x).tolist()
    assert r["z"] == (3.0 + 0.5 * x).tolist()                     # z += y once, with y updated once
    assert r["counter"] == [1] * 10 + [0] * 6 and r["gsize"] == 64
    outs = r["outcomes"]
    assert [o["status"] for o in outs] == ["replayed"] * 3
    assert all(o["executed"] == 5 and o["restores"] == 4 and o["requested"] == 5 for o in outs)
    assert outs[0]["regions"] >= 3 and outs[0]["footprint_bytes"] >= 3 * 4096
    # the same dispatch id on every pass, passes 0..4 of 5
    for o in outs:
        mine = [(p, t) for (did, p, t) in r["passes"] if did == o["dispatch_id"]]
        assert mine == [(p, 5) for p in range(5)]
    assert r["stats"]["snaps"] == 3 and r["stats"]["restores"] == 12 and r["stats"]["passes"] == 15


def test_application_signal_fires_once_after_the_last_pass(scenario):
    r, run = child(scenario, "app_signal_fires_once")
    outs = {o["dispatch_id"]: o for o in r["outcomes"]}
    assert [outs[i]["executed"] for i in (1, 2, 3)] == [3, 2, 4]        # fixed, early stop, open-ended
    assert [outs[i]["restores"] for i in (1, 2, 3)] == [2, 1, 3]        # no restore after the last pass
    for did, events in r["seen"].items():
        assert all(v == 1 for (_ph, _p, v) in events), events          # suppressed during every pass
    # after the window the application's signal is 0 (decremented exactly once, never below)
    assert r["res"] == [[0, True]] * 3


def test_pass_count_table(scenario):
    r, run = child(scenario, "pass_count_table")
    outs = {o["dispatch_id"]: o for o in r["outcomes"]}
    assert all(r["ok"])
    status = {d: (o["status"], o["executed"]) for d, o in outs.items()}
    assert status == {1: ("not_replayed", 1), 2: ("not_replayed", 1), 3: ("replayed", 3), 4: ("replayed", 3),
                      5: ("not_replayed", 1), 6: ("not_replayed", 1), 7: ("not_replayed", 1)}
    assert r["passes"] == {"3": 3, "4": 3}                          # no PASS callbacks without replay
    assert outs[5]["reason"].startswith("refused") and outs[6]["reason"].startswith("refused")
    assert "refused: pass count 0 needs a continue callback" in run.stderr


def test_continue_callback_rules(scenario):
    r, run = child(scenario, "continue_callback_rules")
    outs = {o["dispatch_id"]: o["executed"] for o in r["outcomes"]}
    assert outs == {1: 4, 2: 2, 3: 2, 4: 6}
    # never asked after the last pass of a fixed loop; True cannot extend it; False ends it early
    assert r["asked"] == {"1": [0, 1, 2], "2": [0, 1], "3": [0], "4": [0, 1, 2, 3, 4, 5]}
    assert r["y"] == (3.0 + 4 * np.arange(1000, dtype=np.float32)).tolist()   # 4 dispatches, once each


def test_user_data_is_set_at_config_and_fresh_for_every_pass(scenario):
    r, run = child(scenario, "user_data_scoping")
    first = [e for e in r["log"] if e[2] == 1]
    assert first[0] == ["CONFIG", "ENTER", 1, None, None]
    for p in range(3):
        assert ["PASS", "ENTER", 1, p, "config-1"] in first            # fresh at every pass
        assert ["PASS", "EXIT", 1, p, f"pass-{p}"] in first            # the pass's own write
    assert ["CONT", "", 1, 0, "pass-0"] in first and ["CONT", "", 1, 1, "pass-1"] in first
    assert first[-1] == ["CONFIG", "EXIT", 1, None, "config-1"]
    second = [e for e in r["log"] if e[2] == 2]
    assert second[0] == ["CONFIG", "ENTER", 2, None, None]              # scoped to its dispatch
    assert ["PASS", "ENTER", 2, 1, None] in second


def test_localized_context_control_and_one_configuration(scenario):
    r, run = child(scenario, "localized_context_control")
    assert r["errors"] == ["start B", "toggle in EXIT 0", "toggle in EXIT 1", "toggle in EXIT 2",
                           "configure twice"]
    assert r["views"] == [["pass1 before", False, True], ["pass1 after", True]]
    assert r["records"] == [1, 2]          # A stopped at pass 0, started again at pass 1 (sticky)
    assert r["after"] == [True, False, True]          # global state never modified by the loop
    assert r["configured"] is True and r["global_stop"] is False


def test_without_replay_no_interceptor_and_module_globals(scenario):
    r, run = child(scenario, "no_interceptor_module_globals")
    assert r["before"] == [False, True] and r["after"] == [False, True]
    assert r["c0"] == [2, 2, 1] + [0] * 13 and r["c1"] == [1] + [0] * 15
    assert r["size"] == 64 and r["distinct"] and r["err"] == "hipErrorNotFound"


# -- isolation ---------------------------------------------------------------------------------------
def test_ordinary_dispatch_from_another_thread_waits_for_the_window(scenario):
    r, run = child(scenario, "ordinary_dispatch_waits_for_window")
    m = r["marks"]
    assert r["ok"]
    assert m["other_launch"] < m["last_exit"]                # it was submitted while the window ran
    assert m["other_returned"] > m["last_exit"]              # ... and waited for the window
    assert r["stamp"] > m["last_exit"]                       # it ran on the device after it
    assert sorted(r["status"]) == ["not_replayed", "replayed"]


def test_kernel_in_flight_on_a_sibling_stream_finishes_before_snap(scenario):
    r, run = child(scenario, "sibling_kernel_finishes_before_snap")
    start, end = r["span"][0], r["span"][1]
    assert r["engines"][0] != r["engines"][1]
    assert start > 0 and end > 0                              # its writes survived (not restored away)
    assert r["marks"]["pass0"] > end                          # snap() came after the sibling finished
    assert r["ok"]


def test_replays_on_two_agents_overlap(scenario):
    r, run = child(scenario, "two_agents_overlap")
    (a0, a1), (b0, b1) = r["spans"]["0"], r["spans"]["1"]
    assert r["met"] == {"0": True, "1": True}, r            # each window saw the other's begin
    assert a0 < b1 and b0 < a1, r["spans"]                    # the two windows overlap in time
    assert r["ok"] == {"0": True, "1": True}
    outs = r["outcomes"]
    assert sorted(o["agent"] for o in outs) == [0, 1] and all(o["status"] == "replayed" for o in outs)
    # agent-scoped snapshots: each covers only its own agent's two buffers (+ the module global)
    assert all(o["regions"] == 3 for o in outs)


def test_agent_drain_runs_out_decline(scenario):
    r, run = child(scenario, "agent_drain_stuck", "decline")
    assert run.returncode == 0, run
    o = r["outcomes"][-1]
    assert o["status"] == "declined" and o["reason"].startswith("agent_drain_stuck")
    assert o["executed"] == 1 and r["ok"]                     # the dispatch ran once
    assert r["held"], r                                       # returned while the persistent kernel ran
    assert "agent_drain_stuck" in run.stderr                  # the reason is reported


def test_agent_drain_runs_out_fatal_aborts_the_process(scenario):
    r, run = child(scenario, "agent_drain_stuck", "fatal", timeout=60)
    assert run.returncode == -signal.SIGABRT, run
    assert "hdemu replay FATAL: replay_drain_agent_or_fatal" in run.stderr
    assert r is None, run                                     # it never printed its result
    # the orphaned command processors notice their supervisor is gone; then sweep its segments
    cps = json.loads(next(ln for ln in run.stdout.splitlines() if ln.startswith("CPS "))[4:])["pids"]
    deadline = time.monotonic() + 20
    while any(pid_alive(c) for c in cps) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(c) for c in cps)
    sweep(only_pid=run.pid)
    assert not [n for n, pid, _t in list_segments() if pid == run.pid]


def test_queue_drain_and_pass_drain_run_out_decline(scenario):
    r, run = child(scenario, "drain_run_out_decline")
    outs = r["outcomes"]
    assert [(o["kernel"], o["status"], o["reason"].split(" ")[0], o["executed"]) for o in outs] == [
        ("span", "declined", "pass_drain_stuck", 1), ("span", "not_replayed", "pass", 1),
        ("axpy", "declined", "queue_drain_stuck", 1)]
    assert r["enters"] == [["span", 0]]                 # the stuck pass was the last one
    assert r["v"] == [1, 0]                             # fired once, by the stuck pass's completion
    assert r["ok"]
    assert "queue sync slice 1/2 (0.2 s) expired; 1 kernel(s) still active" in run.stderr


def test_reentrant_dispatch_is_declined_and_never_deadlocks(scenario):
    r, run = child(scenario, "reentrant_dispatch_declined")
    outs = r["outcomes"]
    assert r["ok"]
    reentrant = [o for o in outs if o["status"] == "declined"]
    assert len(reentrant) == 4 and all(o["reason"] == "reentrant_dispatch" and o["kernel"] == "inc"
                                       for o in reentrant)
    axpy = [o for o in outs if o["kernel"] == "axpy"]
    assert [o["status"] for o in axpy] == ["replayed"]
    assert axpy[0]["reentrancy"] is True                      # the enclosing window says it was tainted
    assert r["c"] >= 1                                        # they ran (a restore may revert some: the gap)
    assert run.stderr.count("inside its replay window") == 1  # the explanation is given once
    assert "reentrancy=1" in run.stderr                       # the tainted window's line is reported


def test_declines_untracked_memory_footprint_budget_snapshot_failed(scenario):
    r, run = child(scenario, "declines_untracked_footprint_snapshot")
    outs = r["outcomes"]
    assert r["pinned_ok"] and r["ok"]
    assert [(o["status"], o["reason"].split(" ")[0], o["executed"]) for o in outs] == [
        ("declined", "untracked_memory", 1), ("replayed", "", 4), ("declined", "footprint_budget", 1),
        ("declined", "snapshot_failed", 1)]
    assert outs[2]["footprint_bytes"] > 64 << 10
    assert "untracked_memory" in run.stderr and "footprint_budget" in run.stderr


def test_a_faulting_pass_fails_the_stream_not_the_process(scenario):
    r, run = child(scenario, "faulting_pass_fails_stream")
    outs = r["outcomes"]
    assert r["err"] == "hipErrorIllegalAddress"
    assert (outs[0]["status"], outs[0]["executed"]) == ("failed", 1)
    assert (outs[1]["status"], outs[1]["executed"]) == ("replayed", 3) and r["ok"]


def test_continue_callback_replaced_in_pass_exit_decides_that_pass(scenario):
    r, run = child(scenario, "pass_exit_continue_override")
    # pass 0: the CONFIG default, with pass 0's user_data; pass 1: the override installed in its own
    # PASS EXIT, with pass 1's user_data; it stops the loop, so pass 2 never runs
    assert r["calls"] == [[0, "config", True, "config"], [1, "pass-1", False, "pass"]]
    assert (r["outcome"]["executed"], r["outcome"]["restores"]) == (2, 1) and r["ok"]


# -- the copy fence and the documented gap -------------------------------------------------------------
def test_sdma_copy_inside_a_replay_window_waits_at_the_copy_fence(scenario):
    """The default: a copy issued inside a window waits for the window to close; nothing reverts it."""
    r, run = child(scenario, "sdma_copy_fenced")
    assert r["held"] is True and r["during"] is False         # held during the passes
    assert r["kept"] and r["ok"]                              # it landed after the window, intact
    assert r["outcome"]["status"] == "replayed" and r["outcome"]["executed"] == 2


def test_sdma_copy_inside_a_replay_window_is_reverted_by_restore(scenario):
    """HAZARD (docs/replay.md), with ``configure(copy_fence=False)``: an async SDMA copy is not a
    kernel dispatch, so it does not pass the replay gate. Issued by another thread inside a replay window, it lands between snap() and
    restore() and is silently reverted, although the copy itself completed successfully."""
    r, run = child(scenario, "sdma_copy_reverted_by_restore")
    assert r["copied"] and r["ok"]
    assert r["lost"] == [0.0] * 1000          # the completed copy was reverted by restore()
    assert r["later"] == [7.0] * 1000


# -- the counter unit and the counter-collection tool ------------------------------------------------
def test_counter_slots_limit_what_the_device_reads(scenario):
    r, run = child(scenario, "counter_slots_limit")
    assert r["ok"] and r["configured"] is False               # counting alone needs no replay service
    assert r["got"] == [{"WORKGROUPS": 3, "WAVEFRONTS": 6, "WORKITEMS": 300, "INACTIVE_LANES": 84,
                         "KERNARG_BYTES": None, "POINTER_ARGS": None}]     # 4 slots: the rest not read


def test_counter_tool_collects_every_counter_and_matches_a_single_wide_pass(scenario, tmp_path):
    tables = {}
    # platform.toml: one agent, the default counter slots (narrow); wide: every counter in one pass
    for name, platform in (("narrow", None), ("wide", {"counter_slots": C.N_COUNTERS})):
        out = tmp_path / f"{name}.csv"
        r = scenario.run("replay/counter_tool_workload", platform=platform,
                         launcher=[*HDEMU_ARGS, "counters", "-o", str(out), "--", "python"])
        assert r.returncode == 0 and r.result == {"y_ok": True}, r
        with open(out) as f:
            tables[name] = list(csv.DictReader(f))
    narrow_rows, wide_rows = tables["narrow"], tables["wide"]
    assert [r["kernel"] for r in narrow_rows] == ["axpy", "axpy2", "bump", "scale", "grid_ids"]
    passes = -(-C.N_COUNTERS // 4)
    assert C.N_COUNTERS >= 12
    for a, b in zip(narrow_rows, wide_rows):
        assert a["status"] == "replayed" and int(a["passes"]) == passes
        assert b["status"] == "not_replayed" and int(b["passes"]) == 1
        assert a["kernel"] == b["kernel"]
        for name in C.COUNTER_NAMES:
            assert a[name] != "" and a[name] == b[name], (a["kernel"], name, a[name], b[name])
    assert int(narrow_rows[2]["BYTES_WRITTEN"]) == 16          # bump: 16 i32 globals 0 -> 1


def test_graph_launch_under_replay_warns_once_runs_once_and_is_reported(scenario):
    r, run = child(scenario, "graph_launch_under_replay")
    assert r["y"] == (2 * np.arange(1000, dtype=np.float32)).tolist()    # two launches, each ran once
    assert len(r["warns"]) == 1
    graph_outcomes = [o for o in r["outcomes"] if o["reason"] == "graph_launch"]
    assert len(graph_outcomes) == 2 and all(o["status"] == "declined" for o in graph_outcomes)
