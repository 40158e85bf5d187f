"""The workload process: ``python -m hostside.faults workload SPEC.json EVENTS.jsonl`` (``hdemu run``
starts it with ``HDEMU_PLATFORM`` set to the scenario's platform).

It runs one built-in workload (``launch_loop``, ``async_pipeline``, ``graph_loop``, ``dfx_synthetic``,
``replay_loop``; ``miopen`` is ``_miopen_load``'s, a process started as ``python -m hostside.faults._miopen_load``
so that only it imports ``hostside.miopen``),
a user's ``entry = "module:function"`` (called with an ``Events`` object) or a ``program`` (run as
``__main__``), and appends what it observes to EVENTS, one JSON object a line, each stamped with
``CLOCK_MONOTONIC`` (``t_ns``, the clock every hdemu process shares): ``start``, ``sync`` (a stream's
work completed; ``lat_s`` the time since that stream's previous sync: one batch's launch-to-completion
latency), ``replay_window`` (``replay_loop``: a dispatch entered its replay window), ``error`` (a ``HipError`` raised: its name, message and stream), ``done`` (per
stream: launched, verified). A stream whose call raised is not used again; the others go on.
"""
from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import threading
import time

import numpy as np

from hostside import hip, replay
from shm_layout import dfx as D
from shm_layout.topology import PlatformMap

__all__ = ["Events", "run_workload", "KERNELS", "replay_loop"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("i32* c")
def inc(ctx, c):
    c[0] += 1

@kernel("f32* x, u32 n")
def scale(ctx, x, n):
    x[:n] = x[:n] * 2 + 1
'''
_LANE_DONE = (D.LANE_FLUSHED, D.LANE_EXITED, D.LANE_IDLE_HOST_GONE)


class Events:
    """Appends observations to the events file, one JSON line each, flushed at once (the runner
    reads it while the workload runs, and after a SIGKILL)."""

    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()        # one line at a time (``threads``: a thread per stream)

    def record(self, ev: str, **data) -> None:
        line = json.dumps({"t_ns": time.monotonic_ns(), "ev": ev, **data}) + "\n"
        with self.lock:
            self.f.write(line)

    def error(self, exc: BaseException, stream=None) -> None:
        self.record("error", stream=stream, name=getattr(exc, "name", type(exc).__name__), message=str(exc))


class _Streams:
    """The workload's streams and which of them still work."""

    def __init__(self, w: dict, ev: Events):
        self.w, self.ev = w, ev
        hip.hipSetDevice(w["device"])
        self.mod = hip.hipModuleLoadData(KERNELS, "faults_workload.py")
        self.inc = hip.hipModuleGetFunction(self.mod, "inc")
        self.scale = hip.hipModuleGetFunction(self.mod, "scale")
        self.streams = [hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking) for _ in range(w["streams"])]
        self.healthy = list(range(len(self.streams)))
        self.deadline = time.monotonic() + w["duration_s"]
        self.last = [time.monotonic()] * len(self.streams)     # each stream's previous sync
        self.iteration = 0
        self.errors = 0

    def more(self) -> bool:
        """Another iteration: some stream still works and the budget (iterations or duration) is left."""
        self.iteration += 1
        if not self.healthy:
            return False
        if self.w["iterations"]:
            return self.iteration <= self.w["iterations"]
        return time.monotonic() < self.deadline

    def guard(self, i: int, fn, *args) -> bool:
        """Run fn(*args) for stream i; a HipError is recorded and retires the stream."""
        if i not in self.healthy:
            return False
        try:
            fn(*args)
            return True
        except hip.HipError as exc:
            self.ev.error(exc, i)
            self.healthy.remove(i)
            self.errors += 1
            return False

    def sync(self, i: int, **data) -> bool:
        ok = self.guard(i, hip.hipStreamSynchronize, self.streams[i])
        if ok:
            now = time.monotonic()
            self.ev.record("sync", stream=i, lat_s=round(now - self.last[i], 6), **data)
            self.last[i] = now
        return ok


def _counter_of(st: _Streams, i: int, dev: int) -> int | None:
    out = np.zeros(1, np.int32)
    if not st.guard(i, hip.hipMemcpyDtoHAsync, out, dev, 4, st.streams[i]) or not st.guard(
            i, hip.hipStreamSynchronize, st.streams[i]):
        return None
    return int(out[0])


def launch_loop(w: dict, ev: Events) -> bool:
    """``batch`` launches of a counting kernel per stream, then a sync of each; at the end each
    healthy stream's counter must equal its launches. With ``wait_events`` each batch records an
    event half-way and waits on it on the same stream (a BARRIER_AND with a dependency signal)."""
    st = _Streams(w, ev)
    ctr = [hip.hipMalloc(4) for _ in st.streams]
    for i, c in enumerate(ctr):
        st.guard(i, hip.hipMemsetAsync, c, 0, 4, st.streams[i])
    launched = [0] * len(st.streams)
    evs = [hip.hipEventCreateWithFlags(hip.hipEventDisableTiming) for _ in st.streams] if w["wait_events"] else []

    def launch(i):
        for n in range(w["batch"]):
            if evs and n == w["batch"] // 2:
                hip.hipEventRecord(evs[i], st.streams[i])
                hip.hipStreamWaitEvent(st.streams[i], evs[i], 0)
            hip.hipModuleLaunchKernel(st.inc, 1, 1, 1, 1, 1, 1, 0, st.streams[i], [ctr[i]])
            launched[i] += 1
    if w["threads"]:
        _per_stream_threads(st, launch, launched)
    else:
        _rounds(st, launch, launched)
    return _verified(st, ctr, launched, ev)


def _rounds(st: _Streams, launch, launched) -> None:
    """Launch rounds on every healthy stream (``launch(i)``, guarded), each synchronised, while the
    workload runs."""
    while st.more():
        for i in list(st.healthy):
            st.guard(i, launch, i)
        for i in list(st.healthy):
            st.sync(i, launched=launched[i])


def _verified(st: _Streams, ctr, launched, ev: Events) -> bool:
    """Check each healthy stream's counter against what it launched; record ``done``; the verdict."""
    verified = [None] * len(st.streams)
    for i in list(st.healthy):
        verified[i] = _counter_of(st, i, ctr[i]) == launched[i]
    ev.record("done", launched=launched, verified=verified, healthy=st.healthy)
    return not st.errors and all(verified[i] for i in st.healthy)


def _per_stream_threads(st: _Streams, launch, launched) -> None:
    """``threads``: each stream launches and syncs in a thread of its own, so a stream that waits
    long does not hold the others back (each with the iteration or duration budget)."""
    def loop(i):
        n = 0
        while i in st.healthy:
            n += 1
            if (st.w["iterations"] and n > st.w["iterations"]) or (
                    not st.w["iterations"] and time.monotonic() >= st.deadline):
                return
            if st.guard(i, launch, i):
                st.sync(i, launched=launched[i])
    ts = [threading.Thread(target=loop, args=(i,), name=f"stream{i}") for i in range(len(st.streams))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def async_pipeline(w: dict, ev: Events) -> bool:
    """Per stream: pinned input -> device (SDMA), a kernel, device -> pinned output, sync, check."""
    st = _Streams(w, ev)
    n = w["elements"]
    hin = [hip.hipHostMalloc(4 * n) for _ in st.streams]
    hout = [hip.hipHostMalloc(4 * n) for _ in st.streams]
    dbuf = [hip.hipMalloc(4 * n) for _ in st.streams]
    done, bad = [0] * len(st.streams), 0

    def stage(i, value):
        hip.host_array(hin[i], np.float32, n)[:] = value
        hip.hipMemcpyHtoDAsync(dbuf[i], hin[i], 4 * n, st.streams[i])
        hip.hipModuleLaunchKernel(st.scale, (n + 255) // 256, 1, 1, 256, 1, 1, 0, st.streams[i], [dbuf[i], n])
        hip.hipMemcpyDtoHAsync(hout[i], dbuf[i], 4 * n, st.streams[i])
    while st.more():
        for i in list(st.healthy):
            st.guard(i, stage, i, float(st.iteration))
        for i in list(st.healthy):
            if st.sync(i, launched=done[i] + 1):
                done[i] += 1
                bad += int((hip.host_array(hout[i], np.float32, n) != 2 * st.iteration + 1).sum())
    ev.record("done", launched=done, verified=[bad == 0 if i in st.healthy else None for i in range(len(done))],
              healthy=st.healthy, bad=bad)
    return bad == 0 and not st.errors


def graph_loop(w: dict, ev: Events) -> bool:
    """A captured graph of ``nodes`` counting kernels per stream, launched ``batch`` times per sync."""
    st = _Streams(w, ev)
    ctr = [hip.hipMalloc(4) for _ in st.streams]
    execs = []
    for i, s in enumerate(st.streams):
        st.guard(i, hip.hipMemsetAsync, ctr[i], 0, 4, s)
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        for _ in range(w["nodes"]):
            hip.hipModuleLaunchKernel(st.inc, 1, 1, 1, 1, 1, 1, 0, s, [ctr[i]])
        execs.append(hip.hipGraphInstantiate(hip.hipStreamEndCapture(s)))
    launched = [0] * len(st.streams)

    def launch(i):
        for _ in range(w["batch"]):
            hip.hipGraphLaunch(execs[i], st.streams[i])
            launched[i] += w["nodes"]
    _rounds(st, launch, launched)
    return _verified(st, ctr, launched, ev)


def dfx_synthetic(w: dict, ev: Events) -> bool:
    """The synthetic DFX load: set ``go`` (lanes with synthetic_wait_go start), then wait until every
    lane has finished writing (flushed, exited, idle or dead), at most ``duration_s`` if it is set."""
    pm = PlatformMap.attach(os.environ["HDEMU_PLATFORM"])
    try:
        g = pm.topo.dfx
        ctl = pm.segs["dfxctl"]
        ctl.view(D.ctl_header, 0, 1)["go"] = 1
        deadline = time.monotonic() + (w["duration_s"] or w["timeout_s"])
        states = []
        while time.monotonic() < deadline:
            states = [int(ctl.view(D.lane_status, g.lane_status_off(i), 1)[0]["state"])
                      for i in range(g.prof["lanes"])]
            if all(s in _LANE_DONE for s in states):
                break
            time.sleep(0.01)          # a poll period: the lanes publish their state as they go
        ev.record("done", lanes=states)
        return True
    finally:
        pm.close()


def replay_loop(w: dict, ev: Events) -> bool:
    """``launch_loop`` under kernel replay: every dispatch is replayed ``passes`` times (device memory
    restored between passes, so each counter still counts launches once); each window's CONFIG ENTER
    is recorded as a ``replay_window`` event (the ``on_replay_window`` trigger)."""
    windows = [0]

    def callback(op, phase, data):
        if op == replay.CONFIG and phase == replay.ENTER:
            windows[0] += 1
            data.replay_pass_count = w["passes"]
            ev.record("replay_window", n=windows[0], dispatch_id=data.dispatch_id)
    replay.configure(callback)
    return launch_loop(w, ev)


_BUILTINS = {"launch_loop": launch_loop, "async_pipeline": async_pipeline, "graph_loop": graph_loop,
             "dfx_synthetic": dfx_synthetic, "replay_loop": replay_loop}


def _user(w: dict, ev: Events) -> bool:
    if w["entry"]:
        mod, fn = w["entry"].split(":")
        res = getattr(importlib.import_module(mod), fn)(ev)
        ev.record("done")
        return res is not False
    sys.argv = [w["program"], *w["args"]]
    try:
        runpy.run_path(w["program"], run_name="__main__")
    except SystemExit as exc:
        ev.record("done", exit=exc.code)
        return exc.code in (None, 0)
    ev.record("done")
    return True


def run_workload(spec_path: str, events_path: str, builtins: dict | None = None) -> int:
    """The workload process's main: 0 when it completed and verified, 1 if not (an error recorded).
    ``builtins``: more built-in workloads by name (``_miopen_load`` passes ``miopen``)."""
    with open(spec_path) as f:
        w = json.load(f)
    ev = Events(events_path)
    ev.record("start", pid=os.getpid())
    try:
        ok = ({**_BUILTINS, **(builtins or {})}[w["builtin"]] if w["builtin"] else _user)(w, ev)
    except hip.HipError as exc:
        ev.error(exc)
        ok = False
    except Exception as exc:  # noqa: BLE001 - a workload's own failure is an outcome, not a crash of ours
        ev.record("error", stream=None, name=type(exc).__name__, message=str(exc))
        ok = False
    ev.f.flush()
    return 0 if ok else 1
