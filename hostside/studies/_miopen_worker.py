"""A worker process of the ``miopen`` study (``_miopen``) and of ``scripts/bench_miopen.py``: an embedded
platform, one MIOpen handle, pooling calls, and per call its level, counters, step split and
correctness, printed as one JSON line. The study starts this file with ``runpy.run_path`` (``python -c
... _worker SPEC_JSON``), so a worker imports hip, miopen and numpy and not the studies package."""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from hostside import hip, hsa
from hostside import miopen as mi

__all__ = ["worker", "STEP_NAMES", "PLATFORM"]

#: the split of one call, in the order of the call path (stacked bars); the sum is the call's wall time
STEP_NAMES = ("api_checks", "network_config", "solver_search", "binary_cache_load", "compile", "binary_cache_store",
              "hipModuleLoadData", "invoker_build", "launch", "other")
PLATFORM = {"agents": 1, "memory_mib": 32, "host_pool_mib": 16}
_MODES = {"max": 0, "avg": 1, "avg_incl": 2}        # miopenPoolingMode_t


def _reference(x, mode: str, k, p, s, out_hw):
    """Pooling of x (N, C, H, W) in float64, one output position at a time: max never takes padding,
    average divides by the window clipped to the input, inclusive average by the whole window."""
    x = np.asarray(x, np.float64)
    n, c, hh, ww = x.shape
    y = np.zeros((n, c) + tuple(out_hw))
    for oh in range(out_hw[0]):
        for ow in range(out_hw[1]):
            h0, w0 = oh * s[0] - p[0], ow * s[1] - p[1]
            win = x[:, :, max(h0, 0):min(h0 + k[0], hh), max(w0, 0):min(w0 + k[1], ww)]
            if mode == "max":
                y[:, :, oh, ow] = win.max(axis=(2, 3))
            else:
                cnt = win.shape[2] * win.shape[3] if mode == "avg" else k[0] * k[1]
                y[:, :, oh, ow] = win.sum(axis=(2, 3)) / max(cnt, 1)
    return y


def _steps(rec: dict, wall_s: float) -> dict:
    """The call's split (STEP_NAMES, seconds) from its statistics record and its wall time."""
    st = rec["steps"]
    g = st.get
    pieces = {"binary_cache_load": g("binary_cache_load_s", 0.0), "compile": g("compile_s", 0.0),
              "binary_cache_store": g("binary_cache_store_s", 0.0), "hipModuleLoadData": g("module_load_s", 0.0)}
    prep = g("prepare_invoker_s", 0.0)
    out = {"api_checks": max(0.0, wall_s - st["total_s"]), "network_config": g("network_config_s", 0.0),
           "solver_search": g("search_s", 0.0), **pieces,
           "invoker_build": max(0.0, prep - sum(pieces.values())), "launch": g("run_s", 0.0)}
    out["other"] = max(0.0, st["total_s"] - g("network_config_s", 0.0) - g("search_s", 0.0) - prep - g("run_s", 0.0))
    return out


def worker(spec: dict) -> dict:
    """One process: an embedded platform, one handle, then ``spec["pools"]`` (each [mode, kh, kw, ph, pw,
    sh, sw]) on x of ``spec["shape"]``, each called ``spec["calls"]`` times; every call's level, counters,
    split and correctness. ``spec["wait_go"]``: print "ready" and wait for a line on stdin first (the
    concurrent run's start line)."""
    hsa.configure(PLATFORM)
    out = {"pid": os.getpid(), "calls": []}
    try:
        t = time.perf_counter()
        h = mi.miopenCreate()
        out["create_s"] = time.perf_counter() - t
        shape = tuple(spec["shape"])
        x = np.random.default_rng(spec.get("seed", 0)).standard_normal(shape).astype(np.float32)
        xd = mi.miopenCreateTensorDescriptor()
        mi.miopenSet4dTensorDescriptor(xd, mi.miopenFloat, *shape)
        jobs = []
        for mode, kh, kw, ph, pw, sh, sw in spec["pools"]:
            if mode not in _MODES:
                raise ValueError(f"pooling mode must be one of {', '.join(_MODES)}, not {mode!r}")
            pd = mi.miopenCreatePoolingDescriptor()
            mi.miopenSet2dPoolingDescriptor(pd, _MODES[mode], kh, kw, ph, pw, sh, sw)
            yd = mi.miopenCreateTensorDescriptor()
            ydims = mi.miopenGetPoolingForwardOutputDim(pd, xd)
            mi.miopenSet4dTensorDescriptor(yd, mi.miopenFloat, *ydims)
            jobs.append((f"{mode}_k{kh}x{kw}_p{ph}x{pw}_s{sh}x{sw}", pd, yd, ydims,
                         _reference(x, mode, (kh, kw), (ph, pw), (sh, sw), ydims[2:])))
        px = hip.hipMalloc(x.nbytes)
        py = hip.hipMalloc(max(int(np.prod(j[3])) for j in jobs) * 4)
        hip.hipMemcpy(px, x, x.nbytes, hip.hipMemcpyHostToDevice)
        hip.hipDeviceSynchronize()
        if spec.get("wait_go"):
            print("ready", flush=True)
            sys.stdin.readline()
        for name, pd, yd, ydims, ref in jobs:
            for i in range(spec.get("calls", 1)):
                before = dict(mi.statistics(h))
                t = time.perf_counter()
                mi.miopenPoolingForward(h, pd, 1.0, xd, px, 0.0, yd, py, False, None, 0)
                wall = time.perf_counter() - t
                hip.hipDeviceSynchronize()
                st = mi.statistics(h)
                y = np.empty(ydims, np.float32)
                hip.hipMemcpy(y, py, y.nbytes, hip.hipMemcpyDeviceToHost)
                err = float(np.max(np.abs(y - ref)))
                rec = st["last"]
                out["calls"].append({
                    "config": name, "call": i + 1, "level": rec["level"], "solver": rec["solver"], "wall_s": wall,
                    "steps": _steps(rec, wall), "max_abs_err": err, "correct": bool(err <= 1e-5),
                    **{k: st[k] - before[k] for k in ("solver_searches", "invokers_built", "compilations",
                                                      "binary_cache_hits_user", "binary_cache_stores",
                                                      "binary_cache_errors")}})
        out["binary_cache"] = mi.statistics(h)["binary_cache"]
        mi.miopenDestroy(h)
    finally:
        hip.hipDeviceReset()
        hsa.configure(None)
    return out


if __name__ == "__main__":                          # a worker: ``... _worker SPEC_JSON`` (see spawn)
    if len(sys.argv) != 3 or sys.argv[1] != "_worker":
        print("usage: _miopen_worker.py _worker SPEC_JSON", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(worker(json.loads(sys.argv[2]))), flush=True)
