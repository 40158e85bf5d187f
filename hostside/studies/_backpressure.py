"""Study ``backpressure``: a DFX pool-size sweep, per-lane policies against common_mode.

The trade the DFX document describes (docs/profiling.md, *The writer*): when the host falls behind
one lane, a per-lane policy confines the artifact to the stalled lane (``block``: that lane waits and
its AicpuTask ``finish_time`` is inflated; ``drop``: it never waits and loses records), while
``common_mode`` makes every lane park with it: one aligned gap on every row, no drops.

Each point is an embedded platform in real mode (1 agent, 2 engines, 2 lanes: each engine's task ring
feeds its own lane), two streams of empty kernels, one per engine, so each lane profiles one stream.
Lane 0's pools are shrunk to ``pool`` buffers (``pool_overrides``), tiny buffers make every switch go
to the host; lane 1 keeps the default pool. Measured from the run's outputs: per-lane stall time
(``stalls.json``), drops (``accounting.json``), and finish_time inflation: AicpuTask ``finish_time``
(what the lane observed) minus the AicoreTask ``end_time`` of the same task (the engine's ground
truth), joined on ``reg_task_id`` (``dfx.swimlane_join``), as a ``shm_layout.histogram`` per lane.
"""
from __future__ import annotations

import json
import os

import numpy as np

from hostside import dfx, hip, hsa
from shm_layout import histogram as H

from ._common import Progress, Study

__all__ = ["run"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("")
def empty(ctx):
    pass
'''
CLAIM = ("per-lane policy confines the stall to the shrunk lane (lane 1 stall ~0), common_mode spreads "
         "it to every lane; block and common_mode drop nothing")
RECORDS_PER_BUFFER = 16


def _cell(st: Study, policy: str, pool: int, launches: int) -> dict:
    out = st.path(f"dfx-{policy}-{pool}")
    st.files.remove(f"dfx-{policy}-{pool}")
    st.files.append(f"dfx-{policy}-{pool}/")
    cfg = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 8,
           "profiling": {"enabled": True, "lanes": 2, "mode": "real", "subsystems": ["chip_swimlane"],
                         "policy": policy, "block_timeout_s": 0.5, "backpressure_timeout_s": 20.0,
                         "records_per_buffer": {"aicpu_task": RECORDS_PER_BUFFER,
                                                "aicore_task": RECORDS_PER_BUFFER},
                         "buffers_per_pool": 8, "pool_overrides": {"0": pool}, "output_dir": out}}
    hsa.configure(cfg)
    try:
        mod = hip.hipModuleLoadData(KERNELS, "studies_backpressure.py")
        f = hip.hipModuleGetFunction(mod, "empty")
        streams = [hip.hipStreamCreate() for _ in range(2)]
        for i in range(launches):
            for s in streams:
                hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
            if i % 64 == 63:
                for s in streams:
                    hip.hipStreamSynchronize(s)
        for s in streams:
            hip.hipStreamSynchronize(s)
            hip.hipStreamDestroy(s)
    finally:
        hip.hipDeviceReset()              # stops the platform: lanes flush, collector writes
        hsa.configure(None)
    with open(os.path.join(out, "accounting.json")) as fh:
        acc = json.load(fh)
    with open(os.path.join(out, "stalls.json")) as fh:
        stalls = json.load(fh)
    sw = dfx.swimlane_join(dfx.load_output(out))
    rows = []
    for lane in range(2):
        mine = [s for s in stalls if s["lane"] == lane]
        infl = H.new(1)[0]
        sel = sw[sw["thread"] == lane]
        H.record(infl, np.maximum(sel["finish_time"].astype(np.int64) - sel["end_time"].astype(np.int64), 0))
        s = H.summary(infl, 1e3)
        pools = [p for p in acc["pools"] if p["thread"] == lane and p["kind"] in ("aicpu_task", "aicore_task")]
        rows.append({"policy": policy, "pool_lane0": pool, "lane": lane,
                     "stalls": len(mine), "stall_ms": sum(x["end_ns"] - x["start_ns"] for x in mine) / 1e6,
                     "common_stalls": sum(1 for x in mine if x["gate"] == "common"),
                     "expired": sum(1 for x in mine if x["outcome"] == "expired"),
                     "records": sum(p["total"] for p in pools), "dropped": sum(p["dropped"] for p in pools),
                     "collected": sum(p["collected"] for p in pools), "tasks_joined": len(sel),
                     "inflation_p50_us": s["p50"], "inflation_p99_us": s["p99"], "inflation_max_us": s["max"],
                     "inflation_mean_us": s["mean"], "balanced": acc.get("balanced")})
    return rows


def run(st: Study) -> dict:
    policies = ("block", "common_mode") if st.small else ("block", "drop", "common_mode")
    pools = (1, 8) if st.small else (1, 2, 4, 8)
    # the small run: both policies with lane 0 shrunk to one buffer, and block unshrunk as the baseline
    cells = ([("block", 1), ("common_mode", 1), ("block", 8)] if st.small
             else [(pol, n) for pol in policies for n in pools])
    launches = 200 if st.small else 3000
    prog = Progress("backpressure", len(cells))
    rows = []
    try:
        for pol, pool in cells:
            r = _cell(st, pol, pool, launches)
            rows += r
            prog.step(f"{pol} pool {pool}: stall ms lane0 {r[0]['stall_ms']:.1f} lane1 {r[1]['stall_ms']:.1f}, "
                      f"dropped {r[0]['dropped']}+{r[1]['dropped']}")
    finally:
        prog.close()
    st.write_csv("backpressure.csv", rows)
    _plot(st, rows, policies, pools)
    shrunk = min(pools)

    def at(pol, lane, key, pool=shrunk):
        return next((r[key] for r in rows if r["policy"] == pol and r["lane"] == lane and r["pool_lane0"] == pool),
                    float("nan"))

    figures = {f"{pol}_{k}_lane{ln}": at(pol, ln, k) for pol in policies for ln in (0, 1)
               for k in ("stall_ms", "dropped", "inflation_p99_us")}
    figures["pool_lane0"] = shrunk
    held = (at("block", 1, "stall_ms") <= 0.1 * max(at("block", 0, "stall_ms"), 1e-9)
            and at("common_mode", 1, "stall_ms") > 0.1 * at("common_mode", 0, "stall_ms")
            and at("block", 0, "dropped") == 0 and at("common_mode", 0, "dropped") == 0)
    return st.finish(figures, CLAIM, bool(held))


def _plot(st: Study, rows, policies, pools) -> None:
    fig, ax = st.figure(3, size=(10.0, 3.9))
    for a, key, label in ((ax[0][0], "stall_ms", "stall time (ms)"), (ax[0][1], "dropped", "records dropped"),
                          (ax[0][2], "inflation_mean_us", "finish_time inflation, mean (us)")):
        for i, pol in enumerate(policies):
            for lane, mk in ((0, "o-"), (1, "s--")):
                sub = [r for r in rows if r["policy"] == pol and r["lane"] == lane]
                if not sub:
                    continue
                a.plot([r["pool_lane0"] for r in sub], [r[key] for r in sub], mk, color=f"C{i}",
                       label=f"{pol} lane {lane}" + (" (shrunk)" if lane == 0 else ""))
        a.set_xscale("log", base=2)
        a.set_xlabel("lane 0 buffers per pool")
        a.set_ylabel(label)
        if key == "stall_ms":
            a.set_yscale("symlog", linthresh=0.1)
            a.set_ylim(bottom=0)
        elif key.startswith("inflation"):
            a.set_yscale("log")
        a.grid(True, which="both", alpha=0.3)
    ax[0][0].legend(fontsize=6)
    st.save(fig, "backpressure.png", "DFX backpressure: lane 0's pool shrunk; per-lane policy vs common_mode")
