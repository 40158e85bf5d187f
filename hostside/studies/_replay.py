"""Study ``replay``: bytes moved and time against footprint x passes, and the cost of the copy fence.

The claims (docs/replay.md): a replay window snapshots the agent's footprint once and restores it
before every pass but the first, so the bytes it moves are dispatches x footprint x passes; the time
follows the bytes at the copy bandwidth (``scripts/bench_replay.py``: snapshot and restore near the
copy ceiling). The copy fence (``replay.configure(copy_fence=...)``) holds async copies out of
windows: it costs a window little on its own, and makes copies issued during windows wait.

The service can be configured once per process, so each fence setting runs in a worker process of
its own (``python -m hostside.studies _worker replay SPEC``), on an embedded one-agent platform.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time

from hostside import hip, hsa, replay
from hostside.platform import write_trace

from ._common import Progress, Study

__all__ = ["run", "worker"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("")
def empty(ctx):
    pass
'''
KIB, MIB = 1 << 10, 1 << 20
CLAIM = ("replay moves dispatches x footprint x passes bytes for passes >= 2 (within 1 %; one pass moves "
         "nothing), time linear in the bytes")


def _grid(small: bool):
    if small:
        return (64 * KIB, 4 * MIB), (1, 2, 4), 2
    return (64 * KIB, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB), (1, 2, 4, 8), 6


def worker(spec: dict) -> dict:
    """One process: the footprint x passes grid (with the fence as ``spec['fence']``), then windows
    with and without async copies running beside them on another stream."""
    passes = {"n": 1}

    def cb(op, phase, d):
        if op == replay.CONFIG and phase == replay.ENTER:
            d.replay_pass_count = passes["n"]

    replay.configure(cb, log=lambda line: None, copy_fence=bool(spec["fence"]))
    hsa.configure({"agents": 1, "memory_mib": 160})
    out = {"grid": [], "fence": bool(spec["fence"])}
    try:
        mod = hip.hipModuleLoadData(KERNELS, "studies_replay.py")
        f = hip.hipModuleGetFunction(mod, "empty")
        s = hip.hipStreamCreate()
        for _ in range(300):                   # fill the stream's completion-signal ring first
            hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
        hip.hipStreamSynchronize(s)
        footprints, pass_counts, dispatches = spec["footprints"], spec["passes"], spec["dispatches"]
        if spec["grid"]:
            for fp in footprints:
                buf = hip.hipMalloc(fp)
                hip.hipMemset(buf, 1, fp)
                for n in pass_counts:
                    passes["n"] = n
                    hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])     # warm the window
                    hip.hipStreamSynchronize(s)
                    before = replay.statistics()
                    t = time.perf_counter_ns()
                    for _ in range(dispatches):
                        hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
                    hip.hipStreamSynchronize(s)
                    wall = time.perf_counter_ns() - t
                    a = replay.statistics()
                    out["grid"].append({
                        "footprint_bytes": fp, "passes": n, "dispatches": dispatches,
                        "windows": a.windows - before.windows,
                        "snap_bytes": a.snap_bytes - before.snap_bytes,
                        "restore_bytes": a.restore_bytes - before.restore_bytes,
                        "snap_ms": (a.snap_ns - before.snap_ns) / 1e6,
                        "restore_ms": (a.restore_ns - before.restore_ns) / 1e6, "wall_ms": wall / 1e6})
                hip.hipFree(buf)
        out["fence_rows"] = _fence_cost(f, s, passes, spec["fence_windows"])
        hip.hipStreamDestroy(s)
        if spec.get("trace"):
            write_trace(hsa.runtime().pm, spec["trace"])
    finally:
        hip.hipDeviceReset()
        hsa.configure(None)
    return out


def _fence_cost(f, s, passes, windows: int) -> list[dict]:
    """Windows of 2 passes on a 64 KiB footprint, alone and with a thread issuing 256 KiB async
    host-to-device copies on its own stream the whole time: window time and copies done."""
    rows = []
    small = hip.hipMalloc(64 * KIB)
    dst = hip.hipMalloc(256 * KIB)
    src = hip.hipHostMalloc(256 * KIB)
    passes["n"] = 2
    for copies in (False, True):
        stop = threading.Event()
        done = [0]

        def copier():
            cs = hip.hipStreamCreate()
            while not stop.is_set():
                hip.hipMemcpyAsync(dst, src, 256 * KIB, hip.hipMemcpyHostToDevice, cs)
                hip.hipStreamSynchronize(cs)
                done[0] += 1
            hip.hipStreamDestroy(cs)

        th = threading.Thread(target=copier, daemon=True) if copies else None
        if th:
            th.start()
        per = []
        t0 = time.perf_counter()
        for _ in range(windows):
            t = time.perf_counter_ns()
            hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
            hip.hipStreamSynchronize(s)
            per.append((time.perf_counter_ns() - t) / 1e3)
        elapsed = time.perf_counter() - t0
        stop.set()
        if th:
            th.join(30)
        per.sort()
        rows.append({"copies_beside": copies, "window_p50_us": statistics.median(per),
                     "window_p90_us": per[int(0.9 * (len(per) - 1))], "copies_per_s": done[0] / elapsed})
    hip.hipFree(small)
    hip.hipFree(dst)
    hip.hipHostFree(src)
    return rows


def _spawn(spec: dict) -> dict:
    r = subprocess.run([sys.executable, "-m", "hostside.studies", "_worker", "replay", json.dumps(spec)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    lines = r.stdout.strip().splitlines()
    if r.returncode or not lines:
        raise RuntimeError(f"replay worker failed (exit {r.returncode}): {r.stderr.strip()[-800:]}")
    return json.loads(lines[-1])


def run(st: Study) -> dict:
    footprints, pass_counts, dispatches = _grid(st.small)
    prog = Progress("replay", 2)
    base = {"footprints": footprints, "passes": pass_counts, "dispatches": dispatches,
            "fence_windows": 20 if st.small else 300}
    try:
        on = _spawn(dict(base, fence=True, grid=True, trace=st.path("trace.json")))
        prog.step(f"fence on: {len(on['grid'])} footprint x passes cells, fence cost")
        off = _spawn(dict(base, fence=False, grid=False))
        prog.step("fence off: fence cost")
    finally:
        prog.close()
    rows = []
    for g in on["grid"]:
        moved = g["snap_bytes"] + g["restore_bytes"]
        # one pass is no replay: the dispatch runs once, nothing is snapshotted
        predicted = g["dispatches"] * g["footprint_bytes"] * g["passes"] if g["passes"] > 1 else 0
        ms = g["snap_ms"] + g["restore_ms"]
        rows.append(dict(g, bytes_moved=moved, predicted_bytes=predicted,
                         moved_vs_predicted=moved / predicted if predicted else float(moved == 0),
                         copy_gbps=moved / ms / 1e6 if ms > 0 else float("nan")))
    st.write_csv("replay.csv", rows)
    fence = [dict(r, fence=True) for r in on["fence_rows"]] + [dict(r, fence=False) for r in off["fence_rows"]]
    st.write_csv("copy_fence.csv", fence)

    fig, ax = st.figure(3, size=(10.0, 3.9))
    a = ax[0][0]
    for n in pass_counts:
        sub = [r for r in rows if r["passes"] == n and r["predicted_bytes"]]
        if not sub:
            continue
        a.loglog([r["predicted_bytes"] for r in sub], [r["bytes_moved"] for r in sub], "o", label=f"{n} passes")
    lo = min(r["predicted_bytes"] for r in rows if r["predicted_bytes"])
    hi = max(r["predicted_bytes"] for r in rows)
    a.loglog([lo, hi], [lo, hi], "k--", lw=0.8, label="dispatches x footprint x passes")
    a.set_xlabel("dispatches x footprint x passes (bytes)")
    a.set_ylabel("bytes moved (snap + restore)")
    a.legend(fontsize=7)
    a.grid(True, which="both", alpha=0.3)
    b = ax[0][1]
    moved = [r for r in rows if r["bytes_moved"]]
    b.loglog([r["bytes_moved"] for r in moved], [r["snap_ms"] + r["restore_ms"] for r in moved], "o", label="snap+restore")
    b.loglog([r["bytes_moved"] for r in moved], [r["wall_ms"] for r in moved], "x", label="whole launches+sync")
    b.set_xlabel("bytes moved")
    b.set_ylabel("ms")
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=7)
    c = ax[0][2]
    labels = ["fence on", "on, copies\nbeside", "fence off", "off, copies\nbeside"]
    xs = list(range(len(fence)))
    c.bar(xs, [r["window_p50_us"] for r in fence], color=["C0", "C0", "C1", "C1"], label="window p50")
    c.plot(xs, [r["window_p90_us"] for r in fence], "k_", ms=14, label="window p90")
    c.set_xticks(xs, labels, fontsize=6)
    c.set_ylabel("one replayed dispatch, 2 passes (us)")
    c.legend(fontsize=7)
    c.grid(True, axis="y", alpha=0.3)
    st.save(fig, "replay.png", "replay: bytes ~ dispatches x footprint x passes; copy fence")
    ratios = [r["moved_vs_predicted"] for r in rows]
    gbps = [r["copy_gbps"] for r in rows if r["bytes_moved"] >= 4 * MIB]
    f_on = {r["copies_beside"]: r for r in on["fence_rows"]}
    f_off = {r["copies_beside"]: r for r in off["fence_rows"]}
    figures = {"moved_vs_predicted_min": min(ratios), "moved_vs_predicted_max": max(ratios),
               "copy_gbps_median": statistics.median(gbps) if gbps else float("nan"),
               "fence_window_p50_us": f_on[False]["window_p50_us"],
               "nofence_window_p50_us": f_off[False]["window_p50_us"],
               "fence_window_p50_us_with_copies": f_on[True]["window_p50_us"],
               "nofence_window_p50_us_with_copies": f_off[True]["window_p50_us"],
               "fence_copies_per_s": f_on[True]["copies_per_s"], "nofence_copies_per_s": f_off[True]["copies_per_s"]}
    held = all(abs(x - 1) <= 0.01 for x in ratios)
    return st.finish(figures, CLAIM, held)

