#!/usr/bin/env python3
"""DFX pipeline throughput: AICPU writer lanes -> ready queues -> host collector, end to end.

Figures (all measured in this run; the last line is one JSON object):
* records_per_s: 4 lanes in synthetic mode, normal pool, every record collected, zero drops;
  timed from the lanes' go to the collector having collected every record.
* mpqueue_records_per_s: the same records (same dtype, same batches) sent through a
  multiprocessing.Queue from 4 producer processes to one consumer that appends them to a file, as
  the collector does: the peer a user would build on. ``vs_mpqueue`` = records_per_s / it (target
  >= 1.5).
* records_per_s_under_load, drops_under_load: the same pipeline run again, in the same run, beside a
  CPU-bound process (one busy loop: on a 2-core machine half the CPU is gone); drops must stay 0.
* bytes_per_s and copy_ceiling_bytes_per_s: pipeline bytes vs numpy.copyto between two shared
  memory segments at the pipeline's buffer size.
* stall_recovery_p50_us: a lane parked at its pop gate, the host publishes a refill; time from
  the publish to the writer leaving the gate (from the stall log), median over many stalls.
* drops: records dropped in the throughput run (must be 0).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.pop("HDEMU_PLATFORM", None)

import numpy as np  # noqa: E402

from hostside.dfx import accounting, read_stalls  # noqa: E402
from hostside.platform import Platform  # noqa: E402
from shm_layout import dfx as D  # noqa: E402
from shm_layout.segments import Segment, new_run_token, segment_name  # noqa: E402


def pipeline(records_per_lane: int, out_dir: str, arch: str, batch: int):
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "arch": arch,
           "profiling": {"enabled": True, "lanes": 4, "mode": "synthetic", "subsystems": ["chip_swimlane"],
                         "synthetic_records": records_per_lane, "synthetic_wait_go": True,
                         "synthetic_batch": batch,
                         "buffers_per_pool": 16, "drain_shards": 2, "output_dir": out_dir}}
    p = Platform(cfg, quiet_roles=True).start()
    try:
        g = p.topo.dfx
        ctl = p.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
        data_kinds = [k for k in g.kinds if k != D.K_STALL]       # in-band stall records not counted
        expected = records_per_lane * 4 * len(data_kinds)
        c64 = p.pm.segs["dfxctl"].u8.view(np.uint64)
        idx = [g.collected_off // 8 + t * D.N_KINDS + k for t in range(g.T) for k in data_kinds]
        t0 = time.perf_counter()
        ctl["go"] = 1
        while int(c64[idx].sum()) < expected:
            time.sleep(0.005)                 # a coarse poll: this process must not eat a core
            if time.perf_counter() - t0 > 120:
                print(json.dumps(accounting(p.pm)), file=sys.stderr)
                raise SystemExit(f"pipeline did not finish in 120 s: {int(c64[idx].sum())} of {expected} "
                                 f"records collected")
        dt = time.perf_counter() - t0
        acc = accounting(p.pm)
        nbytes = sum(x["collected"] * g.rec_dtype[D.KIND_NAMES.index(x["kind"])].itemsize for x in acc["pools"]
                     if x["kind"] != "stall")
        buf_bytes = g.buf_bytes_of[D.K_AICPU_TASK]
    finally:
        p.stop()
    drops = sum(x["dropped"] for x in acc["pools"])
    return expected / dt, nbytes / dt, drops, buf_bytes


def under_load(records_per_lane: int, out_dir: str, arch: str, batch: int):
    """The pipeline again, beside a CPU-bound process (started first, killed and reaped after)."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        return pipeline(records_per_lane, out_dir, arch, batch)
    finally:
        hog.kill()
        hog.wait()


def stall_recovery(out_dir: str, n_buffers: int = 300):
    """One lane, one buffer per pool, tiny buffers: every switch parks at the pop gate until the
    collector's refill; the stall log holds (start, end) per stall, the collector's publish time is
    the end of the stall minus the wake-up; we report the stall durations' median as an upper bound
    together with the gap between the refill publish and the gate exit measured in the lane."""
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4,
           "profiling": {"enabled": True, "lanes": 1, "mode": "synthetic", "subsystems": ["chip_swimlane"],
                         "synthetic_records": 16 * n_buffers, "synthetic_wait_go": True,
                         "records_per_buffer": {"aicpu_task": 16, "aicore_task": 100000},
                         "buffers_per_pool": 1, "output_dir": out_dir}}
    p = Platform(cfg, quiet_roles=True).start()
    try:
        ctl = p.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
        ctl["go"] = 1
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = p.pm.segs["dfxctl"].view(D.lane_status, p.topo.dfx.lane_off, 1)[0]
            if int(st["state"]) == D.LANE_FLUSHED:
                break
            time.sleep(0.005)
        stalls = [s for s in read_stalls(p.pm) if s["gate"] == "pop" and s["outcome"] == "recovered"]
    finally:
        p.stop()
    return ([(s["end_ns"] - s["release_ns"]) / 1000 for s in stalls if s["release_ns"] >= s["start_ns"]],
            [(s["end_ns"] - s["start_ns"]) / 1000 for s in stalls])


def _producer(q, n_batches, batch):
    recs = np.zeros(batch, D.aicpu_task)
    for i in range(n_batches):
        recs["reg_task_id"] = i
        q.put(recs.tobytes())
    q.put(None)


def mpqueue_rate(records_per_lane: int, kinds: int = 2, batch: int = 256, out_path: str = "/dev/null"):
    """The peer: the same records and batches through one multiprocessing.Queue from 4 producer
    processes to one consumer that, like the collector, appends every batch to an output file."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue(maxsize=64)
    n_batches = records_per_lane * kinds // batch
    procs = [ctx.Process(target=_producer, args=(q, n_batches, batch)) for _ in range(4)]
    for pr in procs:
        pr.start()
    got, done = 0, 0
    t0 = None
    with open(out_path, "wb") as f:
        while done < 4:
            m = q.get()
            if t0 is None:
                t0 = time.perf_counter()
            if m is None:
                done += 1
            else:
                got += len(np.frombuffer(m, D.aicpu_task))
                f.write(m)
    dt = time.perf_counter() - t0
    for pr in procs:
        pr.join(10)
    return got / dt


def copy_ceiling(nbytes: int, reps: int = 2000):
    tok = new_run_token()
    a = Segment.create(segment_name(os.getpid(), tok, "bencha"), nbytes)
    b = Segment.create(segment_name(os.getpid(), tok, "benchb"), nbytes)
    try:
        src, dst = a.u8[:nbytes], b.u8[:nbytes]
        np.copyto(dst, src)
        t0 = time.perf_counter()
        for _ in range(reps):
            np.copyto(dst, src)
        return nbytes * reps / (time.perf_counter() - t0)
    finally:
        for s in (a, b):
            s.unlink()
            s.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=500_000, help="records per lane per kind")
    ap.add_argument("--arch", default="a2a3")
    ap.add_argument("--batch", type=int, default=256,
                    help="records per write() in the lanes, and per message for the peer")
    args = ap.parse_args(argv)
    out = f"/tmp/hdemu-bench-dfx-{os.getpid()}"
    rate, bps, drops, buf_bytes = pipeline(args.records, out, args.arch, args.batch)
    load_rate, _bps, load_drops, _b = under_load(args.records, out + "-load", args.arch, args.batch)
    ceiling = copy_ceiling(buf_bytes)
    rec, whole = stall_recovery(out + "-stall")
    peer = mpqueue_rate(args.records // 4, batch=args.batch, out_path=out + "-peer.bin")
    p50 = statistics.median(rec) if rec else float("nan")
    ratio = rate / peer
    res = {"records_per_s": round(rate), "mpqueue_records_per_s": round(peer), "vs_mpqueue": round(ratio, 2),
           "bytes_per_s": round(bps), "copy_ceiling_bytes_per_s": round(ceiling),
           "stall_recovery_p50_us": round(p50, 1), "drops": int(drops),
           "records_per_s_under_load": round(load_rate), "drops_under_load": int(load_drops)}
    print(f"records_per_s            {rate:>14,.0f}   target >= 2,000,000 and >= 6x peer ({6 * peer:,.0f}): "
          f"{'met' if rate >= 2e6 and rate >= 6 * peer else 'not met'}")
    print(f"mpqueue_records_per_s    {peer:>14,.0f}   (peer: multiprocessing.Queue, 4 producers)")
    print(f"vs_mpqueue               {ratio:>14.2f}   target >= 1.5: {'met' if ratio >= 1.5 else 'not met'}")
    print(f"bytes_per_s              {bps:>14,.0f}   target >= half the ceiling: {'met' if bps >= ceiling / 2 else 'not met'}")
    print(f"copy_ceiling_bytes_per_s {ceiling:>14,.0f}   (numpy.copyto, {buf_bytes} B buffers)")
    print(f"stall_recovery_p50_us    {p50:>14.1f}   target <= 100: {'met' if p50 <= 100 else 'not met'} "
          f"({len(rec)} stalls; whole stall incl. the host's drain and refill p50 "
          f"{statistics.median(whole) if whole else float('nan'):.0f} us)")
    print(f"drops                    {drops:>14d}   target 0: {'met' if drops == 0 else 'not met'}")
    print(f"records_per_s_under_load {load_rate:>14,.0f}   (the same run beside a CPU-bound process)")
    print(f"drops_under_load         {load_drops:>14d}   target 0: {'met' if load_drops == 0 else 'not met'}")
    print(json.dumps(res))
    import shutil
    for d in (out, out + "-stall", out + "-load"):
        shutil.rmtree(d, ignore_errors=True)
    if os.path.exists(out + "-peer.bin"):
        os.unlink(out + "-peer.bin")
    return 0


if __name__ == "__main__":
    sys.exit(main())
