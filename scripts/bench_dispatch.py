"""Dispatch benchmark: what it costs to hand work across the emulated host/device boundary.

Run from the repo root:  .venv/bin/python scripts/bench_dispatch.py [--launches N] [--samples N]

Figures (all from one run, on the embedded default platform; HDEMU_PLATFORM/HDEMU_CONFIG are ignored):
  startup_s                 first HIP call (which starts the embedded platform) -> module load, launch of
                            an empty kernel, hipStreamSynchronize returned. Measured first, on a cold process.
  launches_per_s            N empty-kernel launches on one stream, then one hipStreamSynchronize;
                            N / (first launch -> sync return). Throughput of the async submission path.
  roundtrip_p50/p99_us      one launch + hipStreamSynchronize, hot: the latency of a single dispatch
                            through the shared-memory AQL queue and back through the completion signal.
  idle_cpu_pct_max          CPU used by the busiest command-processor process while the platform is up
                            and idle, as % of one core. Waiting for work must not burn a core.
  mpqueue_roundtrip_p50_us  a 64-byte packet echoed by a second process through multiprocessing.Queue.

Why multiprocessing.Queue is the peer: it is the standard-library way for one Python process to hand a
small message to another and get an answer back (pickling, a pipe, a feeder thread, kernel wake-ups).
A shared-memory dispatch path only earns its complexity if a round trip through it is clearly cheaper
than that obvious alternative, hence the target roundtrip_p50_us <= mpqueue_roundtrip_p50_us / 5.
The peer runs after the platform is torn down, so it gets a quiet machine (the stricter comparison).

The last line of output is one JSON object with every figure. Exit status is 0 whether targets are met
or not: this is a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("")
def empty(ctx):
    pass
'''
PACKET = bytes(range(64))


def pct(samples_ns: list[int], q: float) -> float:
    """Nearest-rank percentile of nanosecond samples, in microseconds."""
    s = sorted(samples_ns)
    return s[min(len(s) - 1, max(0, round(q / 100 * len(s)) - 1))] / 1e3


def _echo(inq, outq) -> None:
    """Child of the multiprocessing.Queue peer: send every packet back until None arrives."""
    while (msg := inq.get()) is not None:
        outq.put(msg)


def bench_mpqueue(samples: int, warmup: int = 300) -> float:
    ctx = mp.get_context("spawn")
    inq, outq = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_echo, args=(inq, outq), daemon=True)
    child.start()
    try:
        times = []
        for i in range(warmup + samples):
            t = time.perf_counter_ns()
            inq.put(PACKET)
            outq.get()
            if i >= warmup:
                times.append(time.perf_counter_ns() - t)
    finally:
        inq.put(None)
        child.join(5.0)
        if child.is_alive():
            child.terminate()
            child.join()
        for q in (inq, outq):
            q.close()
            q.join_thread()
    return pct(times, 50)


def bench_platform(hip, launches: int, samples: int) -> dict:
    # startup: the first HIP call starts the embedded platform.
    t0 = time.perf_counter()
    mod = hip.hipModuleLoadData(KERNELS, "bench_dispatch.py")
    f = hip.hipModuleGetFunction(mod, "empty")
    s = hip.hipStreamCreate()
    hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])
    hip.hipStreamSynchronize(s)
    startup = time.perf_counter() - t0

    def launch():
        hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, [])

    # throughput: many async launches, one sync at the end.
    for _ in range(500):
        launch()
    hip.hipStreamSynchronize(s)
    t = time.perf_counter()
    for _ in range(launches):
        launch()
    hip.hipStreamSynchronize(s)
    launches_per_s = launches / (time.perf_counter() - t)

    # latency: one launch, wait for it, repeat.
    times = []
    for i in range(300 + samples):
        t = time.perf_counter_ns()
        launch()
        hip.hipStreamSynchronize(s)
        if i >= 300:
            times.append(time.perf_counter_ns() - t)

    # idle cost: CPU burnt by each command processor while nothing is submitted.
    import psutil
    from hostside.hsa import runtime
    procs = [psutil.Process(ag.cp_pid) for ag in runtime().agents]
    time.sleep(0.3)
    before = [p.cpu_times() for p in procs]
    time.sleep(2.0)
    after = [p.cpu_times() for p in procs]
    idle = max((a.user + a.system - b.user - b.system) / 2.0 * 100 for a, b in zip(after, before))

    hip.hipStreamDestroy(s)
    return {"startup_s": startup, "launches_per_s": launches_per_s,
            "roundtrip_p50_us": pct(times, 50), "roundtrip_p99_us": pct(times, 99),
            "idle_cpu_pct_max": idle, "n_devices": len(procs)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=20000, help="launches in the throughput run (default 20000)")
    ap.add_argument("--samples", type=int, default=3000, help="round trips per latency figure (default 3000)")
    args = ap.parse_args(argv)
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG"):     # measure the embedded default platform
        os.environ.pop(var, None)

    from hostside import hip       # imported before the clock starts: startup is platform start, not import
    try:
        r = bench_platform(hip, args.launches, args.samples)
    finally:
        hip.hipDeviceReset()
    n_dev = r.pop("n_devices")
    r["mpqueue_roundtrip_p50_us"] = bench_mpqueue(args.samples)
    r = {k: round(v, 3) for k, v in r.items()}     # targets are judged on the figures as reported

    def line(label, value, fmt, target, met):
        print(f"{label:<28} {format(value, fmt):>12}   target {target:<34} {'met' if met else 'NOT MET'}")

    peer = r["mpqueue_roundtrip_p50_us"]
    line("startup_s", r["startup_s"], ".3f", "<= 1 s", r["startup_s"] <= 1)
    line("launches_per_s", r["launches_per_s"], ",.0f", ">= 100,000", r["launches_per_s"] >= 100_000)
    line("roundtrip_p50_us", r["roundtrip_p50_us"], ".2f", f"<= 10 and <= peer/5 ({peer / 5:.1f})",
         r["roundtrip_p50_us"] <= 10 and r["roundtrip_p50_us"] <= peer / 5)
    print(f"{'roundtrip_p99_us':<28} {r['roundtrip_p99_us']:>12.2f}   (no target)")
    line(f"idle_cpu_pct_max ({n_dev} CPs)", r["idle_cpu_pct_max"], ".2f", "<= 1 % of a core",
         r["idle_cpu_pct_max"] <= 1)
    print(f"{'mpqueue_roundtrip_p50_us':<28} {peer:>12.1f}   (peer: multiprocessing.Queue, spawn)")
    keys = ("launches_per_s", "roundtrip_p50_us", "roundtrip_p99_us", "mpqueue_roundtrip_p50_us",
            "idle_cpu_pct_max", "startup_s")
    print(json.dumps({k: r[k] for k in keys}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
