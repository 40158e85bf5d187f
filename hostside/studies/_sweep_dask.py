"""The Dask executor of a sweep: each point one task (``_sweep_task.run_task``) on a Dask cluster.

Without ``--scheduler`` it starts a ``LocalCluster`` here: worker processes (``processes=True``), one
thread each, one per ``cores_per_point`` cores of this process's affinity set, each offering the
resource ``cores = cores_per_point``; with ``--scheduler ADDRESS`` it connects to a running cluster
and checks that some worker offers ``cores`` (``dask worker ADDRESS --resources "cores=1"``). Every
task asks for ``resources={"cores": cores_per_point}``, so a worker runs one point per slot; Dask
does not pin anything (its resources are counters), so the task leases and pins its cores itself.
What a task returns (figures, files) comes back to this client as data and is stored here.
"""
from __future__ import annotations

import logging
import os
import time
import uuid
from importlib.metadata import PackageNotFoundError, version

from ._sweep_progress import SweepError, SweepProgress
from ._sweep_task import run_task

__all__ = ["run_on_dask", "DASK_CONNECT_TIMEOUT_S"]

DASK_CONNECT_TIMEOUT_S = 30


def _import():
    try:
        from dask.distributed import Client, LocalCluster, as_completed  # optional: the [sweep] extra
    except ImportError:
        raise SweepError("--executor dask needs dask and distributed: pip install -e '.[sweep]' "
                         "(or pip install 'dask[distributed]')") from None
    return Client, LocalCluster, as_completed


def run_on_dask(spec, tasks, out, info: dict, scheduler: str | None, n_workers: int | None, stream, store,
                resume: bool, kept: int) -> None:
    Client, LocalCluster, as_completed = _import()
    cpp = spec.cores_per_point
    cluster = client = prog = None
    futures: dict = {}
    t0 = time.monotonic()
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answered ({exc})") from None
            info["scheduler"] = scheduler
        else:
            slots = n_workers or max(1, len(os.sched_getaffinity(0)) // cpp)
            cluster = LocalCluster(n_workers=slots, threads_per_worker=1, processes=True,
                                   resources={"cores": cpp}, dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster, timeout=DASK_CONNECT_TIMEOUT_S)
            info["scheduler"] = "LocalCluster"
        workers = client.scheduler_info(n_workers=-1)["workers"]
        able = {a: w for a, w in workers.items() if (w.get("resources") or {}).get("cores", 0) >= cpp}
        if not able:
            raise SweepError(f"no Dask worker offers the resource cores >= {cpp} ({len(workers)} workers): start "
                             f"them with dask worker ADDRESS --nthreads 1 --resources \"cores={cpp}\"")
        slots = sum(min(int(w["resources"]["cores"] // cpp), w.get("nthreads", 1)) for w in able.values())
        info["connect_s"] = round(time.monotonic() - t0, 3)        # a LocalCluster's start-up included
        info.update(slots=slots, workers=[{"address": a, "host": w.get("host"), "nthreads": w.get("nthreads"),
                                           "resources": w.get("resources")} for a, w in able.items()],
                    dask_version=_version("dask"), distributed_version=_version("distributed"))
        prog = SweepProgress(spec.study, len(tasks), slots, stream)
        if resume:
            prog.update(note=f"resuming: {kept} kept, {len(tasks)} to run")
        token = uuid.uuid4().hex[:8]
        for idx, task in tasks:
            key = f"hdemu-point-{token}-{idx:03d}-r{task['repeat']}"
            futures[key] = (idx, task, client.submit(run_task, task, key=key, resources={"cores": cpp}, pure=False))
        left = len(futures)
        prog.update(running=min(slots, left))       # Dask admits one point per slot
        for fut in as_completed([f for _i, _t, f in futures.values()]):
            idx, task, _f = futures[fut.key]
            try:
                res = fut.result()
            except Exception as exc:          # noqa: BLE001 - the worker died under it (KilledWorker...)
                res = {"key": task["key"], "repeat": task["repeat"], "params": task["params"], "status": "failed",
                       "error": f"dask: {type(exc).__name__}: {exc}", "figures": {}, "host": None, "cores": [],
                       "cpu_last": None, "pid": None, "segments_left": 0, "files": {}, "duration_s": 0.0}
            left -= 1
            prog.update(running=min(slots, left), result=store(idx, res))
    except KeyboardInterrupt:
        if client is not None and futures:
            client.cancel([f for _i, _t, f in futures.values()])
        raise
    finally:
        if prog is not None:
            prog.close()
        t1 = time.monotonic()
        if client is not None:
            client.close(timeout=DASK_CONNECT_TIMEOUT_S)
        if cluster is not None:
            cluster.close(timeout=DASK_CONNECT_TIMEOUT_S)
        info["close_s"] = round(time.monotonic() - t1, 3)


def _version(mod: str) -> str | None:
    try:
        return version(mod)
    except PackageNotFoundError:
        return None
