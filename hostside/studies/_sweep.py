"""``hdemu study NAME --sweep SPEC [--executor {local,dask}] [--scheduler ADDRESS] [--resume]
[--repeats N] [--out DIR]``: every point of a study an independent emulator run (docs/SWEEPS.md).

The sweep directory: ``sweep.json`` (the spec, for ``--resume``), ``points/pNNN-rR/`` (each finished
point's ``result.json`` and the files its run directory held: traces, DFX outputs), ``sweep.csv``
(one row per point and repeat: axes, status, error, host, cores, repeat, figures), rewritten after
every point so that an interrupted sweep keeps what finished, and at the end ``sweep_summary.csv``
(mean, standard deviation and count over the repeats), ``sweep.png`` (the merged plots, error bars
across repeats), ``manifest.json`` (versions, machine, executor, when) and ``summary.json``.

Executors: ``local`` runs the points one after another, each in a fresh interpreter pinned to its
own cores; ``dask`` submits each point as a task to a Dask ``LocalCluster`` started here (one worker
per ``cores_per_point`` cores of this process's affinity set, one thread each, resource ``cores``) or,
with ``--scheduler``, to an existing cluster whose workers offer the ``cores`` resource. Both call
``_sweep_task.run_task``, so a point's row is the same whichever ran it.
"""
from __future__ import annotations

import json
import os
import shutil
import time

from ._sweep_dask import run_on_dask
from ._sweep_progress import SweepError, SweepProgress
from ._sweep_report import manifest, write_reports, write_rows
from ._sweep_spec import SpecError, SweepSpec, from_dict
from ._sweep_task import run_task

__all__ = ["run_sweep", "SweepProgress", "SweepError"]


def _task_dir(idx: int, repeat: int) -> str:
    return f"p{idx:03d}-r{repeat}"


def _load_results(out: str) -> dict:
    """(key, repeat) -> result of every point stored under ``out/points``."""
    found = {}
    pdir = os.path.join(out, "points")
    for d in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else ():
        try:
            with open(os.path.join(pdir, d, "result.json")) as f:
                r = json.load(f)
        except (OSError, ValueError):
            continue                          # a point interrupted while it was being stored
        found[(r["key"], r["repeat"])] = r
    return found


def _store(out: str, idx: int, res: dict) -> dict:
    """Write a returned point (its files, then ``result.json`` last: a stored point is complete)."""
    d = os.path.join(out, "points", _task_dir(idx, res["repeat"]))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    files = res.pop("files", {})
    for rel, data in files.items():
        p = os.path.normpath(os.path.join(d, rel))
        if not p.startswith(d + os.sep):
            continue                          # a path that would leave the point's directory
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    res["files"] = sorted(files)
    res["dir"] = os.path.relpath(d, out)
    tmp = os.path.join(d, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1, default=str)
    os.replace(tmp, os.path.join(d, "result.json"))
    return res


def _prepare(spec: SweepSpec | None, out: str | None, resume: bool, repeats: int | None) -> tuple[SweepSpec, str]:
    if resume:
        if not out:
            raise SweepError("--resume needs --out DIR: the sweep directory to complete")
        try:
            with open(os.path.join(out, "sweep.json")) as f:
                stored = from_dict(json.load(f))
        except OSError:
            raise SweepError(f"--resume: {out} has no sweep.json (not a sweep directory)") from None
        if spec is not None:
            a, b = stored.to_dict(), spec.to_dict()
            diff = [k for k in ("study", "mode", "axes", "cores_per_point") if a[k] != b[k]]
            if diff:
                raise SweepError(f"--resume: the sweep in {out} differs in {', '.join(diff)} from --sweep's; "
                                 f"resume it without --sweep or use another --out")
            stored.figures, stored.timeout_s, stored.x = spec.figures, spec.timeout_s, spec.x
            stored.repeats = spec.repeats
        spec = stored
    elif out and os.path.exists(os.path.join(out, "sweep.json")):
        raise SweepError(f"{out} already holds a sweep: --resume to complete it, or another --out")
    if spec is None:
        raise SweepError("no sweep: give --sweep SPEC")
    if repeats is not None:
        if repeats < 1:
            raise SpecError(f"--repeats must be >= 1, not {repeats}")
        spec.repeats = repeats
    out = os.path.abspath(out or os.path.join("studies-out", f"{spec.study}-sweep-{time.strftime('%Y%m%d-%H%M%S')}"))
    os.makedirs(os.path.join(out, "points"), exist_ok=True)
    with open(os.path.join(out, "sweep.json"), "w") as f:
        json.dump(spec.to_dict(), f, indent=1)
    return spec, out


def run_sweep(spec: SweepSpec | None, out_dir: str | None = None, *, executor: str | None = None,
              scheduler: str | None = None, resume: bool = False, repeats: int | None = None,
              stream=None, n_workers: int | None = None) -> dict:
    """Run (or with ``resume`` complete) a sweep; returns its summary (also ``summary.json``)."""
    executor = executor or ("dask" if scheduler else "local")
    if executor not in ("local", "dask"):
        raise SpecError(f"--executor must be local or dask, not {executor!r}")
    if scheduler and executor != "dask":
        raise SpecError("--scheduler is a Dask scheduler's address: it goes with --executor dask")
    started = time.time()
    spec, out = _prepare(spec, out_dir, resume, repeats)
    points = spec.points()
    have = _load_results(out) if resume else {}
    tasks = []
    for idx, (key, params) in enumerate(points):
        for rep in range(spec.repeats):
            if have.get((key, rep), {}).get("status") == "ok":
                continue
            tasks.append((idx, {"study": spec.study, "whole": spec.whole, "key": key, "repeat": rep,
                                "params": params, "cores_per_point": spec.cores_per_point,
                                "timeout_s": spec.timeout_s, "lock_dir": os.environ.get("HDEMU_SWEEP_LOCK_DIR")}))
    kept = sum(1 for r in have.values() if r.get("status") == "ok")
    order = {(k, r): i for i, (k, r) in enumerate((k, r) for k, _p in points for r in range(spec.repeats))}

    def store(idx: int, res: dict) -> dict:
        res = _store(out, idx, res)
        done = _load_results(out)         # sweep.csv after every point: an interrupt keeps them
        write_rows(spec, out, sorted((v for k, v in done.items() if k in order), key=lambda v: order[(v["key"], v["repeat"])]))
        return res

    info: dict = {"kind": executor}
    prog = None
    interrupted = False
    try:
        if not tasks:
            info.update(slots=0)
            SweepProgress(spec.study, 0, 1, stream).update(note=f"nothing to run: {kept} points kept")
        elif executor == "local":
            prog = SweepProgress(spec.study, len(tasks), 1, stream)
            if resume:
                prog.update(note=f"resuming: {kept} kept, {len(tasks)} to run")
            for idx, task in tasks:
                prog.update(running=1, note=f"{task['key']} r{task['repeat']}")
                res = run_task(task)
                prog.update(running=0, result=store(idx, res))
            info.update(slots=1)
        else:
            run_on_dask(spec, tasks, out, info, scheduler, n_workers, stream,
                        store, resume, kept)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if prog is not None:
            prog.close()
        results = _load_results(out)
        rows_for = [results[(k, r)] for k, _p in points for r in range(spec.repeats) if (k, r) in results]
        mf = manifest(spec, info, started, resume, kept, len(tasks), interrupted)
        summary = write_reports(spec, out, rows_for, mf)
    return summary
