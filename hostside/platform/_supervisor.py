"""The platform supervisor: creates every segment, starts every role, watches them, removes it all.

Two ways to run it:
* embedded: the first HIP/HSA call of a process with no ``HDEMU_PLATFORM`` starts one owned by that
  process (the supervisor is a watcher thread there), torn down at exit;
* standalone: ``hdemu up`` runs ``python -m hostside.platform serve`` detached; clients attach with
  ``HDEMU_PLATFORM=<name>``; ``hdemu down`` asks it to stop.

Roles are separate programs (``python -m deviceside.cp BOOT AGENT``, ``python -m deviceside.aicpu
BOOT LANE``, ``python -m hostside.dfx BOOT OUT``), started with subprocess and this interpreter,
never fork; they find their packages as installed (no PYTHONPATH or working directory of ours).
The supervisor records every pid in the boot block, each with its start time (its own in the
topology line, each role's in a line appended once the role is started: ``shm_layout.topology``), and
its watcher marks a role that died. Every role runs in a session of its own: a terminal's Ctrl-C or
hangup reaches the user's program, never a role; the roles stop when the supervisor stops them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.config import load_config_file, parse_config
from shm_layout.errors import PlatformError
from shm_layout.logs import role_logger
from shm_layout.segments import Segment, new_run_token, unlink_name
from shm_layout.sync import futex_wake
from shm_layout.topology import PlatformMap, Topology, record_role, validate_config, write_boot_text

from ..dfx import FLUSH_TIMEOUT_S, accounting, lane_statistics, read_stalls, salvage, write_swimlane
from ._trace_export import write_trace

__all__ = ["Platform", "load_config", "STARTUP_TIMEOUT_S", "STOP_TIMEOUT_S", "WATCH_PERIOD_S"]

#: Longest wait for every role to report ready after start.
STARTUP_TIMEOUT_S = 20.0
#: How long roles get to exit after the shutdown flag before they are killed.
STOP_TIMEOUT_S = 5.0
#: Watcher period: a dead role is noticed within this.
WATCH_PERIOD_S = 0.2

_log = role_logger("supervisor")

_CTL_COLLECTOR_WAKE = L.offset_of(D.ctl_header, "collector_wake")


def load_config(path: str | None, *, source: str | None = None) -> dict:
    """Platform config from a TOML file (one ``[platform]`` table), validated by the schema of
    ``shm_layout.config``; the defaults when ``path`` is None. Raises ``ConfigError`` naming the key."""
    return load_config_file(path, source=source) if path else parse_config({})


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
        made_out = False        # the DFX output directory was made here (removed again if start fails)
        if self.dfx_out is not None and self.topo.dfx.prof["autostart"]:
            made_out = not os.path.isdir(self.dfx_out)
            self._check_dfx_out()
        try:
            for key, size in self.topo.segment_sizes().items():
                self.segments[key] = Segment.create(self.topo.names[key], size)
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
            if made_out:
                try:
                    os.rmdir(self.dfx_out)       # only while empty: a collector's outputs stay
                except OSError:
                    pass
            raise
        return self

    def _check_dfx_out(self) -> None:
        """The collector's output directory, created now: one that cannot be (a file on the way, no
        permission) is said here, naming the key, not as "the DFX collector did not start" after a
        traceback of the collector's."""
        try:
            if os.path.exists(self.dfx_out) and not os.path.isdir(self.dfx_out):
                raise NotADirectoryError(20, "not a directory")
            os.makedirs(self.dfx_out, exist_ok=True)
            if not os.access(self.dfx_out, os.W_OK | os.X_OK):
                raise PermissionError(13, "not writable")
        except OSError as exc:
            raise PlatformError(f"platform.profiling.output_dir: cannot write the DFX outputs to {self.dfx_out}: "
                                f"{exc.strerror or exc}") from None

    def _init_boot(self):
        boot = self.segments["boot"]
        hdr = boot.view(L.boot_header, 0, 1)
        write_boot_text(boot, self.topo)          # the topology, with this process's start time
        hdr["version"] = L.VERSION
        hdr["state"] = L.BOOT_BOOTING
        hdr["supervisor_pid"] = self.pid
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
        # a session of its own: a terminal's Ctrl-C (SIGINT to the foreground process group) or hangup
        # reaches the user's program only; the supervisor decides, and the roles stop as on any stop
        p = subprocess.Popen([sys.executable, "-m"] + argv, stdin=subprocess.DEVNULL, stdout=out,
                             start_new_session=True)
        self.procs[index] = p
        self.pm.roles[index]["pid"] = p.pid
        record_role(self.pm.boot, index, p.pid)   # its start time: a reused pid does not look alive

    def _start_roles(self):
        for a in range(self.topo.n_agents):
            self._spawn(a, ["deviceside.cp", self.name, str(a)])
        if self.topo.dfx is not None and self.topo.dfx.prof["autostart"]:
            col = self.dfx_roles["collector"][0]
            self._spawn(col, ["hostside.dfx", self.name, self.dfx_out])
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
                    _log.error("role %d (pid %d) died with code %s", i, p.pid, p.returncode)

    def _stop_profiling(self) -> None:
        """Lanes flush and exit, then the collector drains and writes; salvage if it is dead."""
        g = self.topo.dfx
        ctl_seg = self.pm.segs["dfxctl"]
        ctl = ctl_seg.view(D.ctl_header, 0, 1)
        ctl["stop"] = 1
        for t in range(g.T):
            futex_wake(ctl_seg.addr + g.wake_word_off(t))
        futex_wake(ctl_seg.addr + _CTL_COLLECTOR_WAKE)
        deadline = time.monotonic() + FLUSH_TIMEOUT_S

        def reap(i: int) -> None:
            p = self.procs.get(i)
            if p is None:
                return
            try:
                p.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        for i in self.dfx_roles["lanes"]:
            reap(i)
        self._release_unstarted_lanes(ctl_seg)
        for i in self.dfx_roles["collector"]:
            reap(i)
        col = self.procs.get(self.dfx_roles["collector"][0])
        self.salvaged = 0
        if col is not None and int(ctl["collector_state"][0]) != D.COL_DONE:
            self.salvaged = salvage(self.pm, self.dfx_out)
            self._write_views_of_salvage()
        # the supervisor's own reading of the counters, after every writer and the collector stopped
        acc = accounting(self.pm)
        acc["salvaged_records"] = self.salvaged
        acc["lanes"] = lane_statistics(self.pm)
        for im in acc["imbalances"]:     # the end-of-run invariant: every imbalance, by pool, with its causes
            _log.error("DFX pool (thread %d, %s): %d records neither collected nor dropped: %s",
                       im["thread"], im["kind"], im["missing"], "; ".join(im["causes"]))
        for ln in acc["lanes"]:          # packets that ran but were never profiled: said, not only counted
            if ln.get("task_events_dropped"):
                _log.warning("DFX lane %d: %d task events dropped (its task ring was full or the lane dead): those "
                             "packets ran but have no records", ln["lane"], ln["task_events_dropped"])
        self.dfx_final = acc
        os.makedirs(self.dfx_out, exist_ok=True)
        with open(os.path.join(self.dfx_out, "accounting.json"), "w") as f:
            json.dump(acc, f, indent=1)

    def _write_views_of_salvage(self) -> None:
        """The collector died before its outputs: write ``stalls.json`` and the swimlane (``swimlane.csv``,
        ``swimlane.trace.json``) of what it collected and salvage appended, as the collector would have
        (best effort: the raw records and accounting.json are what count)."""
        try:
            stalls = read_stalls(self.pm)
            with open(os.path.join(self.dfx_out, "stalls.json"), "w") as f:
                json.dump(stalls, f, indent=1)
            if os.path.exists(os.path.join(self.dfx_out, "format.json")):
                write_swimlane(self.dfx_out, stalls)
        except Exception as exc:  # noqa: BLE001 - report and go on to the accounting
            _log.error("DFX outputs after salvage: %s", exc)

    def _release_unstarted_lanes(self, ctl_seg) -> None:
        """Mark exited every lane that never registered in its ``lane_status`` (never spawned, the start
        interrupted or failed before it; or its process gone before its first store) and whose process
        is gone: it wrote no record, and the collector, which waits for every lane to finish, would
        otherwise wait ``FLUSH_TIMEOUT_S`` for it."""
        g = self.topo.dfx
        for lane, i in enumerate(self.dfx_roles["lanes"]):
            p = self.procs.get(i)
            if p is not None and p.poll() is None:
                continue
            st = ctl_seg.view(D.lane_status, g.lane_status_off(lane), 1)
            if int(st["pid"][0]) == 0 and int(st["state"][0]) == D.LANE_STARTING:
                st["state"] = D.LANE_EXITED
        futex_wake(ctl_seg.addr + _CTL_COLLECTOR_WAKE)

    def dfx_accounting(self) -> dict:
        """Per pool: total, dropped (device) and collected (host) counters, read from the segments."""
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
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever happens
                _log.warning("stop: could not raise the shutdown flag: %s", exc)
        if self.topo.dfx is not None and self.pm is not None and self.topo.dfx.prof["autostart"]:
            try:
                self._stop_profiling()
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever happens
                _log.error("profiling shutdown: %s", exc)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for p in self.procs.values():
            try:
                p.wait(max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        if trace_out and self.pm is not None:
            write_trace(self.pm, trace_out)
        if self.pm is not None:
            self.pm.boot_hdr["state"] = L.BOOT_DOWN
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


