"""The DFX pipeline across real processes: AICPU lanes, the collector, the supervisor, faults."""
import json
import os
import signal
import time

import numpy as np
import pytest

from hostside.collector import lane_statistics, load_output, read_stalls
from hostside.platform import Platform
from shm_layout import dfx as D

from conftest import ROOT, run_py

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]
KFILE = os.path.join(ROOT, "tests", "kernels", "basic.py")


def toml(d: dict, prefix="platform") -> str:
    """A tiny TOML writer for the nested config tables used here."""
    scal, tabs = [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tabs.append((k, v))
        else:
            scal.append(f"{k} = {json.dumps(v)}")
    out = f"[{prefix}]\n" + "\n".join(scal) + "\n"
    for k, v in tabs:
        out += toml(v, f"{prefix}.{k}")
    return out


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


def run_workload(tmp_path, prof: dict, workload: str, agents=2, engines=2):
    cfg = {"agents": agents, "engines": engines, "memory_mib": 8, "host_pool_mib": 16,
           "profiling": dict({"enabled": True, "output_dir": str(tmp_path / "out")}, **prof)}
    (tmp_path / "p.toml").write_text(toml(cfg))
    code = f"import os, time, signal, numpy as np\nfrom hostside import hip\nm = hip.hipModuleLoad({KFILE!r})\n" + workload
    r = run_py(code, timeout=150, HDEMU_CONFIG=str(tmp_path / "p.toml"))
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_deadlock_freedom_one_buffer_per_pool(tmp_path):
    n_per_stream = 60
    r = run_workload(tmp_path, {"lanes": 4, "buffers_per_pool": 1, "subsystems": list(D.SUBSYSTEMS),
                                "records_per_buffer": {"aicpu_task": 8, "aicore_task": 8, "pmu": 8,
                                                       "depgen": 8, "args_dump": 8, "scope_stats": 8}}, f"""
inc = hip.hipModuleGetFunction(m, "inc")
streams, bufs = [], []
for dev in (0, 1):
    hip.hipSetDevice(dev)
    for _ in range(2):
        s = hip.hipStreamCreate(); d = hip.hipMalloc(64); hip.hipMemsetAsync(d, 0, 64, s)
        streams.append(s); bufs.append(d)
for i in range({n_per_stream}):
    for s, d in zip(streams, bufs):
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 16, 1, 1, 0, s, [d, 16])
for s, d in zip(streams, bufs):
    hip.hipStreamSynchronize(s)
    out = np.zeros(16, np.int32); hip.hipMemcpy(out, d, 64, hip.hipMemcpyDeviceToHost)
    assert (out == {n_per_stream}).all(), out
print("engines", sorted({{s.vgpu.queue.engine for s in streams}}))
""")
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


SHRINK = """
sl, em = hip.hipModuleGetFunction(m, "sleep"), hip.hipModuleGetFunction(m, "empty")
a, b = hip.hipStreamCreate(), hip.hipStreamCreate()       # engine 0 -> thread 0, engine 1 -> thread 1
assert (a.vgpu.queue.engine, b.vgpu.queue.engine) == (0, 1)
from hostside.hsa import runtime
plat = runtime().platform
col = plat.procs[plat.dfx_roles["collector"][0]].pid
for _ in range(4):
    hip.hipModuleLaunchKernel(em, 1,1,1, 1,1,1, 0, a, []); hip.hipModuleLaunchKernel(em, 1,1,1, 1,1,1, 0, b, [])
hip.hipStreamSynchronize(a); hip.hipStreamSynchronize(b)
time.sleep(0.3)
os.kill(col, signal.SIGSTOP)
t0 = time.monotonic_ns()
for i in range(30):
    hip.hipModuleLaunchKernel(sl, 1,1,1, 1,1,1, 0, a, [0.01])
    if i % 10 == 0:
        hip.hipModuleLaunchKernel(sl, 1,1,1, 1,1,1, 0, b, [0.01])
hip.hipStreamSynchronize(a); hip.hipStreamSynchronize(b)
time.sleep(max(0.0, 1.0 - (time.monotonic_ns() - t0) / 1e9))
os.kill(col, signal.SIGCONT)
print("STOP", t0, time.monotonic_ns())
"""


@pytest.mark.parametrize("policy", ["block", "common_mode"])
def test_shrunk_pool_stalls_only_its_lane(tmp_path, policy):
    r = run_workload(tmp_path, {"lanes": 2, "subsystems": ["chip_swimlane"], "pool_overrides": {"0": 1},
                                "records_per_buffer": {"aicpu_task": 2}, "policy": policy}, SHRINK,
                     agents=1, engines=2)
    t_stop, t_cont = (int(x) for x in r.stdout.split("STOP")[1].split())
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
    assert {int(t) for t in long_inband["thread"]} == {0} if policy == "block" else {0, 1}
    from hostside.swimlane import join
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
        time.sleep(0.5)
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
        time.sleep(0.3)
        col = plat.procs[plat.dfx_roles["collector"][0]]
        col.send_signal(signal.SIGSTOP)
        time.sleep(1.0)
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
    plat = synthetic(tmp_path, arch=arch, synthetic_records=600, backpressure_timeout_s=0.3,
                     buffers_per_pool=2, records_per_buffer={"aicpu_task": 64, "aicore_task": 64, "pmu": 64},
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
    if arch == "a5":
        assert drops[1] > 0 and lanes[1]["backstops"] > 0      # the lane starved; the backstop fired
        assert drops[0] == 0
    else:
        assert drops == {0: 0, 1: 0}                           # SVM hides the bug


def test_quiesce_drains_without_retiring_threads(tmp_path):
    plat = synthetic(tmp_path, synthetic_duration_s=3.0, synthetic_records_per_s=20000).start()
    try:
        time.sleep(0.5)
        pm = plat.pm
        g = plat.topo.dfx
        ctl = pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
        c64 = pm.segs["dfxctl"].u8.view(np.uint64)
        sl = slice(g.collected_off // 8, g.collected_off // 8 + g.T * D.N_KINDS)
        ctl["quiesce_req"] = 1
        deadline = time.monotonic() + 20
        while int(ctl["quiesce_ack"][0]) != 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert int(ctl["quiesce_ack"][0]) == 1
        at_ack = int(c64[sl].sum())
        assert at_ack > 0
        time.sleep(0.5)
        assert int(c64[sl].sum()) > at_ack               # still collecting: nothing was retired
        assert all(ln["state"] == "running" for ln in lane_statistics(pm))
        assert all(p.poll() is None for p in plat.procs.values())
    finally:
        plat.stop()
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0


def test_silent_run_does_not_trip_an_idle_timeout(tmp_path):
    run_workload(tmp_path, {"lanes": 1, "backpressure_timeout_s": 0.3}, """
time.sleep(1.0)
e = hip.hipModuleGetFunction(m, "empty")
for _ in range(20):
    hip.hipModuleLaunchKernel(e, 1,1,1, 1,1,1, 0, None, [])
hip.hipDeviceSynchronize()
""", agents=1, engines=1)
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert sum(p["dropped"] for p in acc["pools"]) == 0
    stalls = json.load(open(tmp_path / "out" / "stalls.json"))
    assert not [s for s in stalls if s["outcome"] == "expired"]
    assert len(load_output(str(tmp_path / "out"))["aicpu_task"]) == 20


def test_status_shows_lane_statistics(tmp_path):
    from hostside.status import format_status, status
    plat = synthetic(tmp_path, synthetic_records=1000).start()
    try:
        time.sleep(0.3)
        st = status(plat.name)
        assert len(st["profiling"]["lanes"]) == 2
        assert st["profiling"]["collector_state"] in ("running", "draining")
        text = format_status(st)
        assert "lane 0 pid" in text and "drops" in text and "stalls" in text
    finally:
        plat.stop()


def test_hdemu_up_with_profiling_from_toml(tmp_path):
    import subprocess
    import sys
    from conftest import child_env
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4,
           "profiling": {"enabled": True, "lanes": 1, "output_dir": str(tmp_path / "out")}}
    (tmp_path / "p.toml").write_text(toml(cfg))
    cli = [sys.executable, "-m", "hostside.cli"]
    r = subprocess.run(cli + ["up", "--config", str(tmp_path / "p.toml"), "-q"], env=child_env(),
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    name = r.stdout.strip()
    try:
        w = run_py(f"""
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
e = hip.hipModuleGetFunction(m, "empty")
for _ in range(5):
    hip.hipModuleLaunchKernel(e, 1,1,1, 1,1,1, 0, None, [])
hip.hipDeviceSynchronize()
""", HDEMU_PLATFORM=name)
        assert w.returncode == 0, w.stderr
        r = subprocess.run(cli + ["status", name], env=child_env(), capture_output=True, text=True,
                           timeout=30, cwd=ROOT)
        assert "profiling (real, a2a3, SVM)" in r.stdout and "lane 0 pid" in r.stdout, r.stdout
    finally:
        r = subprocess.run(cli + ["down", name], env=child_env(), capture_output=True, text=True,
                           timeout=90, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    acc = accounting(tmp_path / "out")
    assert_balanced(acc)
    assert len(load_output(str(tmp_path / "out"))["aicpu_task"]) == 5
