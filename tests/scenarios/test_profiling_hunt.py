"""The counter-collection tool (``hdemu counters``) used as users use it: programs that end badly,
threads nobody joins, hipDeviceReset in the middle, Ctrl-C. Programs: tests/scenarios/counters_tool/."""
import csv
import json
import signal

from shm_layout.segments import list_segments, sweep
from shm_layout.sync import pid_alive

import pytest

from shm_layout import counters as C
from tests.scenarios.runner import HDEMU_ARGS, wait_until

pytestmark = pytest.mark.timeout(120)


def counters(out, *names):
    sel = ["--counters", ",".join(names)] if names else []
    return [*HDEMU_ARGS, "counters", *sel, "-o", str(out), "--", "python"]


def table(out):
    with open(out) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("how, code", [("return", 0), ("raise", 1), ("sys_exit", 3), ("os_exit", 4),
                                       ("keyboard_interrupt", 130)])
def test_the_table_holds_every_dispatch_however_the_program_ends(scenario, tmp_path, how, code):
    """Was: an uncaught exception or KeyboardInterrupt printed the tool's traceback and no table;
    os._exit wrote nothing; a thread still running when the main script ended had its dispatches
    left out (the table was written before the interpreter waited for it)."""
    out = tmp_path / "t.csv"
    r = scenario.run("counters_tool/ends_badly", how, launcher=counters(out, "WAVEFRONTS", "WORKITEMS"))
    assert r.returncode == code, r
    assert "worker done" in r.stdout, r
    rows = table(out)
    assert [row["kernel"] for row in rows] == ["axpy"] * 2 + ["inc"] * 3, r
    assert [row["WAVEFRONTS"] for row in rows] == ["16", "16", "1", "1", "1"]
    if how in ("raise", "keyboard_interrupt"):
        # the program's traceback, as the interpreter prints it: no frame of the tool or of runpy
        assert "Traceback" in r.stderr and "counters.py" not in r.stderr and "runpy" not in r.stderr, r
        assert ("RuntimeError: the program failed" if how == "raise" else "KeyboardInterrupt") in r.stderr
    if how == "os_exit":
        # os._exit skips the embedded platform's teardown: its command processors exit once they see
        # their supervisor gone (README), then its segments are swept
        cps = json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("CPS "))[4:])["pids"]
        wait_until(lambda: not any(pid_alive(c) for c in cps), 20, "the orphaned command processors to exit")
        sweep(only_pid=r.pid)
        assert not [n for n, pid, _t in list_segments() if pid == r.pid]


def test_dispatch_ids_stay_unique_across_hip_device_reset(scenario, tmp_path):
    """Was: the replay service restarted its dispatch ids at 1 with the new runtime, so the tool's
    rows of the second round replaced those of the first (3 rows instead of 6)."""
    out = tmp_path / "t.csv"
    r = scenario.run("counters_tool/device_reset", launcher=counters(out))
    assert r.result == {"ok": True}, r
    rows = table(out)
    assert len(rows) == 6 and len({row["dispatch_id"] for row in rows}) == 6, rows
    assert all(row["status"] == "replayed" for row in rows)
    # the same three dispatches on the same inputs: the same counters in both rounds
    for a, b in zip(rows[:3], rows[3:]):
        assert [a[n] for n in C.COUNTER_NAMES] == [b[n] for n in C.COUNTER_NAMES]


def test_ctrl_c_writes_the_table_of_what_ran(scenario, tmp_path):
    out = tmp_path / "t.csv"
    p = scenario.start("counters_tool/interrupted", launcher=counters(out))
    p.expect("READY", timeout=60)
    p.send_signal(signal.SIGINT)
    r = p.wait(60)
    assert r.returncode == 130, r
    rows = table(out)
    assert len(rows) >= 20 and [int(row["seq"]) for row in rows] == list(range(len(rows)))
    done = [row for row in rows if row["status"] == "replayed"]
    assert len(done) >= 20 and all(row["OUTPUT_CRC32"] != "" for row in done)
    # at most the dispatch the interrupt landed in did not finish, and it says so
    assert all(row["status"] in ("replayed", "incomplete") for row in rows), rows[-3:]
    assert len(rows) - len(done) <= 1


# -- DFX profiling ---------------------------------------------------------------------------------
def test_a_killed_collector_still_leaves_stalls_and_a_swimlane_of_what_was_saved(scenario, tmp_path):
    """Was: after the collector's SIGKILL the supervisor salvaged the records and balanced the
    accounting, but wrote neither stalls.json nor swimlane.csv / swimlane.trace.json (only the
    collector wrote them), so the run had no swimlane at all."""
    import json

    from hostside.dfx import load_output
    out = tmp_path / "out"
    r = scenario.run("dfx_hunt/killed_collector", platform={"profiling": {"output_dir": str(out)}}, timeout=120)
    assert r.result == {"before": 40, "after": 200}, r
    acc = json.loads((out / "accounting.json").read_text())
    for p in acc["pools"]:
        assert p["collected"] + p["dropped"] == p["total"], p
    recs = load_output(str(out))
    kept = len(recs["aicpu_task"])
    assert 0 < kept, acc
    stalls = json.loads((out / "stalls.json").read_text())
    assert any(s["outcome"] == "expired" for s in stalls), stalls         # the backstop that found the host gone
    rows = (out / "swimlane.csv").read_text().splitlines()
    joined = set(recs["aicpu_task"]["reg_task_id"].tolist()) & set(recs["aicore_task"]["reg_task_id"].tolist())
    assert len(rows) == 1 + len(joined) and len(joined) > 0, rows[:3]
    trace = json.loads((out / "swimlane.trace.json").read_text())
    assert trace["traceEvents"]


def test_graph_launches_missing_from_the_table_are_said(scenario, tmp_path):
    """Was: the table silently had no row for the six kernels of three graph launches (only a
    generic 'graph launches are not replayed' warning); the tool now says how many launches are
    missing from it and why."""
    out = tmp_path / "t.csv"
    r = scenario.run("counters_tool/graph_launches", launcher=counters(out, "WAVEFRONTS"))
    assert r.result == {"x0": 7}, r
    assert [row["kernel"] for row in table(out)] == ["inc"]
    assert "3 graph launch(es) ran without counters" in r.stderr, r
