"""What ``hdemu run`` does with ``hostside.miopen``, in processes of their own (no other process of a run
imports the library): the built-in workload ``miopen`` and the process that damages its binary cache.

``python -m hostside.faults._miopen workload SPEC EVENTS`` is the workload (``_workload.run_workload``
with one more built-in). Its binary cache lives in the run directory: the run sets
``MIOPEN_CUSTOM_CACHE_DIR``, ``MIOPEN_USER_DB_PATH`` and ``MIOPEN_SYSTEM_DB_PATH`` (at nothing) for it,
never the user's home, and ``HDEMU_MIOPEN_DB_BUSY_LIMIT_S`` from ``db_busy_limit_s``. It records
``miopen_db`` (the ``.ukdb`` path, which the fault acts on), then per round (``iterations``, or rounds
until ``duration_s``):

* the **warm** handle (one for the whole run, its own stream): for each of ``shapes`` a max pooling
  forward (window 2, stride 2, indices saved) and, with ``backward``, its backward; from round 2 on
  every call is an invoker-cache hit and never reads the binary cache;
* a **fresh** handle (created and destroyed each round, as a new process would start): the same calls,
  each found in the binary cache (a load), then one pooling no earlier round made (a new program:
  compiled and stored).

Each call is a ``miopen_call`` event (handle, round, api, config, level, ok, verified against a float64
numpy reference, the error's status and message, the ``MIOpen(HIP): Warning`` lines the library printed
during it, its counters and its binary cache's busy waits) and, when it succeeded, a ``sync`` of stream 0
(warm) or 1 (fresh) whose ``lat_s`` is the call with its synchronisation. A failed call does not stop
the workload.

``python -m hostside.faults._miopen dbfault`` serves ``_inject``: one JSON line per command on stdin
(``inject`` with how and path: ``_kerndb.inject_fault``; ``release``), one JSON answer each; at the end
of its stdin it releases what it still holds. It is a second process on the workload's cache, as a
second MIOpen process holding the database lock would be.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from hostside import hip
from hostside import miopen as mi
from hostside.miopen._kerndb import inject_fault, kern_db_paths

from ._workload import run_workload

__all__ = ["miopen_loop", "ref_forward", "ref_backward", "serve_db_faults", "main", "UNIQUE_POOLINGS"]

#: The pooling of the configured shapes: max, window 2 and stride 2 in every spatial dimension, no padding.
WINDOW, STRIDE = 2, 2
#: The x of each round's new pooling, and the poolings (mode, window h, window w, stride), one per round.
UNIQUE_X = (1, 2, 8, 8)
UNIQUE_POOLINGS = [(m, kh, kw, s) for m in ("max", "avg") for kh in (1, 2, 3) for kw in (1, 2, 3) for s in (1, 2)]
_MODES = {"max": mi.miopenPoolingMax, "avg": mi.miopenPoolingAverage}
_LOG_LINE = re.compile(r"MIOpen\(HIP\): (Warning|Error|Fatal) \[(\w+)\] (.*)")
_COUNTERS = ("invoker_hits", "solver_searches", "compilations", "binary_cache_hits_user", "binary_cache_stores",
             "binary_cache_errors")
_DB = ("busy_waits", "busy_wait_s", "timeouts", "errors", "stores", "user_hits", "misses")


# ------------------------------------------------------------------------------------- the reference
def _windows(spatial, k, s):
    out = [(n - kk) // ss + 1 for n, kk, ss in zip(spatial, k, s)]
    return out, itertools.product(*(range(o) for o in out))


def ref_forward(x, mode: str, k, s):
    """(y, image index of each maximum) of pooling x (N, C, *spatial) without padding, in float64; max
    takes the first maximum in window order."""
    x = np.asarray(x, np.float64)
    n, c, sp = x.shape[0], x.shape[1], x.shape[2:]
    out, positions = _windows(sp, k, s)
    y = np.zeros((n, c, *out))
    idx = np.zeros(y.shape, np.int64)
    for o in positions:
        lo = [a * b for a, b in zip(o, s)]
        win = x[(slice(None), slice(None), *(slice(a, a + kk) for a, kk in zip(lo, k)))].reshape(n, c, -1)
        at = (slice(None), slice(None), *o)
        if mode == "max":
            y[at] = win.max(axis=2)
            rel = np.unravel_index(win.argmax(axis=2), tuple(k))
            idx[at] = np.ravel_multi_index(tuple(r + a for r, a in zip(rel, lo)), sp)
        else:
            y[at] = win.mean(axis=2)
    return y, idx


def ref_backward(x_shape, dy, mode: str, k, s, idx):
    """dx of the pooling ``ref_forward`` made (max: each dy to its maximum; average: spread over the window)."""
    dy = np.asarray(dy, np.float64)
    n, c, sp = x_shape[0], x_shape[1], tuple(x_shape[2:])
    if mode == "max":
        flat = np.zeros((n * c, int(np.prod(sp))))
        rows = np.repeat(np.arange(n * c), int(np.prod(dy.shape[2:])))
        np.add.at(flat, (rows, idx.reshape(-1)), dy.reshape(-1))
        return flat.reshape(x_shape)
    dx = np.zeros(x_shape)
    _out, positions = _windows(sp, k, s)
    for o in positions:
        lo = [a * b for a, b in zip(o, s)]
        region = (slice(None), slice(None), *(slice(a, a + kk) for a, kk in zip(lo, k)))
        dx[region] += (dy[(slice(None), slice(None), *o)] / np.prod(k)).reshape(n, c, *([1] * len(sp)))
    return dx


# ------------------------------------------------------------------------------------- the workload
def _tensor(shape) -> object:
    d = mi.miopenCreateTensorDescriptor()
    if len(shape) == 4:
        mi.miopenSet4dTensorDescriptor(d, mi.miopenFloat, *shape)
    else:
        mi.miopenSetTensorDescriptor(d, mi.miopenFloat, len(shape), list(shape))
    return d


def _to_device(a: np.ndarray) -> int:
    p = hip.hipMalloc(max(a.nbytes, 4))
    hip.hipMemcpy(p, a, a.nbytes, hip.hipMemcpyHostToDevice)
    return p


class _Job:
    """One pooling: its descriptors, device buffers and float64 reference results."""

    def __init__(self, name: str, shape, mode: str, k, s, backward: bool, rng):
        self.name, self.mode, self.backward = name, mode, backward
        nd = len(shape) - 2
        x = rng.standard_normal(shape).astype(np.float32)
        self.xd, self.pd = _tensor(shape), mi.miopenCreatePoolingDescriptor()
        if nd == 2:
            mi.miopenSet2dPoolingDescriptor(self.pd, _MODES[mode], k[0], k[1], 0, 0, s[0], s[1])
        else:
            mi.miopenSetNdPoolingDescriptor(self.pd, _MODES[mode], nd, list(k), [0] * nd, list(s))
        mi.miopenSetPoolingIndexType(self.pd, mi.miopenIndexUint32)
        mi.miopenSetPoolingWorkSpaceIndexMode(self.pd, mi.miopenPoolingWorkspaceIndexImage)
        yshape = tuple(mi.miopenGetPoolingNdForwardOutputDim(self.pd, self.xd, len(shape)))
        self.yd = _tensor(yshape)
        self.y_ref, idx = ref_forward(x, mode, k, s)
        self.save = backward and mode == "max"
        self.ws_size = mi.miopenPoolingGetWorkSpaceSizeV2(self.pd, self.yd) if self.save else 0
        self.x, self.y = _to_device(x), hip.hipMalloc(4 * int(np.prod(yshape)))
        self.ws = hip.hipMalloc(self.ws_size) if self.ws_size else None
        self.y_host = np.empty(yshape, np.float32)
        if backward:
            dy = rng.standard_normal(yshape).astype(np.float32)
            self.dx_ref = ref_backward(shape, dy, mode, k, s, idx)
            self.dy, self.dx = _to_device(dy), hip.hipMalloc(x.nbytes)
            self.dx_host = np.empty(shape, np.float32)

    def run(self, h, stream, api: str) -> float:
        """The call, synchronised; returns the largest error against the reference (NaN: not written)."""
        out, host, ref = (self.y, self.y_host, self.y_ref) if api == "forward" else (self.dx, self.dx_host,
                                                                                    self.dx_ref)
        hip.hipMemsetAsync(out, 0xFF, host.nbytes, stream)          # NaN: an element never written shows
        if api == "forward":
            mi.miopenPoolingForward(h, self.pd, 1.0, self.xd, self.x, 0.0, self.yd, self.y, self.save, self.ws,
                                    self.ws_size)
        else:
            mi.miopenPoolingBackward(h, self.pd, 1.0, self.yd, self.y, self.yd, self.dy, self.xd, self.x, 0.0,
                                     self.xd, self.dx, self.ws)
        hip.hipStreamSynchronize(stream)
        hip.hipMemcpy(host, out, host.nbytes, hip.hipMemcpyDeviceToHost)
        return float(np.max(np.abs(host - ref)))


class _LogTap:
    """The workload's sys.stderr: everything passes through; MIOpen's warning and error lines are kept
    (the library prints a failed binary-cache store there and goes on)."""

    def __init__(self, inner):
        self.inner, self.buf, self.lines = inner, "", []

    def write(self, s: str) -> int:
        self.inner.write(s)
        self.buf += s
        while "\n" in self.buf:
            line, self.buf = self.buf.split("\n", 1)
            m = _LOG_LINE.search(line)
            if m:
                self.lines.append({"level": m.group(1), "function": m.group(2), "message": m.group(3)})
        return len(s)

    def flush(self) -> None:
        self.inner.flush()

    def take(self) -> list[dict]:
        out, self.lines = self.lines, []
        return out

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _db_stats(st: dict) -> dict:
    db = st["binary_cache"] or {}          # None until the handle first needed its binary cache
    return {k: db.get(k, 0) for k in _DB}


class _Calls:
    def __init__(self, ev, tap):
        self.ev, self.tap = ev, tap
        self.made = {"warm": 0, "fresh": 0}
        self.failed = {"warm": 0, "fresh": 0}
        self.wrong = {"warm": 0, "fresh": 0}

    def call(self, which: str, h, stream, sidx: int, rnd: int, job: _Job, api: str) -> bool:
        before = mi.statistics(h)
        self.tap.take()
        t0 = time.monotonic()
        err, max_err = None, None
        try:
            max_err = job.run(h, stream, api)
        except mi.MiopenError as exc:
            err = {"status": exc.status.name, "message": str(exc)}
        dur = time.monotonic() - t0
        after = mi.statistics(h)
        db0, db1 = _db_stats(before), _db_stats(after)
        ok = err is None
        verified = None if not ok else bool(max_err <= 1e-4)
        self.made[which] += 1
        self.failed[which] += not ok
        self.wrong[which] += verified is False
        self.ev.record("miopen_call", handle=which, round=rnd, api=api, config=job.name, ok=ok,
                       level=after["last"]["level"] if ok and after["last"] else None, verified=verified,
                       max_err=max_err, dur_s=round(dur, 6), error=err, log=self.tap.take(),
                       counters={k: after[k] - before[k] for k in _COUNTERS},
                       db={k: round(db1[k] - db0[k], 6) for k in _DB})
        if ok:
            self.ev.record("sync", stream=sidx, lat_s=round(dur, 6), handle=which)
        return ok


def miopen_loop(w: dict, ev) -> bool:
    """The ``miopen`` workload (this module's docstring); True when no call failed and every result checked."""
    hip.hipSetDevice(w["device"])
    rng = np.random.default_rng(12)
    streams = [hip.hipStreamCreate(), hip.hipStreamCreate()]
    warm = mi.miopenCreateWithStream(streams[0])
    user, system = kern_db_paths(warm.arch, warm.num_cu)
    ev.record("miopen_db", path=str(user), system=str(system) if system else None, arch=warm.arch,
              num_cu=warm.num_cu, busy_limit_s=w["db_busy_limit_s"])
    jobs = [_Job("max_" + "x".join(map(str, sh)) + f"_k{WINDOW}_s{STRIDE}", sh, "max", [WINDOW] * (len(sh) - 2),
                 [STRIDE] * (len(sh) - 2), w["backward"], rng) for sh in w["shapes"]]
    unique: dict[int, _Job] = {}
    apis = ("forward", "backward") if w["backward"] else ("forward",)
    tap = _LogTap(sys.stderr)
    sys.stderr = tap
    calls = _Calls(ev, tap)
    deadline = time.monotonic() + w["duration_s"]
    rnd = 0
    try:
        while True:
            rnd += 1
            if (w["iterations"] and rnd > w["iterations"]) or (not w["iterations"] and rnd > 1
                                                                and time.monotonic() >= deadline):
                break
            for job in jobs:
                for api in apis:
                    if not calls.call("warm", warm, streams[0], 0, rnd, job, api):
                        break                       # no indices saved: no backward
            fresh = mi.miopenCreateWithStream(streams[1])
            for job in jobs:
                for api in apis:
                    if not calls.call("fresh", fresh, streams[1], 1, rnd, job, api):
                        break
            u = (rnd - 1) % len(UNIQUE_POOLINGS)
            if u not in unique:
                mode, kh, kw, s = UNIQUE_POOLINGS[u]
                unique[u] = _Job(f"{mode}_{'x'.join(map(str, UNIQUE_X))}_k{kh}x{kw}_s{s}", UNIQUE_X, mode, (kh, kw),
                                 (s, s), False, rng)
            calls.call("fresh", fresh, streams[1], 1, rnd, unique[u], "forward")
            mi.miopenDestroy(fresh)
    finally:
        sys.stderr = tap.inner
    mi.miopenDestroy(warm)
    kinds = ("warm", "fresh")
    ev.record("done", launched=[calls.made[k] for k in kinds], failed=[calls.failed[k] for k in kinds],
              verified=[None if calls.made[k] == calls.failed[k] else calls.wrong[k] == 0 for k in kinds],
              rounds=rnd - 1)
    return not any(calls.failed.values()) and not any(calls.wrong.values())


# ------------------------------------------------------------------------------------- db faults
def _records(path: Path):
    """kern_db records in the file now, or None (no file, or not a database)."""
    if not path.is_file():
        return None
    try:
        c = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return int(c.execute("SELECT count(*) FROM kern_db").fetchone()[0])
        finally:
            c.close()
    except sqlite3.Error:
        return None


def serve_db_faults(inp=sys.stdin, out=sys.stdout) -> int:
    """The ``dbfault`` process: inject and release faults on command (one JSON line each way)."""
    held = {}

    def say(**msg):
        out.write(json.dumps(msg) + "\n")
        out.flush()
    say(ready=True, pid=os.getpid())
    try:
        for line in inp:
            if not line.strip():
                continue
            cmd = json.loads(line)
            i = cmd["index"]
            if cmd["op"] == "ping":
                say(ok=True)
            elif cmd["op"] == "inject":
                path = Path(cmd["path"])
                ev = {"how": cmd["how"], "path": str(path), "records": _records(path)}
                try:
                    held[i] = inject_fault(cmd["how"], path)
                except (ValueError, OSError, sqlite3.Error) as exc:
                    say(ok=False, reason=f"{cmd['how']} on {path}: {exc}")
                    continue
                if cmd["how"] == "readonly_dir":
                    ev["dir"] = str(path.parent)
                say(ok=True, evidence=ev)
            else:
                f = held.pop(i, None)
                if f is not None:
                    f.release()
                say(ok=True, released=f is not None, records=_records(Path(cmd["path"])))
    finally:
        for f in held.values():
            f.release()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["workload"] and len(argv) == 3:
        return run_workload(argv[1], argv[2], {"miopen": miopen_loop})
    if argv == ["dbfault"]:
        return serve_db_faults()
    print("usage: python -m hostside.faults._miopen workload SPEC EVENTS | dbfault", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
