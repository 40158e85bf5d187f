"""Kernel replay (hostside.replay) and the counter-collection tool (hostside.counters).

The replay service is configured once per process, so every scenario runs in its own child
interpreter (conftest.run_py): the child prints one JSON line starting with ``RESULT`` and the test
checks it. Kernels: tests/kernels/replay_kernels.py.
"""
import json
import os
import signal
import sys
import time

import pytest

from shm_layout import counters as C
from shm_layout.segments import list_segments, sweep
from shm_layout.sync import pid_alive

from conftest import ROOT, run_py

pytestmark = pytest.mark.timeout(120)
KFILE = os.path.join(ROOT, "tests", "kernels", "replay_kernels.py")

PRELUDE = f"""
import json, sys, threading, time
import numpy as np
from hostside import hip, replay
m = hip.hipModuleLoad({KFILE!r})
F = lambda name: hip.hipModuleGetFunction(m, name)
def launch(name, grid, block, stream, args, shared=0):
    hip.hipModuleLaunchKernel(F(name), grid, 1, 1, block, 1, 1, shared, stream, args)
def upload(arr):
    p = hip.hipMalloc(arr.nbytes)
    hip.hipMemcpy(p, arr, arr.nbytes, hip.hipMemcpyHostToDevice)
    return p
def download(p, n, dt=np.float32):
    hip.hipDeviceSynchronize()              # the null stream does not wait for other streams here
    out = np.empty(n, dt)
    hip.hipMemcpy(out, p, out.nbytes, hip.hipMemcpyDeviceToHost)
    return out
def result(**kw):
    print("RESULT " + json.dumps(kw), flush=True)
def outcome_dicts():
    return [dict(o.__dict__) for o in replay.outcomes()]
n = 1000
x = np.arange(n, dtype=np.float32)
y0 = np.full(n, 3.0, np.float32)
"""


def child(code: str, timeout: float = 90, **env) -> dict:
    p = run_py(PRELUDE + code, timeout=timeout, **env)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["_stderr"] = p.stderr
            return r
    raise AssertionError(f"child failed (exit {p.returncode}):\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")


# -- memory is restored between passes -------------------------------------------------------------
def test_five_passes_of_inplace_updates_apply_once():
    r = child("""
passes = []
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 5
    if op == "PASS" and phase == "ENTER":
        passes.append((d.dispatch_id, d.current_pass, d.total_passes))
replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy, dz = upload(x), upload(y0), upload(np.zeros(n, np.float32))
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])                  # one buffer
dy2 = upload(y0)
launch("axpy2", 4, 256, s, [dy2, dz, dx, 0.5, n])            # two buffers
launch("bump", 1, 16, s, [10])                                # a module-level device global
hip.hipStreamSynchronize(s)
g, gsize = hip.hipModuleGetGlobal(m, "counter")
result(y=download(dy, n).tolist(), y2=download(dy2, n).tolist(), z=download(dz, n).tolist(),
       counter=download(g, 16, np.int32).tolist(), gsize=gsize, passes=passes, outcomes=outcome_dicts(),
       stats=replay.statistics())
""")
    import numpy as np
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


def test_application_signal_fires_once_after_the_last_pass():
    r = child("""
seen = {}
plans = {1: (3, None), 2: (5, lambda d: d.current_pass < 1), 3: (0, lambda d: d.current_pass < 3)}
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count, c = plans[d.dispatch_id]
        if c is not None:
            d.continue_callback = c
    if op == "PASS":
        seen.setdefault(d.dispatch_id, []).append((phase, d.current_pass, d.completion_signal.load()))
replay.configure(cb)
s = hip.hipStreamCreate()
dx = upload(x)
res = []
for k in range(3):
    dy = upload(y0)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    sig = s.vgpu.last_signal
    res.append([sig.load(), download(dy, n).tolist() == (y0 + 2 * x).tolist()])
result(seen=seen, res=res, outcomes=outcome_dicts())
""")
    outs = {o["dispatch_id"]: o for o in r["outcomes"]}
    assert [outs[i]["executed"] for i in (1, 2, 3)] == [3, 2, 4]        # fixed, early stop, open-ended
    assert [outs[i]["restores"] for i in (1, 2, 3)] == [2, 1, 3]        # no restore after the last pass
    for did, events in r["seen"].items():
        assert all(v == 1 for (_ph, _p, v) in events), events          # suppressed during every pass
    # after the window the application's signal is 0 (decremented exactly once, never below)
    assert r["res"] == [[0, True]] * 3


def test_pass_count_table():
    r = child("""
table = {1: None, 2: 1, 3: 3, 4: 0, 5: 0, 6: -2, 7: "x"}
passes = {}
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        v = table[d.dispatch_id]
        if v is not None:
            d.replay_pass_count = v
        if d.dispatch_id == 5:
            d.continue_callback = None          # 0 without a continue callback: refused
    if op == "PASS" and phase == "ENTER":
        passes[d.dispatch_id] = passes.get(d.dispatch_id, 0) + 1
replay.configure(cb, continue_callback=lambda d: d.current_pass < 2)
s = hip.hipStreamCreate()
dx = upload(x)
ok = []
for k in range(7):
    dy = upload(y0)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    ok.append(download(dy, n).tolist() == (y0 + 2 * x).tolist())
result(passes=passes, ok=ok, outcomes=outcome_dicts())
""")
    outs = {o["dispatch_id"]: o for o in r["outcomes"]}
    assert all(r["ok"])
    status = {d: (o["status"], o["executed"]) for d, o in outs.items()}
    assert status == {1: ("not_replayed", 1), 2: ("not_replayed", 1), 3: ("replayed", 3), 4: ("replayed", 3),
                      5: ("not_replayed", 1), 6: ("not_replayed", 1), 7: ("not_replayed", 1)}
    assert r["passes"] == {"3": 3, "4": 3}                          # no PASS callbacks without replay
    assert outs[5]["reason"].startswith("refused") and outs[6]["reason"].startswith("refused")
    assert "refused: pass count 0 needs a continue callback" in r["_stderr"]


def test_continue_callback_rules():
    r = child("""
asked = {}
plans = {1: (4, lambda d: True), 2: (4, lambda d: d.current_pass < 1), 3: (2, lambda d: True),
         4: (0, lambda d: d.current_pass < 5)}
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count, c = plans[d.dispatch_id]
        def wrapped(data, c=c):
            asked.setdefault(data.dispatch_id, []).append(data.current_pass)
            return c(data)
        d.continue_callback = wrapped
replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
for k in range(4):
    launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
result(asked=asked, y=download(dy, n).tolist(), outcomes=outcome_dicts())
""")
    import numpy as np
    outs = {o["dispatch_id"]: o["executed"] for o in r["outcomes"]}
    assert outs == {1: 4, 2: 2, 3: 2, 4: 6}
    # never asked after the last pass of a fixed loop; True cannot extend it; False ends it early
    assert r["asked"] == {"1": [0, 1, 2], "2": [0, 1], "3": [0], "4": [0, 1, 2, 3, 4, 5]}
    assert r["y"] == (3.0 + 4 * np.arange(1000, dtype=np.float32)).tolist()   # 4 dispatches, once each


def test_user_data_is_set_at_config_and_fresh_for_every_pass():
    r = child("""
log = []
def cb(op, phase, d):
    log.append([op, phase, d.dispatch_id, d.current_pass, d.user_data])
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
        d.user_data = {1: "config-1", 2: None}[d.dispatch_id]
    if op == "PASS" and phase == "ENTER":
        d.user_data = f"pass-{d.current_pass}"       # visible until this pass ends, not after
def cont(d):
    log.append(["CONT", "", d.dispatch_id, d.current_pass, d.user_data])
    return True
replay.configure(cb, cont)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
result(log=log)
""")
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


def test_localized_context_control_and_one_configuration():
    r = child("""
A, B = replay.Context("A"), replay.Context("B")
A.start()
errors, views, records = [], [], []
replay.DispatchCounting(A, ["WORKITEMS"], lambda rec: records.append(rec.replay_pass))
def try_(what, fn):
    try:
        fn()
    except replay.ReplayError as e:
        errors.append(what)
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER":
        if d.current_pass == 0:
            A.stop()
            try_("start B", B.start)                 # B was not active when the loop began
        if d.current_pass == 1:
            other = []
            t = threading.Thread(target=lambda: other.append(A.active)); t.start(); t.join()
            views.append(["pass1 before", A.active, other[0]])   # sticky here, global elsewhere
            A.start(); A.stop(); A.start()           # last write wins
            views.append(["pass1 after", A.active])
    if op == "PASS" and phase == "EXIT":
        try_(f"toggle in EXIT {d.current_pass}", A.stop)
replay.configure(cb)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s, [dy, dx, 1.0, n])
replay.flush()
after = [A.globally_active, B.globally_active, A.active]
try_("configure twice", lambda: replay.configure(cb))
A.stop()
result(errors=errors, views=views, records=sorted(records), after=after, configured=replay.is_configured(),
       global_stop=A.globally_active)
""")
    assert r["errors"] == ["start B", "toggle in EXIT 0", "toggle in EXIT 1", "toggle in EXIT 2",
                           "configure twice"]
    assert r["views"] == [["pass1 before", False, True], ["pass1 after", True]]
    assert r["records"] == [1, 2]          # A stopped at pass 0, started again at pass 1 (sticky)
    assert r["after"] == [True, False, True]          # global state never modified by the loop
    assert r["configured"] is True and r["global_stop"] is False


def test_without_replay_no_interceptor_and_module_globals():
    r = child("""
from hostside import commands
before = [replay.is_configured(), commands._INTERCEPT is None]
s = hip.hipStreamCreate()
launch("bump", 1, 16, s, [3])
launch("bump", 1, 16, s, [2])
hip.hipStreamSynchronize(s)
p0, size = hip.hipModuleGetGlobal(m, "counter")
hip.hipSetDevice(1)
p1, _ = hip.hipModuleGetGlobal(m, "counter")
launch("bump", 1, 16, None, [1])
hip.hipDeviceSynchronize()
try:
    hip.hipModuleGetGlobal(m, "nope")
    err = None
except hip.HipError as e:
    err = e.name
result(before=before, after=[replay.is_configured(), commands._INTERCEPT is None],
       c0=download(p0, 16, np.int32).tolist(), c1=download(p1, 16, np.int32).tolist(), size=size,
       distinct=p0 != p1, err=err)
""")
    assert r["before"] == [False, True] and r["after"] == [False, True]
    assert r["c0"] == [2, 2, 1] + [0] * 13 and r["c1"] == [1] + [0] * 15
    assert r["size"] == 64 and r["distinct"] and r["err"] == "hipErrorNotFound"


# -- isolation ---------------------------------------------------------------------------------------
def test_ordinary_dispatch_from_another_thread_waits_for_the_window():
    r = child("""
in_window = threading.Event()
marks = {}
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        in_window.set()
    if op == "PASS" and phase == "EXIT":
        time.sleep(0.25)
        marks["last_exit"] = time.monotonic_ns()
replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))
def other():
    in_window.wait(30)
    marks["other_launch"] = time.monotonic_ns()
    launch("stamp", 1, 1, s2, [dout, 0])            # an ordinary dispatch on the same agent
    marks["other_returned"] = time.monotonic_ns()
    hip.hipStreamSynchronize(s2)
t = threading.Thread(target=other); t.start()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
t.join(30)
stamp = int(download(dout, 4, np.uint64)[0])
result(marks=marks, stamp=stamp, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
       status=[o.status for o in replay.outcomes()])
""")
    m = r["marks"]
    assert r["ok"]
    assert m["other_launch"] < m["last_exit"]                # it was submitted while the window ran
    assert m["other_returned"] > m["last_exit"]              # ... and waited for the window
    assert r["stamp"] > m["last_exit"]                       # it ran on the device after it
    assert sorted(r["status"]) == ["not_replayed", "replayed"]


def test_kernel_in_flight_on_a_sibling_stream_finishes_before_snap():
    r = child("""
marks = {}
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 2
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        marks["pass0"] = time.monotonic_ns()
replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))
launch("span", 1, 1, s2, [dout, 0, 0.6])             # in flight on a sibling stream of agent 0
t0 = time.monotonic_ns()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
hip.hipDeviceSynchronize()
span = download(dout, 4, np.uint64).tolist()
result(marks=marks, t0=t0, span=span, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
       engines=[s1.vgpu.queue.engine, s2.vgpu.queue.engine])
""")
    start, end = r["span"][0], r["span"][1]
    assert r["engines"][0] != r["engines"][1]
    assert start > 0 and end > 0                              # its writes survived (not restored away)
    assert r["marks"]["pass0"] > end                          # snap() came after the sibling finished
    assert r["ok"]


def test_replays_on_two_agents_overlap():
    r = child("""
spans, go = {}, threading.Barrier(2)
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
    if op == "PASS" and phase == "ENTER":
        spans.setdefault(d.agent, [time.monotonic_ns(), 0])
        time.sleep(0.15)
    if op == "PASS" and phase == "EXIT":
        spans[d.agent][1] = time.monotonic_ns()
replay.configure(cb)
ok = {}
def work(dev):
    hip.hipSetDevice(dev)
    s = hip.hipStreamCreate()
    dx, dy = upload(x), upload(y0)
    go.wait(30)
    launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
    ok[dev] = download(dy, n).tolist() == (y0 + 2 * x).tolist()
ts = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
[t.start() for t in ts]; [t.join(60) for t in ts]
result(spans=spans, ok=ok, outcomes=outcome_dicts())
""")
    (a0, a1), (b0, b1) = r["spans"]["0"], r["spans"]["1"]
    assert a0 < b1 and b0 < a1, r["spans"]                    # the two windows overlap in time
    assert r["ok"] == {"0": True, "1": True}
    outs = r["outcomes"]
    assert sorted(o["agent"] for o in outs) == [0, 1] and all(o["status"] == "replayed" for o in outs)
    # agent-scoped snapshots: each covers only its own agent's two buffers (+ the module global)
    assert all(o["regions"] == 3 for o in outs)


PERSISTENT = """
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 3
replay.configure(cb, policy=POLICY, agent_drain_timeout_s=0.4, queue_sync_slice_s=0.2, pass_drain_slices=2)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(4, np.uint64))
rt = s1.vgpu.rt
print("CPS " + json.dumps([ag.cp_pid for ag in rt.agents]), flush=True)
launch("span", 1, 1, s2, [dout, 0, 3.0])          # a persistent kernel on a sibling queue
t0 = time.monotonic()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
took = time.monotonic() - t0
hip.hipStreamSynchronize(s1)
result(took=took, ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), outcomes=outcome_dicts())
"""


def test_agent_drain_runs_out_decline():
    r = child("POLICY = 'decline'\n" + PERSISTENT)
    o = r["outcomes"][-1]
    assert o["status"] == "declined" and o["reason"].startswith("agent_drain_stuck")
    assert o["executed"] == 1 and r["ok"]                     # the dispatch ran once
    assert r["took"] < 2.5                                    # did not wait for the persistent kernel
    assert "agent_drain_stuck" in r["_stderr"]                # the reason is reported


def test_agent_drain_runs_out_fatal_aborts_the_process():
    import subprocess
    from conftest import child_env
    code = PRELUDE + "POLICY = 'fatal'\n" + PERSISTENT
    p = subprocess.Popen([sys.executable, "-c", code], env=child_env(), cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == -signal.SIGABRT, (p.returncode, err)
    assert "hdemu replay FATAL: replay_drain_agent_or_fatal" in err
    assert "RESULT" not in out
    # the orphaned command processors notice their supervisor is gone; then sweep its segments
    cps = json.loads(next(line for line in out.splitlines() if line.startswith("CPS "))[4:])
    deadline = time.monotonic() + 20
    while any(pid_alive(c) for c in cps) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(c) for c in cps)
    sweep(only_pid=p.pid)
    assert not [n for n, pid, _t in list_segments() if pid == p.pid]


def test_queue_drain_and_pass_drain_run_out_decline():
    r = child("""
enters = []
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 1 if d.user_data is None and d.kernel == "span" and d.grid[0] == 2 else 3
    if op == "PASS" and phase == "ENTER":
        enters.append((d.kernel, d.current_pass))
replay.configure(cb, policy="decline", queue_sync_slice_s=0.2, queue_drain_slices=2, pass_drain_slices=2)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dout = upload(np.zeros(8, np.uint64))
# a replayed kernel that outlives the per-pass drain: no second pass, no restore
launch("span", 1, 1, s, [dout, 0, 1.0])
sig1 = s.vgpu.last_signal
v_after_launch = sig1.load()
hip.hipStreamSynchronize(s)
v_after_sync = sig1.load()
# an earlier (not replayed) kernel on the same queue outlives the queue drain
hip.hipModuleLaunchKernel(F("span"), 1, 1, 1, 2, 1, 1, 0, s, [dout, 1, 1.0])
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
result(enters=enters, v=[v_after_launch, v_after_sync], ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(),
       outcomes=outcome_dicts())
""")
    outs = r["outcomes"]
    assert [(o["kernel"], o["status"], o["reason"].split(" ")[0], o["executed"]) for o in outs] == [
        ("span", "declined", "pass_drain_stuck", 1), ("span", "not_replayed", "pass", 1),
        ("axpy", "declined", "queue_drain_stuck", 1)]
    assert r["enters"] == [["span", 0]]                 # the stuck pass was the last one
    assert r["v"] == [1, 0]                             # fired once, by the stuck pass's completion
    assert r["ok"]
    assert "queue sync slice 1/2 (0.2 s) expired; 1 kernel(s) still active" in r["_stderr"]


def test_reentrant_dispatch_is_declined_and_never_deadlocks():
    r = child("""
state = {"cfg": 0, "pass": 0, "rec": 0}
ctx = replay.Context("c"); ctx.start()
def on_record(rec):                                   # runs on the async-handler thread
    if rec.kernel == "axpy" and not state["rec"]:
        state["rec"] = 1
        launch("inc", 1, 1, s2, [dc, 1])
replay.DispatchCounting(ctx, ["WAVEFRONTS"], on_record)
def cb(op, phase, d):
    if d.kernel != "axpy":
        return
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
        if not state["cfg"]:
            state["cfg"] = 1
            launch("inc", 1, 1, s2, [dc, 1])          # from CONFIG ENTER
    if op == "PASS" and phase == "ENTER" and d.current_pass == 2 and not state["pass"]:
        state["pass"] = 1
        launch("inc", 1, 1, s1, [dc, 1])              # same stream, writer lock held by this thread
        launch("inc", 1, 1, s2, [dc, 1])              # sibling stream of the same agent
replay.configure(cb, policy="decline")
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy, dc = upload(x), upload(y0), upload(np.zeros(4, np.int32))
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
hip.hipDeviceSynchronize()
replay.flush()
hip.hipDeviceSynchronize()
result(ok=download(dy, n).tolist() == (y0 + 2 * x).tolist(), c=int(download(dc, 4, np.int32)[0]),
       outcomes=outcome_dicts())
""")
    outs = r["outcomes"]
    assert r["ok"]
    reentrant = [o for o in outs if o["status"] == "declined"]
    assert len(reentrant) == 4 and all(o["reason"] == "reentrant_dispatch" and o["kernel"] == "inc"
                                       for o in reentrant)
    assert [o["status"] for o in outs if o["kernel"] == "axpy"] == ["replayed"]
    assert r["c"] >= 1                                        # they ran (a restore may revert some: the gap)


def test_declines_untracked_memory_footprint_budget_snapshot_failed():
    r = child("""
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 4
replay.configure(cb, policy="decline", footprint_budget=64 << 10)
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
ph = hip.hipHostMalloc(4 * n)
hip.host_array(ph, np.float32, n)[:] = y0
launch("axpy", 4, 256, s, [ph, dx, 2.0, n])          # pinned host memory is not snapshotted
hip.hipStreamSynchronize(s)
pinned_ok = hip.host_array(ph, np.float32, n).tolist() == (y0 + 2 * x).tolist()
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])          # fits the budget: replayed
big = hip.hipMalloc(1 << 20)
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])          # the footprint now exceeds the budget
replay._service.footprint_budget = 0
from hostside import _replay_state
def boom(*a):
    raise MemoryError("no room for the snapshot")
_replay_state._Agent.snap = boom
launch("axpy", 4, 256, s, [dy, dx, 2.0, n])
hip.hipStreamSynchronize(s)
result(pinned_ok=pinned_ok, ok=download(dy, n).tolist() == (y0 + 6 * x).tolist(), outcomes=outcome_dicts())
""")
    outs = r["outcomes"]
    assert r["pinned_ok"] and r["ok"]
    assert [(o["status"], o["reason"].split(" ")[0], o["executed"]) for o in outs] == [
        ("declined", "untracked_memory", 1), ("replayed", "", 4), ("declined", "footprint_budget", 1),
        ("declined", "snapshot_failed", 1)]
    assert outs[2]["footprint_bytes"] > 64 << 10
    assert "untracked_memory" in r["_stderr"] and "footprint_budget" in r["_stderr"]


def test_a_faulting_pass_fails_the_stream_not_the_process():
    r = child("""
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER":
        d.replay_pass_count = 3
replay.configure(cb)
s = hip.hipStreamCreate()
dc = upload(np.zeros(4, np.int32))
launch("overrun", 1, 1, s, [dc, 4])
try:
    hip.hipStreamSynchronize(s)
    err = None
except hip.HipError as e:
    err = e.name
s2 = hip.hipStreamCreate()                          # the agent still replays on other streams
dx, dy = upload(x), upload(y0)
launch("axpy", 4, 256, s2, [dy, dx, 2.0, n])
y = np.empty(n, np.float32)
hip.hipMemcpyAsync(y, dy, 4 * n, hip.hipMemcpyDeviceToHost, s2)   # not hipDeviceSynchronize: s failed
result(err=err, ok=y.tolist() == (y0 + 2 * x).tolist(), outcomes=outcome_dicts())
""")
    outs = r["outcomes"]
    assert r["err"] == "hipErrorIllegalAddress"
    assert (outs[0]["status"], outs[0]["executed"]) == ("failed", 1)
    assert (outs[1]["status"], outs[1]["executed"]) == ("replayed", 3) and r["ok"]


# -- the documented gap ------------------------------------------------------------------------------
def test_sdma_copy_inside_a_replay_window_is_reverted_by_restore():
    """HAZARD (docs/replay.md): an async SDMA copy is not a kernel dispatch, so it does not pass the
    replay gate. Issued by another thread inside a replay window, it lands between snap() and
    restore() and is silently reverted, although the copy itself completed successfully."""
    r = child("""
go, done = threading.Event(), threading.Event()
def cb(op, phase, d):
    if op == "CONFIG" and phase == "ENTER" and d.kernel == "axpy":
        d.replay_pass_count = 2
    if op == "PASS" and phase == "ENTER" and d.current_pass == 0:
        go.set()
        done.wait(30)                          # the other thread's copy completes inside the window
replay.configure(cb)
s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
dw = upload(np.zeros(n, np.float32))
src = hip.hipHostMalloc(4 * n)
hip.host_array(src, np.float32, n)[:] = 7.0
def copier():
    go.wait(30)
    hip.hipMemcpyAsync(dw, src, 4 * n, hip.hipMemcpyHostToDevice, s2)    # SDMA, ungated
    hip.hipStreamSynchronize(s2)
    done.set()
t = threading.Thread(target=copier); t.start()
launch("axpy", 4, 256, s1, [dy, dx, 2.0, n])
t.join(30)
lost = download(dw, n).tolist()
hip.hipMemcpyAsync(dw, src, 4 * n, hip.hipMemcpyHostToDevice, s2)        # the same copy, no window
hip.hipStreamSynchronize(s2)
result(copied=done.is_set(), lost=lost, later=download(dw, n).tolist(),
       ok=download(dy, n).tolist() == (y0 + 2 * x).tolist())
""")
    assert r["copied"] and r["ok"]
    assert r["lost"] == [0.0] * 1000          # the completed copy was reverted by restore()
    assert r["later"] == [7.0] * 1000


# -- the counter unit and the counter-collection tool ------------------------------------------------
def test_counter_slots_limit_what_the_device_reads():
    r = child("""
got = []
ctx = replay.Context("c"); ctx.start()
replay.DispatchCounting(ctx, ["WORKGROUPS", "WAVEFRONTS", "WORKITEMS", "INACTIVE_LANES", "KERNARG_BYTES",
                              "POINTER_ARGS"], lambda rec: got.append(rec.values))
s = hip.hipStreamCreate()
dx, dy = upload(x), upload(y0)
launch("axpy", 3, 100, s, [dy, dx, 2.0, 250])
hip.hipStreamSynchronize(s)
replay.flush()
result(got=got, configured=replay.is_configured(),
       ok=download(dy, n)[:250].tolist() == (y0 + 2 * x)[:250].tolist())
""")
    assert r["ok"] and r["configured"] is False               # counting alone needs no replay service
    assert r["got"] == [{"WORKGROUPS": 3, "WAVEFRONTS": 6, "WORKITEMS": 300, "INACTIVE_LANES": 84,
                         "KERNARG_BYTES": None, "POINTER_ARGS": None}]     # 4 slots: the rest not read


PROGRAM = f"""
import numpy as np
from hostside import hip
m = hip.hipModuleLoad({KFILE!r})
F = lambda k: hip.hipModuleGetFunction(m, k)
n = 3000
x = np.arange(n, dtype=np.float32)
dx, dy, dz = (hip.hipMalloc(4 * n) for _ in range(3))
hip.hipMemcpy(dx, x, 4 * n, hip.hipMemcpyHostToDevice)
hip.hipMemset(dy, 0, 4 * n)
hip.hipMemset(dz, 0, 4 * n)
s = hip.hipStreamCreate()
hip.hipModuleLaunchKernel(F("axpy"), 12, 1, 1, 256, 1, 1, 0, s, [dy, dx, 2.0, n])
hip.hipModuleLaunchKernel(F("axpy2"), 24, 1, 1, 128, 1, 1, 64, s, [dy, dz, dx, 0.5, n])
hip.hipModuleLaunchKernel(F("bump"), 1, 1, 1, 16, 1, 1, 0, s, [16])
hip.hipModuleLaunchKernel(F("scale"), 5, 2, 1, 100, 3, 1, 0, s, [dz, 3.0, n])
hip.hipModuleLaunchKernel(F("grid_ids"), 7, 1, 1, 64, 1, 1, 0, s, [dz])
hip.hipStreamSynchronize(s)
y = np.empty(n, np.float32)
hip.hipMemcpy(y, dy, 4 * n, hip.hipMemcpyDeviceToHost)
assert np.array_equal(y, 2.5 * x)
print("PROGRAM OK")
"""


def test_counter_tool_collects_every_counter_and_matches_a_single_wide_pass(tmp_path):
    import csv
    import subprocess
    from conftest import child_env
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    wide = tmp_path / "wide.toml"
    wide.write_text(f"[platform]\ncounter_slots = {C.N_COUNTERS}\nagents = 1\n")
    narrow = tmp_path / "narrow.toml"
    narrow.write_text("[platform]\nagents = 1\n")
    tables = {}
    for name, cfg in (("narrow", narrow), ("wide", wide)):
        out = tmp_path / f"{name}.csv"
        p = subprocess.run([sys.executable, "-m", "hostside.cli", "counters", "-o", str(out), "--",
                            "python", str(prog)], env=child_env(HDEMU_CONFIG=str(cfg)), cwd=ROOT,
                           capture_output=True, text=True, timeout=90)
        assert p.returncode == 0 and "PROGRAM OK" in p.stdout, p.stderr
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


def test_graph_launch_under_replay_warns_once_runs_once_and_is_reported():
    r = child("""
import warnings
replay.configure(lambda op, phase, d: setattr(d, "replay_pass_count", 3) if (op, phase) == ("CONFIG", "ENTER") else None)
s = hip.hipStreamCreate()
dy = upload(np.zeros(n, np.float32))
g = hip.hipGraphCreate()
p = hip.hipKernelNodeParams(func=F("axpy"), gridDim=(4, 1, 1), blockDim=(256, 1, 1), sharedMemBytes=0,
                            kernelParams=[dy, upload(x), 1.0, n])
hip.hipGraphAddKernelNode(g, [], p)
ex = hip.hipGraphInstantiate(g)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    hip.hipGraphLaunch(ex, s)
    hip.hipGraphLaunch(ex, s)
hip.hipStreamSynchronize(s)
result(y=download(dy, n).tolist(), warns=[str(x.message) for x in w if "replay" in str(x.message)],
       outcomes=outcome_dicts())
""")
    import numpy as np
    assert r["y"] == (2 * np.arange(1000, dtype=np.float32)).tolist()    # two launches, each ran once
    assert len(r["warns"]) == 1
    graph_outcomes = [o for o in r["outcomes"] if o["reason"] == "graph_launch"]
    assert len(graph_outcomes) == 2 and all(o["status"] == "declined" for o in graph_outcomes)
