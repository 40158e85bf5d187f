"""MIOpen-layer benchmark: host cost of a warm miopenPoolingForward (an invoker hit) against a raw
hipModuleLaunchKernel of the same compiled kernel with the same arguments, and the first-call costs.

Run from the repo root:  .venv/bin/python scripts/bench_miopen.py [--samples N] [--repeats N] [--quick]

Both launches go to one stream (the handle's, ``miopenCreateWithStream``) of the embedded default
platform; the raw launch is the call the invoker makes, captured once from a warm call (the kernel,
grid, block, stream and argument tuple), so the only difference is the library. HDEMU_PLATFORM /
HDEMU_CONFIG are ignored; the binary cache lives in a temporary directory (MIOPEN_CUSTOM_CACHE_DIR,
MIOPEN_USER_DB_PATH), never the home directory.

Figures (us unless named _ms):
  warm_call_us, raw_launch_us   host time of one call, the stream idle (synchronised before each, not
                                timed); samples alternate between the two; median.
  warm_burst_us, raw_burst_us   rounds of 16 calls back to back timed without their sync, per call;
                                rounds alternate; median round.
  warm_cpu_us, raw_cpu_us       thread CPU time per call over those rounds (the time a loaded machine
                                takes the core away is not in it); median round.
  ratio_per_call, ratio_burst, ratio_cpu   warm / raw of each pair.
  library_us                    warm_call_us - raw_launch_us: what miopenPoolingForward adds.
  warm_network_config_us, warm_run_us   the warm calls' own statistics() steps (median): the
                                invoker lookup and the invoker (argument list + the launch).
  cold_first_call_ms, warm_db_first_call_ms, warm_invoker_call_ms   first call of a new process on an
                                empty cache dir (compile + store), of a new process on the filled dir
                                (binary-cache hit, zero compilations), and the second call of a
                                process (invoker hit); worker processes of hostside/studies/_miopen.py,
                                median over --repeats pairs; warm_db_split_ms is where its time goes.

Target: ratio_per_call <= 1.5 (a warm library call costs at most half a launch more than the launch).

The last line of output is one JSON object with every figure. Exit status is 0 whether the target is
met or not: this is a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHAPE = (2, 4, 16, 16)
POOL = ("max", 3, 3, 1, 1, 2, 2)        # mode, window, pads, strides
BURST = 16
TARGET = 1.5


def _capture(hip, call):
    """The launch ``call`` makes: (function name, args) of the one hip launch it issues."""
    seen, saved = [], {}
    for name in ("hipModuleLaunchKernel", "hipExtModuleLaunchKernel"):
        fn = saved[name] = getattr(hip, name)

        def spy(*a, _fn=fn, _name=name):
            seen.append((_name, a))
            return _fn(*a)
        setattr(hip, name, spy)
    try:
        call()
    finally:
        for name, fn in saved.items():
            setattr(hip, name, fn)
    if len(seen) != 1:
        raise RuntimeError(f"a warm miopenPoolingForward made {len(seen)} launches, expected 1: {seen}")
    return seen[0]


def warm_path(samples: int) -> dict:
    from hostside import hip
    from hostside import miopen as mi
    s = hip.hipStreamCreate()
    h = mi.miopenCreateWithStream(s)
    xd, yd = mi.miopenCreateTensorDescriptor(), mi.miopenCreateTensorDescriptor()
    mi.miopenSet4dTensorDescriptor(xd, mi.miopenFloat, *SHAPE)
    pd = mi.miopenCreatePoolingDescriptor()
    mi.miopenSet2dPoolingDescriptor(pd, mi.miopenPoolingMax, *POOL[1:])
    mi.miopenSet4dTensorDescriptor(yd, mi.miopenFloat, *mi.miopenGetPoolingForwardOutputDim(pd, xd))
    nbytes = 4 * SHAPE[0] * SHAPE[1] * SHAPE[2] * SHAPE[3]
    x, y = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    hip.hipMemset(x, 0, nbytes)

    def warm():
        mi.miopenPoolingForward(h, pd, 1.0, xd, x, 0.0, yd, y, False, None, 0)

    warm()                                          # compile (or the binary cache), build, register
    first = mi.statistics(h)["last"]
    name, args = _capture(hip, warm)
    launch = getattr(hip, name)

    def raw():
        launch(*args)

    for _ in range(100):                            # both paths warm, the stream's signal ring filled
        warm()
        raw()
    hip.hipStreamSynchronize(s)
    per = {"warm": [], "raw": []}
    for i in range(samples):
        for kind in (("warm", "raw") if i % 2 == 0 else ("raw", "warm")):
            fn = warm if kind == "warm" else raw
            hip.hipStreamSynchronize(s)
            t = time.perf_counter_ns()
            fn()
            per[kind].append(time.perf_counter_ns() - t)
    hip.hipStreamSynchronize(s)
    burst, cpu = {"warm": [], "raw": []}, {"warm": [], "raw": []}
    for i in range(max(5, samples // 8)):
        for kind in (("warm", "raw") if i % 2 == 0 else ("raw", "warm")):
            fn = warm if kind == "warm" else raw
            c, t = time.thread_time_ns(), time.perf_counter_ns()
            for _ in range(BURST):
                fn()
            burst[kind].append((time.perf_counter_ns() - t) / BURST)
            cpu[kind].append((time.thread_time_ns() - c) / BURST)
            hip.hipStreamSynchronize(s)
    recs = [r for r in mi.statistics(h)["records"] if r["level"] == "invoker_cache"]
    r = {"warm_call_us": statistics.median(per["warm"]) / 1e3, "raw_launch_us": statistics.median(per["raw"]) / 1e3,
         "warm_burst_us": statistics.median(burst["warm"]) / 1e3, "raw_burst_us": statistics.median(burst["raw"]) / 1e3,
         "warm_cpu_us": statistics.median(cpu["warm"]) / 1e3, "raw_cpu_us": statistics.median(cpu["raw"]) / 1e3,
         "warm_network_config_us": statistics.median(rc["steps"]["network_config_s"] for rc in recs) * 1e6,
         "warm_run_us": statistics.median(rc["steps"]["run_s"] for rc in recs) * 1e6}
    r["library_us"] = r["warm_call_us"] - r["raw_launch_us"]
    for a, w, b in (("per_call", "warm_call_us", "raw_launch_us"), ("burst", "warm_burst_us", "raw_burst_us"),
                    ("cpu", "warm_cpu_us", "raw_cpu_us")):
        r[f"ratio_{a}"] = r[w] / r[b]
    info = {"launch_api": name, "solver": first["solver"], "first_level_in_bench": first["level"],
            "kernel": first["kernels"][0]["kernel"] if first["kernels"] else None}
    mi.miopenDestroy(h)
    hip.hipStreamDestroy(s)
    return r, info


def first_calls(repeats: int, tmp: Path) -> dict:
    """Cold, warm-db and warm-invoker first-call costs from the study's worker processes."""
    from hostside.studies import _miopen
    rows = _miopen.first_calls(tmp / "first", repeats, list(SHAPE), list(POOL))
    med = _miopen.medians(rows)
    bad = [r for r in rows if not _miopen._case_ok(r)]
    if bad:
        raise RuntimeError(f"a first call was not what its case must be: {bad[0]}")
    r = {"cold_first_call_ms": med["cold"]["wall"], "warm_db_first_call_ms": med["warm_db"]["wall"],
         "warm_invoker_call_ms": med["warm_invoker"]["wall"], "cold_compile_ms": med["cold"]["compile"]}
    split = {k: round(med["warm_db"][k], 3) for k in _miopen.STEP_NAMES if med["warm_db"][k] > 0}
    return r, split


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=400, help="per-call samples of each kind (default 400)")
    ap.add_argument("--repeats", type=int, default=3, help="cold/warm-db process pairs (default 3)")
    ap.add_argument("--quick", action="store_true", help="60 samples, 1 process pair (seconds)")
    args = ap.parse_args(argv)
    if args.quick:
        args.samples, args.repeats = 60, 1
    if args.samples < 10 or args.repeats < 1:
        ap.error("--samples must be >= 10 and --repeats >= 1")
    for var in ("HDEMU_PLATFORM", "HDEMU_CONFIG", "MIOPEN_DISABLE_CACHE", "MIOPEN_LOG_LEVEL"):
        os.environ.pop(var, None)
    with tempfile.TemporaryDirectory(prefix="bench_miopen-") as d:
        tmp = Path(d)
        os.environ.update(MIOPEN_CUSTOM_CACHE_DIR=str(tmp / "cache"), MIOPEN_USER_DB_PATH=str(tmp / "userdb"),
                          MIOPEN_SYSTEM_DB_PATH=str(tmp / "no-system-db"))
        from hostside import hip
        try:
            r, info = warm_path(args.samples)
        finally:
            hip.hipDeviceReset()
        fc, split = first_calls(args.repeats, tmp)
    r.update(fc)
    r = {k: round(v, 3) for k, v in r.items()}
    for k, v in r.items():
        print(f"{k:<28} {v:>10.3f}")
    print(f"warm_db first call split (ms): {split}")
    print(f"invoker launch: {info['launch_api']} of {info['kernel']} ({info['solver']})")
    met = r["ratio_per_call"] <= TARGET
    print(f"target: warm miopenPoolingForward / raw launch ({r['ratio_per_call']:.2f}) <= {TARGET}: "
          f"{'met' if met else 'NOT MET'}  (burst {r['ratio_burst']:.2f}, CPU time {r['ratio_cpu']:.2f})")
    out = dict(r, warm_db_split_ms=split, **info, samples=args.samples, repeats=args.repeats, target=TARGET,
               target_met=met)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
