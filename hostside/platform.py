"""The platform supervisor: creates every segment, starts every role, watches them, removes it all.

Two ways to run it:
* embedded: the first HIP/HSA call of a process with no ``HDEMU_PLATFORM`` starts one owned by that
  process (the supervisor is a watcher thread there), torn down at exit;
* standalone: ``hdemu up`` runs ``python -m hostside.platform serve`` detached; clients attach with
  ``HDEMU_PLATFORM=<name>``; ``hdemu down`` asks it to stop.

Roles are separate programs (``python -m deviceside.cp BOOT AGENT``), started with subprocess, never
fork. The supervisor records every pid in the boot block, and its watcher marks a role that died.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from shm_layout import layouts as L
from shm_layout.segments import Segment, new_run_token, unlink_name
from shm_layout.sync import address_of, futex_wake, notify, wait_until
from shm_layout.topology import PlatformMap, Topology, validate_config

#: Longest wait for every role to report ready after start.
STARTUP_TIMEOUT_S = 20.0
#: How long roles get to exit after the shutdown flag before they are killed.
STOP_TIMEOUT_S = 5.0
#: Watcher period: a dead role is noticed within this.
WATCH_PERIOD_S = 0.2

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PlatformError(RuntimeError):
    """The platform could not start, or a role failed."""


def load_config(path: str | None) -> dict:
    """Platform config from a TOML file (table ``[platform]``), validated; defaults when None."""
    if path is None:
        return validate_config({})
    import tomllib
    with open(path, "rb") as f:
        data = tomllib.load(f)
    unknown = set(data) - {"platform"}
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)}; the config lives under [platform]")
    return validate_config(data.get("platform", {}))


def role_env() -> dict:
    env = dict(os.environ)
    pp = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = _REPO_ROOT + (os.pathsep + pp if pp else "")
    return env


class Platform:
    """A running platform owned by this process."""

    def __init__(self, config: dict | None = None, *, embedded: bool = True, quiet_roles: bool = False):
        self.cfg = validate_config(config or {})
        self.embedded = embedded
        self.quiet_roles = quiet_roles
        self.pid = os.getpid()
        self.token = new_run_token()
        self.topo = Topology.new(self.cfg, self.pid, self.token)
        self.segments: dict[str, Segment] = {}
        self.procs: dict[int, subprocess.Popen] = {}   # role index -> process
        self.pm: PlatformMap | None = None
        self._stop = threading.Event()
        self._watcher = None
        self.stopped = False
        self.started_ns = 0
        self.dfx_out = None
        self.dfx_roles: dict[str, list[int]] = {"lanes": [], "collector": []}
        if self.topo.dfx is not None:
            prof = self.topo.dfx.prof
            self.dfx_out = os.path.abspath(prof["output_dir"] or f"hdemu-dfx-{self.name}")

    @property
    def name(self) -> str:
        return self.topo.names["boot"]

    # -- start ---------------------------------------------------------------------------------
    def start(self) -> "Platform":
        self.started_ns = time.monotonic_ns()
        try:
            for key, size in self.topo.segment_sizes().items():
                self.segments[key] = Segment.create(self.topo.names[key], size,
                                                    prefault=not key.startswith("mem"))
            self._init_boot()
            self._init_agents()
            self.pm = PlatformMap.attach(self.name)
            self._start_roles()
            self._wait_ready()
            self.pm.boot_hdr["state"] = L.BOOT_UP
            self._watcher = threading.Thread(target=self._watch, name="hdemu-supervisor", daemon=True)
            self._watcher.start()
        except BaseException:
            self.stop()
            raise
        return self

    def _init_boot(self):
        boot = self.segments["boot"]
        hdr = boot.view(L.boot_header, 0, 1)
        text = self.topo.to_json().encode()
        if len(text) > L.BOOT_BYTES - L.BOOT_JSON_OFF:
            raise PlatformError("topology too large for the boot block")
        boot.u8[L.BOOT_JSON_OFF:L.BOOT_JSON_OFF + len(text)] = memoryview(text)
        hdr["version"] = L.VERSION
        hdr["state"] = L.BOOT_BOOTING
        hdr["supervisor_pid"] = self.pid
        hdr["json_len"] = len(text)
        hdr["created_ns"] = time.time_ns()
        hdr["embedded"] = int(self.embedded)
        roles = boot.view(L.role_entry, L.BOOT_ROLES_OFF, L.BOOT_MAX_ROLES)
        for a in range(self.topo.n_agents):
            roles[a]["kind"] = L.ROLE_CP
            roles[a]["agent"] = a
            roles[a]["state"] = L.ROLE_STARTING
        if self.topo.dfx is not None and self.topo.dfx.prof["autostart"]:
            i = self.topo.n_agents
            roles[i]["kind"] = L.ROLE_COLLECTOR
            roles[i]["state"] = L.ROLE_STARTING
            self.dfx_roles["collector"] = [i]
            for lane in range(self.topo.dfx.prof["lanes"]):
                roles[i + 1 + lane]["kind"] = L.ROLE_LANE
                roles[i + 1 + lane]["agent"] = lane
                roles[i + 1 + lane]["state"] = L.ROLE_STARTING
                self.dfx_roles["lanes"].append(i + 1 + lane)
        hdr["magic"] = L.MAGIC  # last: attachers check it

    def _init_agents(self):
        for a in range(self.topo.n_agents):
            seg = self.segments[f"agent{a}"]
            hdr = seg.view(L.agent_header, 0, 1)
            hdr["n_engines"] = self.topo.n_engines
            hdr["max_queues"] = self.topo.max_queues
            hdr["queue_size_max"] = self.topo.qmax
            hdr["agent_index"] = a
            hdr["magic"] = L.MAGIC

    def _spawn(self, index: int, argv: list) -> None:
        out = subprocess.DEVNULL if self.quiet_roles else None
        p = subprocess.Popen([sys.executable, "-m"] + argv, env=role_env(), stdin=subprocess.DEVNULL,
                             stdout=out, cwd=_REPO_ROOT)
        self.procs[index] = p
        self.pm.roles[index]["pid"] = p.pid

    def _start_roles(self):
        for a in range(self.topo.n_agents):
            self._spawn(a, ["deviceside.cp", self.name, str(a)])
        if self.topo.dfx is not None and self.topo.dfx.prof["autostart"]:
            from shm_layout import dfx as D
            col = self.dfx_roles["collector"][0]
            self._spawn(col, ["hostside.collector", self.name, self.dfx_out])
            ctl = self.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while int(ctl["collector_state"][0]) != D.COL_RUNNING:   # free queues filled first
                if self.procs[col].poll() is not None or time.monotonic() > deadline:
                    raise PlatformError(f"the DFX collector did not start (exit code {self.procs[col].poll()})")
                time.sleep(0.002)
            self.pm.roles[col]["state"] = L.ROLE_READY
            for lane, i in enumerate(self.dfx_roles["lanes"]):
                self._spawn(i, ["deviceside.aicpu", self.name, str(lane)])

    def _wait_ready(self):
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            states = [int(self.pm.roles[i]["state"]) for i in self.procs]
            if all(s == L.ROLE_READY for s in states):
                return
            for i, p in self.procs.items():
                if p.poll() is not None:
                    raise PlatformError(f"role {i} ({L.ROLE_KIND_NAMES[int(self.pm.roles[i]['kind'])]}) "
                                        f"exited with code {p.returncode} during start")
            if time.monotonic() > deadline:
                raise PlatformError(f"roles not ready after {STARTUP_TIMEOUT_S} s: states {states}")
            time.sleep(0.002)

    # -- watch ---------------------------------------------------------------------------------
    def _watch(self):
        while not self._stop.wait(WATCH_PERIOD_S):
            for i, p in list(self.procs.items()):
                if p.poll() is not None and int(self.pm.roles[i]["state"]) not in (L.ROLE_DEAD, L.ROLE_EXITED):
                    self.pm.roles[i]["state"] = L.ROLE_DEAD
                    self.pm.roles[i]["exit_code"] = p.returncode
                    print(f"hdemu supervisor: role {i} (pid {p.pid}) died with code {p.returncode}",
                          file=sys.stderr, flush=True)

    def _stop_profiling(self) -> None:
        """Lanes flush and exit, then the collector drains and writes; salvage if it is dead."""
        from shm_layout import dfx as D
        from .collector import FLUSH_TIMEOUT_S, salvage
        g = self.topo.dfx
        ctl_seg = self.pm.segs["dfxctl"]
        ctl = ctl_seg.view(D.ctl_header, 0, 1)
        ctl["stop"] = 1
        for t in range(g.T):
            futex_wake(ctl_seg.addr + g.wake_off + t * 64)
        futex_wake(ctl_seg.addr + 128)
        deadline = time.monotonic() + FLUSH_TIMEOUT_S
        for i in self.dfx_roles["lanes"] + self.dfx_roles["collector"]:
            p = self.procs.get(i)
            if p is None:
                continue
            try:
                p.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        col = self.procs.get(self.dfx_roles["collector"][0])
        self.salvaged = 0
        if col is not None and int(ctl["collector_state"][0]) != D.COL_DONE:
            self.salvaged = salvage(self.pm, self.dfx_out)
        # the supervisor's own reading of the counters, after every writer and the collector stopped
        from .collector import accounting, lane_statistics
        acc = accounting(self.pm)
        acc["salvaged_records"] = self.salvaged
        acc["lanes"] = lane_statistics(self.pm)
        self.dfx_final = acc
        os.makedirs(self.dfx_out, exist_ok=True)
        with open(os.path.join(self.dfx_out, "accounting.json"), "w") as f:
            json.dump(acc, f, indent=1)

    def dfx_accounting(self) -> dict:
        """Per pool: total, dropped (device) and collected (host) counters, read from the segments."""
        from .collector import accounting
        return accounting(self.pm)

    def role_pids(self) -> dict[int, int]:
        return {i: p.pid for i, p in self.procs.items()}

    # -- stop ----------------------------------------------------------------------------------
    def stop(self, trace_out: str | None = None) -> None:
        if self.stopped:
            return
        self.stopped = True
        self._stop.set()
        if self.pm is not None:
            try:
                self.pm.boot_hdr["state"] = L.BOOT_STOPPING
                self.pm.boot_hdr["shutdown"] = 1
                for ag in self.pm.agents:
                    for e in range(L.AGENT_MAX_ENGINES):
                        futex_wake(ag.engine_wake_addr(e))
            except Exception:  # noqa: BLE001 - teardown goes on whatever happens
                pass
        if self.topo.dfx is not None and self.pm is not None and self.topo.dfx.prof["autostart"]:
            try:
                self._stop_profiling()
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever happens
                print(f"hdemu supervisor: profiling shutdown: {exc}", file=sys.stderr, flush=True)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for p in self.procs.values():
            try:
                p.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        if trace_out and self.pm is not None:
            from .trace_export import write_trace
            write_trace(self.pm, trace_out)
        if self.pm is not None:
            try:
                self.pm.boot_hdr["state"] = L.BOOT_DOWN
            except Exception:  # noqa: BLE001
                pass
        for seg in self.segments.values():
            unlink_name(seg.name)
        if self.pm is not None:
            self.pm.close()
        for seg in self.segments.values():
            seg.close()

    def __enter__(self):
        return self.start() if self.pm is None else self

    def __exit__(self, *exc):
        self.stop()


# -- standalone server --------------------------------------------------------------------------
def serve(config_path: str | None, ready_fd: int | None = None) -> int:
    """Run a standalone platform until ``hdemu down`` (shutdown flag) or SIGTERM/SIGINT."""
    plat = Platform(load_config(config_path), embedded=False)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    plat.start()
    line = json.dumps({"name": plat.name, "pid": os.getpid()}) + "\n"
    if ready_fd is not None:
        os.write(ready_fd, line.encode())
        os.close(ready_fd)
    else:
        sys.stdout.write(line)
        sys.stdout.flush()
    wake = address_of(plat.pm.boot_hdr) + 64
    try:
        while not stop.is_set():
            if wait_until(lambda: int(plat.pm.boot_hdr["shutdown"][0]) or stop.is_set(), wake, 0.5):
                break
            if any(int(plat.pm.roles[i]["state"]) == L.ROLE_DEAD for i in plat.procs):
                pass  # a dead role stays visible in `hdemu status`; clients get errors
    finally:
        plat.stop()
    return 0


def request_shutdown(boot_name: str, timeout_s: float = STOP_TIMEOUT_S + 5) -> bool:
    """Ask a standalone platform to stop and wait until its segments are gone."""
    pm = PlatformMap.attach(boot_name)
    pid = int(pm.boot_hdr["supervisor_pid"][0])
    pm.boot_hdr["shutdown"] = 1
    notify(address_of(pm.boot_hdr) + 64)
    pm.close()
    deadline = time.monotonic() + timeout_s
    from shm_layout.segments import list_segments
    while time.monotonic() < deadline:
        if not any(n == boot_name for n, _p, _t in list_segments()):
            return True
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    return False


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m hostside.platform")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--config")
    s.add_argument("--ready-fd", type=int)
    args = ap.parse_args(argv)
    if args.cmd == "serve":
        return serve(args.config, args.ready_fd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
