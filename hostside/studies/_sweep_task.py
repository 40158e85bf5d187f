"""One sweep task: lease cores, run one point of a study in a fresh interpreter pinned to them, and
return everything it produced as data.

``run_task`` is what both executors call: in this process for ``--executor local``, inside a Dask
worker for ``--executor dask`` (the worker admits one task per ``cores`` resource slot; resources are
admission control only, so the task picks its cores itself). It leases ``cores_per_point`` CPUs of
the calling process's affinity set by taking an exclusive ``flock`` on one file per CPU in a lock
directory shared by every worker of the host (a crashed task's locks go with its process), starts
``python -m hostside.studies._sweep_child`` and pins it to them (``os.sched_setaffinity`` on its pid
as soon as it exists; the point process pins itself again before it starts its platform, so the
command processors and clients that platform starts inherit the set, and reports the set), runs the point in a private temporary run directory and writes its result. The task then reads
every file of that run directory into memory (traces, DFX outputs), removes the directory, checks
/dev/shm for segments the point process created (and unlinks any: they are counted in the row), and
returns one dict: the point's figures, its host, the cores it was pinned to and the CPU it last ran
on, when it got those cores and how long it held them (``started``, ``duration_s``: two points'
spans on one core never overlap), ``status`` (``ok`` or ``failed`` with ``error``) and ``files`` (path -> bytes).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from shm_layout.segments import list_segments, sweep

__all__ = ["run_task", "lease_cores", "default_lock_dir"]

LEASE_POLL_S = 0.05
STOP_GRACE_S = 10.0


def default_lock_dir() -> str:
    return os.environ.get("HDEMU_SWEEP_LOCK_DIR") or os.path.join(tempfile.gettempdir(),
                                                                  f"hdemu-sweep-cores-{os.getuid()}")


@contextlib.contextmanager
def lease_cores(n: int, lock_dir: str | None = None, timeout_s: float = 3600.0):
    """Hold ``n`` CPUs of this process's affinity set that no other task of this host holds."""
    lock_dir = lock_dir or default_lock_dir()
    os.makedirs(lock_dir, exist_ok=True)
    allowed = sorted(os.sched_getaffinity(0))
    if n > len(allowed):
        raise RuntimeError(f"a point needs {n} cores, this worker may use {len(allowed)} ({allowed})")
    held: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            for cpu in allowed:
                if len(held) == n:
                    break
                fd = os.open(os.path.join(lock_dir, f"cpu{cpu}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                held.append((cpu, fd))
            if len(held) == n:
                break
            for _cpu, fd in held:             # all or none: two tasks never hold half each
                os.close(fd)
            held.clear()
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {n} free cores of {allowed} in {timeout_s:g} s (lock dir {lock_dir})")
            time.sleep(LEASE_POLL_S)          # other tasks hold them: poll until enough are released
        yield sorted(c for c, _fd in held)
    finally:
        for _cpu, fd in held:
            os.close(fd)                      # closing the descriptor releases the flock


def _gather(run_dir: str) -> dict:
    files = {}
    for root, _dirs, names in os.walk(run_dir):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, run_dir)] = f.read()
    return files


def _stop(proc: subprocess.Popen) -> None:
    """SIGINT first (the point stops its platform as on Ctrl-C), then SIGKILL; always reaped."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def _segments_of(pid: int) -> int:
    left = [n for n, p, _t in list_segments() if p == pid]
    if left:
        sweep(only_pid=pid)                   # the point process is dead: its segments are orphans
    return len(left)


def run_task(task: dict) -> dict:
    """Run one point (``task``: study, whole, key, repeat, params, cores_per_point, timeout_s,
    lock_dir); never raises for a point that fails: the result says ``failed`` and why."""
    t0 = time.time()
    res = {"key": task["key"], "repeat": task["repeat"], "params": task["params"], "host": socket.gethostname(),
           "cores": [], "cpu_last": None, "pid": None, "status": "failed", "error": "", "figures": {},
           "segments_left": 0, "files": {}, "started": t0}
    tmp = tempfile.mkdtemp(prefix="hdemu-sweep-point-")
    try:
        with lease_cores(task["cores_per_point"], task.get("lock_dir")) as cores:
            res["cores"], res["started"] = cores, time.time()     # the point's span is the lease's
            run_dir = os.path.join(tmp, "run")
            os.makedirs(run_dir)
            child = dict(task, cores=cores, run_dir=run_dir, result=os.path.join(tmp, "result.json"))
            env = {k: v for k, v in os.environ.items() if k not in ("HDEMU_PLATFORM", "HDEMU_CONFIG")}
            proc = subprocess.Popen([sys.executable, "-m", "hostside.studies._sweep_child"], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                    cwd=tmp, start_new_session=True)
            res["pid"] = proc.pid
            try:
                try:
                    os.sched_setaffinity(proc.pid, cores)   # its imports too; the child pins itself again
                except ProcessLookupError:
                    pass                                    # already gone: its result (or none) says why
                _out, err = proc.communicate(json.dumps(child), timeout=task["timeout_s"])
            except subprocess.TimeoutExpired:
                err = f"the point did not finish in {task['timeout_s']:.0f} s"
            finally:                          # also when interrupted: the point stops, its segments go
                _stop(proc)
                res["segments_left"] = _segments_of(proc.pid)
            try:
                with open(child["result"]) as f:
                    out = json.load(f)
            except (OSError, ValueError):
                out = {"status": "failed",
                       "error": f"point process exited with {proc.returncode} and no result: {(err or '').strip()[-600:]}"}
            res.update({k: out[k] for k in ("status", "error", "figures", "cpu_last", "traceback") if k in out})
            if out.get("cores_pinned") is not None:
                res["cores"] = out["cores_pinned"]
            res["files"] = _gather(run_dir)
            res["duration_s"] = round(time.time() - res["started"], 6)   # before the cores are released
    except Exception as exc:                  # the lease, the spawn: the point could not run at all
        res["error"] = res["error"] or f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res.setdefault("duration_s", round(time.time() - res["started"], 6))   # no cores, or the spawn failed
    return res
