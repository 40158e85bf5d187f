"""The DFX pipeline across real processes: AICPU lanes, the collector, the supervisor, faults.
Workloads are the programs in tests/scenarios/dfx/<name>/ (their platform.toml enables profiling;
the tests point profiling.output_dir at their tmp dir)."""
import json
import os
import signal
import time

import numpy as np
import pytest

from hostside.dfx import lane_statistics, load_output, read_stalls
from hostside.platform import Platform
from shm_layout import dfx as D
from tests.scenarios.runner import to_toml as toml
from tests.scenarios.runner import wait_until

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def accounting(out_dir):
    with open(os.path.join(out_dir, "accounting.json")) as f:
        return json.load(f)


def assert_balanced(acc):
    for p in acc["pools"]:
        assert p["collected"] + p["dropped"] == p["total"], p


def synthetic(tmp_path, arch="a2a3", **prof):
    p = {"enabled": True, "lanes": 2, "mode": "synthetic", "subsystems": ["chip_swimlane", "pmu"],
         "output_dir": str(tmp_path / "out")}
    p.update(prof)
    return Platform({"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "arch": arch,
                     "profiling": p}, quiet_roles=True)


def run_workload(scenario, tmp_path, name: str, *args, **profiling):
    """Run dfx/<name> on the embedded platform of its platform.toml, writing to tmp_path/out."""
    prof = dict(profiling, output_dir=str(tmp_path / "out"))
    return scenario.run(f"dfx/{name}", *args, platform={"profiling": prof}, timeout=150)


def collected(pm) -> int:
    """Records the collector has collected so far, over every pool."""
    g = pm.topo.dfx
    c64 = pm.segs["dfxctl"].u8.view(np.uint64)
    return int(c64[g.collected_off // 8:g.collected_off // 8 + g.T * D.N_KINDS].sum())


def test_deadlock_freedom_one_buffer_per_pool(scenario, tmp_path):
    n_per_stream = 60
    run_workload(scenario, tmp_path, "one_buffer_per_pool", n_per_stream)   # lanes 4, 1 buffer per pool
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    out = load_output(str(tmp_path / "out"))
    kernels = 4 * n_per_stream
    assert len(out["aicpu_task"]) == kernels == len(out["aicore_task"]) == len(out["pmu"])
    assert len(out["args_dump"]) == kernels and len(out["scope_stats"]) == kernels
    assert len(np.unique(out["aicpu_task"]["reg_task_id"])) == kernels
    assert len(out["depgen"]) >= kernels - 4
    assert {int(t) for t in out["aicpu_task"]["thread"]} == {0, 1, 2, 3}     # all four lanes worked
    sw = open(tmp_path / "out" / "swimlane.csv").read().splitlines()
    assert len(sw) == kernels + 1
    json.loads((tmp_path / "out" / "swimlane.trace.json").read_text())


@pytest.mark.parametrize("policy", ["block", "common_mode"])
def test_shrunk_pool_stalls_only_its_lane(scenario, tmp_path, policy):
    r = run_workload(scenario, tmp_path, "shrunk_pool_stall", policy=policy)
    t_stop, t_cont = r.result["t_stop"], r.result["t_cont"]
    gap = (t_cont - t_stop) / 1e9
    out_dir = str(tmp_path / "out")
    acc = accounting(out_dir)
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    stalls = [s for s in json.load(open(os.path.join(out_dir, "stalls.json")))
              if s["end_ns"] - s["start_ns"] > 0.2e9]
    lanes = {s["lane"] for s in stalls}
    if policy == "block":
        assert lanes == {0}, stalls                   # the stall records name the starved lane only
    else:
        assert lanes == {0, 1}, stalls                # common mode: every lane shows the gap
        gaps = {s["lane"]: (s["start_ns"], s["end_ns"]) for s in stalls}
        assert max(g[0] for g in gaps.values()) < min(g[1] for g in gaps.values())   # aligned: they overlap
    out = load_output(out_dir)
    inband = out["stall"]                             # the same stalls, in-band in the data stream
    long_inband = inband[(inband["end_ns"] - inband["start_ns"]) > 0.2e9]
    assert {int(t) for t in long_inband["thread"]} == ({0} if policy == "block" else {0, 1})
    from hostside.dfx import swimlane_join as join
    sw = join(out)
    inflation = (sw["finish_time"].astype(np.int64) - sw["end_time"].astype(np.int64)) / 1e9
    core = (sw["end_time"].astype(np.int64) - sw["start_time"].astype(np.int64)) / 1e9
    by = {t: inflation[sw["thread"] == t] for t in (0, 1)}
    assert by[0].max() > 0.5 * gap                    # lane 0's finish_time is inflated by the stall
    if policy == "block":
        assert by[1].max() < 0.25 * by[0].max()       # lane 1's is not
    assert core.max() < 0.5 * gap                     # AicoreTask start/end are the ground truth: unaffected


def test_sigkill_collector_mid_run_balances_and_frees(tmp_path):
    budget = 0.5
    plat = synthetic(tmp_path, synthetic_duration_s=30.0, synthetic_records_per_s=20000,
                     backpressure_timeout_s=budget, buffers_per_pool=2, on_host_gone="exit").start()
    try:
        wait_until(lambda: collected(plat.pm) > 0, 30, "the collector to collect records")   # mid-run
        col = plat.procs[plat.dfx_roles["collector"][0]]
        col.send_signal(signal.SIGKILL)
        col.wait(10)
        t_kill = time.monotonic()
        lanes = [plat.procs[i] for i in plat.dfx_roles["lanes"]]
        for p in lanes:
            p.wait(budget + 10)                          # exit as configured: never hangs
        took = time.monotonic() - t_kill
        print(f"lanes exited {took:.2f} s after the collector was killed (budget {budget} s)")
        stalls = read_stalls(plat.pm)
        expired = [s for s in stalls if s["outcome"] == "expired"]
        assert expired
        margin = 1.0   # GATE_SLICE_S plus scheduling on a shared 2-core machine
        assert all((s["end_ns"] - s["start_ns"]) / 1e9 <= budget + margin for s in expired)
        st = lane_statistics(plat.pm)
        assert all(ln["drops"] > 0 for ln in st)
    finally:
        plat.stop()
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)


def test_sigstop_collector_shorter_than_budget_loses_nothing(tmp_path):
    plat = synthetic(tmp_path, synthetic_duration_s=2.0, synthetic_records_per_s=50000,
                     backpressure_timeout_s=10.0, buffers_per_pool=2).start()
    try:
        wait_until(lambda: collected(plat.pm) > 0, 30, "the collector to collect records")
        col = plat.procs[plat.dfx_roles["collector"][0]]
        col.send_signal(signal.SIGSTOP)
        time.sleep(1.0)         # the length of the fault (under the 10 s budget), not a wait for anything
        col.send_signal(signal.SIGCONT)
    finally:
        plat.stop()
    stalls = json.load(open(tmp_path / "out" / "stalls.json"))
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    assert sum(p["collected"] for p in acc["pools"]) > 0
    assert any(s["end_ns"] - s["start_ns"] > 0.5e9 for s in stalls)   # the writers did stall, then recovered


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_missing_write_back_starves_lane_on_a5_only(tmp_path, arch):
    # Lane 1 (2 buffers of 160 records a pool) needs refills for its 600 records of each kind, and on a5
    # never sees one (nor its first buffers): the short backstop must fire. Lane 0 must never wait at a
    # gate, whatever the collector's latency (a healthy lane behind a collector late by more than the
    # 0.3 s backstop drops too): its pools of 4 buffers are all in its free queue before the lanes start
    # (4 slots), and 4 x 160 records hold its 600. On a2a3 nothing should starve: the default 30 s backstop.
    plat = synthetic(tmp_path, arch=arch, synthetic_records=600,
                     backpressure_timeout_s=0.3 if arch == "a5" else 30.0, buffers_per_pool=2,
                     pool_overrides={"0": 4}, records_per_buffer={"aicpu_task": 160, "aicore_task": 160, "pmu": 160},
                     skip_writeback_thread=1).start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = lane_statistics(plat.pm)
            if all(ln["state"] != "running" for ln in st):
                break
            time.sleep(0.05)
    finally:
        plat.stop()
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    drops = {t: sum(p["dropped"] for p in acc["pools"] if p["thread"] == t) for t in (0, 1)}
    lanes = {ln["lane"]: ln for ln in acc["lanes"]}
    assert lanes[0]["stalls"] == 0                             # lane 0 never waited (its pools held its records)
    if arch == "a5":
        assert drops[1] > 0 and lanes[1]["backstops"] > 0      # the lane starved; the backstop fired
        assert drops[0] == 0 and lanes[0]["backstops"] == 0
    else:
        assert drops == {0: 0, 1: 0}                           # SVM hides the bug


def test_quiesce_drains_without_retiring_threads(tmp_path):
    # the lanes write until plat.stop() ends them (it sets ctl.stop, which they check between batches):
    # with a duration of their own they could finish while the test still waits (up to 30 + 20 + 20 s)
    # and no longer be running when it looks
    plat = synthetic(tmp_path, synthetic_duration_s=600.0, synthetic_records_per_s=20000).start()
    try:
        pm = plat.pm
        wait_until(lambda: collected(pm) > 0, 30, "the collector to collect records")
        ctl = pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
        ctl["quiesce_req"] = 1
        deadline = time.monotonic() + 20
        while int(ctl["quiesce_ack"][0]) != 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert int(ctl["quiesce_ack"][0]) == 1
        at_ack = collected(pm)
        assert at_ack > 0
        wait_until(lambda: collected(pm) > at_ack, 20, "collection to go on after the ack")
        assert collected(pm) > at_ack                    # still collecting: nothing was retired
        assert all(ln["state"] == "running" for ln in lane_statistics(pm))
        assert all(p.poll() is None for p in plat.procs.values())
    finally:
        t_stop = time.monotonic()
        plat.stop()
        print(f"plat.stop() took {time.monotonic() - t_stop:.2f} s")     # evidence, not asserted
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0


def test_silent_run_does_not_trip_an_idle_timeout(scenario, tmp_path):
    run_workload(scenario, tmp_path, "silent_run")      # 1 s of silence, backpressure timeout 0.3 s
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    stalls = json.load(open(tmp_path / "out" / "stalls.json"))
    assert not [s for s in stalls if s["outcome"] == "expired"]
    assert len(load_output(str(tmp_path / "out"))["aicpu_task"]) == 20


def test_status_shows_lane_statistics(tmp_path):
    from hostside.platform import format_status, status
    plat = synthetic(tmp_path, synthetic_records=1000).start()
    try:
        def up():
            st = status(plat.name)
            return st if (len(st["profiling"]["lanes"]) == 2
                          and st["profiling"]["collector_state"] in ("running", "draining")) else None
        st = wait_until(up, 30, "status to show both lanes and a running collector")
        assert len(st["profiling"]["lanes"]) == 2
        assert st["profiling"]["collector_state"] in ("running", "draining")
        text = format_status(st)
        assert "lane 0 pid" in text and "drops" in text and "stalls" in text
    finally:
        plat.stop()


def test_hdemu_up_with_profiling_from_toml(scenario, tmp_path):
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4,
           "profiling": {"enabled": True, "lanes": 1, "output_dir": str(tmp_path / "out")}}
    (tmp_path / "p.toml").write_text(toml(cfg))
    r = scenario.hdemu("up", "--config", tmp_path / "p.toml", "-q", timeout=60)
    assert r.returncode == 0, r
    name = r.stdout.strip()
    try:
        w = scenario.run("dfx/empty_launches", env={"HDEMU_PLATFORM": name}, timeout=60)
        assert w.returncode == 0, w
        r = scenario.hdemu("status", name, timeout=30)
        assert "profiling (real, a2a3, SVM)" in r.stdout and "lane 0 pid" in r.stdout, r
    finally:
        r = scenario.hdemu("down", name, timeout=90)
    assert r.returncode == 0, r
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert len(load_output(str(tmp_path / "out"))["aicpu_task"]) == 5


def test_sigkilled_lane_balances_and_later_dispatches_are_counted(scenario, tmp_path):
    r = run_workload(scenario, tmp_path, "killed_lane", "20", "30")
    before, after = r.result["before"], r.result["after"]
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)                                   # the dead lane's current buffers were collected
    assert acc["balanced"] and not acc["imbalances"]
    lanes = {ln["lane"]: ln for ln in acc["lanes"]}
    assert lanes[0]["state"] == "dead" and acc["dead_lanes"] == [0]
    assert lanes[0]["tasks"] == before
    assert lanes[0]["task_events_dropped"] == after        # every later dispatch of its ring is counted
    assert lanes[1]["tasks"] == before + after and lanes[1]["task_events_dropped"] == 0
    # ... and said at the end of the run, not only counted
    assert f"DFX lane 0: {after} task events dropped" in r.stderr, r.stderr[-3000:]
    assert "DFX lane 1:" not in r.stderr
    p0 = next(p for p in acc["pools"] if p["thread"] == 0 and p["kind"] == "aicpu_task")
    assert p0["adopted"] == before and p0["collected"] == before, p0
    assert any("dead lane" in c for c in p0["causes"]), p0
    out = load_output(str(tmp_path / "out"))
    assert len(out["aicpu_task"][out["aicpu_task"]["thread"] == 0]) == before
    assert len(out["aicpu_task"][out["aicpu_task"]["thread"] == 1]) == before + after


def test_sigint_to_a_lane_and_the_collector_is_ignored(tmp_path):
    n = 20000
    plat = synthetic(tmp_path, synthetic_records=n, synthetic_wait_go=True).start()
    lane = plat.procs[plat.dfx_roles["lanes"][0]]
    col = plat.procs[plat.dfx_roles["collector"][0]]
    try:
        lane.send_signal(signal.SIGINT)                    # a terminal's Ctrl-C, as each of them gets it
        col.send_signal(signal.SIGINT)
        plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)["go"] = 1
        wait_until(lambda: lane.poll() is not None or col.poll() is not None
                   or all(ln["state"] == "flushed" for ln in lane_statistics(plat.pm)), 60,
                   "the lanes to flush (or a role to die of the SIGINT)")
        assert lane.poll() is None and col.poll() is None, "a role died of SIGINT"
    finally:
        plat.stop()
    assert lane.returncode == 0 and col.returncode == 0
    out = tmp_path / "out"
    for f in ("summary.json", "stalls.json", "swimlane.csv", "swimlane.trace.json", "accounting.json"):
        assert (out / f).exists(), f
    acc = accounting(out)
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    assert sum(p["collected"] for p in acc["pools"] if p["kind"] != "stall") == 2 * n * 3


def test_stall_release_times_lie_within_their_stalls(tmp_path):
    """A one-buffer pool, and the collector stopped 40 times for 50 ms while the lane writes: each stop
    parks the lane at its pop gate until the refill that ends it (its release time). The stalls of
    the free flow count too, but under CPU load a collector that hands a buffer back at once may win
    every race with the lane and leave it none, so the stops are what guarantees the samples."""
    plat = synthetic(tmp_path, lanes=1, synthetic_duration_s=4.0, synthetic_records_per_s=4000,
                     synthetic_wait_go=True, subsystems=["chip_swimlane"],
                     records_per_buffer={"aicpu_task": 16, "aicore_task": 100000}, buffers_per_pool=1)
    plat.start()
    col = plat.procs[plat.dfx_roles["collector"][0]]
    try:
        plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)["go"] = 1
        wait_until(lambda: collected(plat.pm) > 0, 30, "the collector to collect records")
        for _ in range(40):               # 16 records take the lane 8 ms: every stop finds it writing
            col.send_signal(signal.SIGSTOP)
            try:
                time.sleep(0.05)          # the length of the fault, not a wait for anything
            finally:
                col.send_signal(signal.SIGCONT)
            time.sleep(0.025)
        wait_until(lambda: lane_statistics(plat.pm)[0]["state"] == "flushed", 60, "the lane to flush")
        stalls = [s for s in read_stalls(plat.pm) if s["gate"] == "pop" and s["outcome"] == "recovered"]
    finally:
        plat.stop()
    assert len(stalls) > 20
    bad = [s for s in stalls if not s["start_ns"] <= s["release_ns"] <= s["end_ns"]]
    assert not bad, f"{len(bad)} of {len(stalls)} stalls released outside themselves: {bad[:3]}"


#: The live fuzz: its seed and its bound (corruptions, each after the victim published an entry).
_FUZZ_SEED, _FUZZ_MUTATIONS = 20240607, 150


def test_dfx_fuzz_live_collector_survives_others_flow_every_loss_reported(tmp_path):
    """The fuzz of tests/unit/deviceside/aicpu/test_dfx_fuzz.py against the real processes: lane 1's
    ready entries, tail index, buffer record counts and ArgsDump payload lengths are corrupted while
    it runs (seeded; what lands depends on the race with the lane, the assertions do not)."""
    import random
    rng = random.Random(_FUZZ_SEED)
    plat = synthetic(tmp_path, lanes=3, synthetic_duration_s=60.0, synthetic_records_per_s=30000,
                     subsystems=["chip_swimlane", "args_dump"], backpressure_timeout_s=3.0,
                     records_per_buffer={"aicpu_task": 64, "aicore_task": 64, "args_dump": 16},
                     ready_depth=16).start()
    victim = 1
    col = plat.procs[plat.dfx_roles["collector"][0]]
    try:
        pm, g = plat.pm, plat.topo.dfx
        hdr, buf = pm.segs["dfxhdr"], pm.segs["dfxbuf"]
        tail_w = hdr.view(np.uint32, g.tail_off(victim), 1)
        corrupt = pm.segs["dfxctl"].u8.view(np.uint64)[g.corrupt_word(victim):g.corrupt_word(victim) + 1]
        wait_until(lambda: collected(pm) > 0, 30, "the collector to collect records")
        done, ended = 0, "all mutations made"
        for i in range(_FUZZ_MUTATIONS):
            seen = int(tail_w[0])
            try:
                wait_until(lambda: int(tail_w[0]) != seen or corrupt[0], 5, "the victim to publish")
            except AssertionError:
                ended = "the victim starved"                 # its rejected buffers are gone: enough
                break
            if corrupt[0]:
                ended = "the victim was marked corrupt"
                break
            t = int(tail_w[0])
            if t >= g.N:
                continue
            j = (t - 1) % g.N                                # its newest entry, perhaps not drained yet
            e = hdr.view(D.ready_entry, g.entry_off(victim, j), 1)[0]
            what = rng.choice(["core", "kind", "ptr", "seq", "count", "dup", "hcount", "payload", "payload", "tail"])
            if what == "core":
                e["core_index"] = rng.choice([0, 2, 99])
            elif what == "kind":
                e["kind"] = rng.choice([D.K_PMU, 77, D.K_AICORE_TASK])
            elif what == "ptr":
                e["buffer_ptr"] = g.buffer_addr(rng.choice([0, 2]), D.K_AICPU_TASK, rng.randrange(g.pool_size[0]))
            elif what == "seq":
                e["buffer_seq"] = int(e["buffer_seq"]) + rng.choice([-1, 1])
            elif what == "count":
                e["record_count"] = rng.choice([0, 1, 0xFFFF])
            elif what == "dup":
                src = g.entry_off(victim, (j - 1) % g.N)
                hdr.u8[g.entry_off(victim, j):g.entry_off(victim, j) + D.ready_entry.itemsize] = \
                    hdr.u8[src:src + D.ready_entry.itemsize].copy()
            elif what == "tail":
                tail_w[0] = rng.choice([(t + 3) % g.N, (t - 2) % g.N] + ([g.N + 5] if i > _FUZZ_MUTATIONS // 2 else []))
            else:
                k, ptr = int(e["kind"]), int(e["buffer_ptr"])
                try:
                    owner, _i = g.check_buffer_kind(k, ptr)
                except (ValueError, KeyError):
                    continue
                if owner != victim:      # a stale entry (an earlier "ptr", seen again after a "tail")
                    continue             # names another thread's buffer: corrupting it would hurt that thread
                off = ptr - D.DFX_BUF_BASE
                if what == "hcount":
                    buf.view(D.buffer_header, off, 1)[0]["record_count"] = rng.choice([1, 3, 0xFFFFFFFF])
                elif k == D.K_ARGS_DUMP:
                    r = buf.view(D.args_dump, off + D.buffer_header.itemsize, 1)[0]
                    r["payload_len"] = rng.choice([0xFFFFFF00, D.ARENA_BYTES + 1, 4096])
            done += 1
        # how many mutations the victim survives depends on which of its buffers were rejected (and so
        # lost to it) before it starved: enough when it ran out of buffers or was marked corrupt
        assert done > 10 or (done >= 3 and ended != "all mutations made"), \
            f"the fuzzer found too little to corrupt: {done} mutations, {ended}"
        assert col.poll() is None, "the collector died"
    finally:
        plat.stop()
    assert col.returncode == 0
    out = tmp_path / "out"
    summary = json.load(open(out / "summary.json"))
    acc = accounting(out)
    for p in acc["pools"]:
        if p["thread"] != victim:
            assert p["collected"] == p["total"] and p["dropped"] == 0, p            # the others flowed
        elif p["collected"] + p["dropped"] != p["total"]:
            assert p["causes"], p                                                   # every loss reported
    assert all(i["causes"] for i in acc["imbalances"]) and all(i["thread"] == victim for i in acc["imbalances"])
    assert all(i["thread"] == victim for i in summary["imbalances"])
    recs = load_output(str(out))["aicpu_task"]
    for t in (0, 2):
        ids = recs["reg_task_id"][recs["reg_task_id"] >> 40 == t]
        total = next(p["total"] for p in acc["pools"] if p["thread"] == t and p["kind"] == "aicpu_task")
        assert len(ids) == len(np.unique(ids)) == total
