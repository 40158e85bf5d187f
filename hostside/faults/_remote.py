"""A platform supervised by a process of its own, for the scenarios whose faults hit the supervisor.

``hdemu run`` is normally the platform's supervisor itself (``hostside.platform.Platform`` in this
process). A fault with ``target = "supervisor"`` needs the supervisor in another process, so that it
can be SIGKILLed or SIGSTOPped: ``python -m hostside.faults supervise CONFIG.json READY_FD`` runs the
platform as ``hdemu up`` does (``supervise``), and the run drives it through a ``RemotePlatform``, an
attached view with the attributes the run uses of a ``Platform`` (``name``, ``pm``, ``topo``,
``procs``, ``dfx_roles``, ``stop()``, ``dfx_final``).

The roles are the supervisor's children, not the run's: a ``RoleProc`` stands for each, by pid and
the start time the supervisor recorded (so a reused pid is never signalled). The run makes itself a
child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) while the platform runs, so when the supervisor
dies its roles become the run's children: they are reaped, and their exit codes known. Once a
killed supervisor's roles have gone, the segments it created are stale, and ``stop()`` removes them
the way ``hdemu clean`` does (``segments.sweep`` of that creator, which unlinks only the segments of
a dead creator). Nobody salvages a dead collector's ready queues then (the supervisor would): the DFX
accounting is the collector's own (``summary.json``, written when it drained and exited), with the
lanes' counters read from their ``lane_status``.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hostside.platform import Platform
from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.errors import HdemuError, PlatformError
from shm_layout.segments import list_segments, sweep
from shm_layout.sync import address_of, notify, wait_until
from shm_layout.topology import PlatformMap, run_alive

__all__ = ["RemotePlatform", "RoleProc", "supervise", "READY_TIMEOUT_S", "STOP_BOUND_S", "ROLES_EXIT_BOUND_S"]

#: How long the supervisor process may take to start the platform and say so.
READY_TIMEOUT_S = 40.0
#: How long a live supervisor may take to stop the platform once asked (its roles' flush included).
STOP_BOUND_S = 90.0
#: After the supervisor died: how long the run waits for its roles to exit on their own before it
#: kills what is left (the promise ``roles_exit`` has its own, smaller bound).
ROLES_EXIT_BOUND_S = 30.0
_PR_SET_CHILD_SUBREAPER = 36
_WAKE = L.offset_of(L.boot_header, "wake")


def lane_counters(pm) -> list[dict]:
    """Per DFX lane its ``lane_status`` counters (the keys of the supervisor's ``lane_statistics``)."""
    g = pm.topo.dfx
    out = []
    for lane in range(g.prof["lanes"]):
        st = pm.segs["dfxctl"].view(D.lane_status, g.lane_status_off(lane), 1)[0]
        out.append({"lane": lane, "pid": int(st["pid"]), "state": D.LANE_STATE_NAMES.get(int(st["state"]), "?"),
                    "records": int(st["records"]), "drops": int(st["drops"]), "stalls": int(st["stalls"]),
                    "stall_ms": int(st["stall_ns"]) / 1e6, "backstops": int(st["backstops"]), "tasks": int(st["tasks"])})
    return out


def _subreaper(on: bool) -> bool:
    """Make this process a child subreaper (orphaned descendants become its children); False if not Linux."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


# -- the supervisor process -----------------------------------------------------------------------------
def supervise(config_json: str, ready_fd: str) -> int:
    """``python -m hostside.faults supervise CONFIG.json READY_FD``: start the platform of the config
    (a full platform dict), write ``{"name", "pid"}`` (or ``{"error"}``) on READY_FD, serve until the
    boot block's shutdown flag or SIGTERM, then stop it (the DFX accounting goes to its output_dir)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the run decides when its platform stops
    fd = int(ready_fd)
    try:
        plat = Platform(json.loads(Path(config_json).read_text()), embedded=False, quiet_roles=True).start()
    except HdemuError as exc:
        os.write(fd, (json.dumps({"error": str(exc)}) + "\n").encode())
        return 1
    os.write(fd, (json.dumps({"name": plat.name, "pid": os.getpid()}) + "\n").encode())
    os.close(fd)
    wake = address_of(plat.pm.boot_hdr) + _WAKE
    try:
        while not stop.is_set():
            if wait_until(lambda: int(plat.pm.boot_hdr["shutdown"][0]) or stop.is_set(), wake, 0.5):
                break
    finally:
        plat.stop()
    return 0


# -- the run's view -------------------------------------------------------------------------------------
class RoleProc:
    """One role of a remote platform, with the part of ``subprocess.Popen`` the run uses. Alive while
    its pid runs as the process the supervisor recorded; once it is the run's child (its supervisor
    died), reaped here with its exit code; else the code the supervisor's watcher wrote, if any."""

    def __init__(self, plat: "RemotePlatform", index: int, pid: int, start: int):
        self.plat, self.index, self.pid, self.start = plat, index, pid, start
        self.returncode = None

    def poll(self):
        if self.returncode is not None:
            return self.returncode
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
        except ChildProcessError:
            pass                    # not ours (its supervisor lives, or already reaped it)
        if self.plat.pm.role_alive(self.index, {self.index: (self.pid, self.start)}):
            return None
        r = self.plat.pm.roles[self.index]
        st = int(r["state"])
        self.returncode = int(r["exit_code"]) if st == L.ROLE_DEAD else 0 if st == L.ROLE_EXITED else \
            "unknown (reaped by the supervisor)"
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"role {self.index} (pid {self.pid})", timeout)
            time.sleep(0.01)        # a poll period: the role is another process's child until then
        return self.returncode


class RemotePlatform:
    """The run's handle on a platform whose supervisor is ``self.supervisor`` (a child process)."""

    def __init__(self, cfg: dict, out: Path, log_path: Path):
        self.cfg, self.out, self.log_path = cfg, out, log_path
        self.supervisor: subprocess.Popen | None = None
        self.pm: PlatformMap | None = None
        self.procs: dict[int, RoleProc] = {}
        self.dfx_roles: dict[str, list[int]] = {"lanes": [], "collector": []}
        self.dfx_final = None
        self.name = ""
        self.sup_start = 0
        self.stopped = False
        self.end: dict = {}
        self._reaper = False

    @property
    def topo(self):
        return self.pm.topo

    def start(self) -> "RemotePlatform":
        self._reaper = _subreaper(True)
        cfg_path = self.out / "platform.json"
        cfg_path.write_text(json.dumps(self.cfg))
        r, w = os.pipe()
        with open(self.log_path, "ab") as log:
            self.supervisor = subprocess.Popen(
                [sys.executable, "-m", "hostside.faults", "supervise", str(cfg_path), str(w)], pass_fds=(w,),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        os.close(w)
        try:
            info = self._ready(r)
        except BaseException:
            self.stop()
            raise
        self.name = info["name"]
        self.pm = PlatformMap.attach(self.name)
        self.sup_start = self.pm.topo.supervisor["start"]
        recs = self.pm.role_records()
        for i in range(L.BOOT_MAX_ROLES):
            kind = int(self.pm.roles[i]["kind"])
            if not kind or i not in recs:
                continue
            self.procs[i] = RoleProc(self, i, *recs[i])
            if kind == L.ROLE_COLLECTOR:
                self.dfx_roles["collector"].append(i)
            elif kind == L.ROLE_LANE:
                self.dfx_roles["lanes"].append(i)
        return self

    def _ready(self, fd: int) -> dict:
        with os.fdopen(fd, "rb") as f:
            line = f.readline()     # the supervisor writes it once the platform is up, or closes on exit
        info = json.loads(line) if line.strip() else {}
        if "name" not in info:
            code = self.supervisor.wait(READY_TIMEOUT_S)
            raise PlatformError(f"the platform's supervisor failed to start it: "
                                f"{info.get('error') or f'exit code {code}; see {self.log_path}'}")
        return info

    def supervisor_alive(self) -> bool:
        return self.supervisor is not None and self.supervisor.poll() is None

    def roles_left(self) -> list[int]:
        return [i for i, p in self.procs.items() if p.poll() is None]

    def stop(self) -> None:
        """A live supervisor is asked to stop (the shutdown flag) and waited for; a dead one's roles
        are waited for (then killed), the DFX accounting read, its segments swept. ``self.end`` says
        what was done and what was left."""
        if self.stopped:
            return
        self.stopped = True
        sup = self.supervisor
        try:
            if sup is not None and sup.poll() is None and self.pm is not None:
                sup.send_signal(signal.SIGCONT)             # a stopped supervisor cannot stop its roles
                self.pm.boot_hdr["shutdown"] = 1
                notify(address_of(self.pm.boot_hdr) + _WAKE)
                try:
                    sup.wait(STOP_BOUND_S)
                except subprocess.TimeoutExpired:
                    sup.kill()
                    sup.wait(10)
                    self.end["supervisor_killed_at_stop"] = True
                self._read_accounting()
            elif sup is not None:
                sup.wait(10)
                self.end["supervisor_exit_code"] = sup.returncode
                if self.pm is not None:
                    self._after_supervisor_death()
        finally:
            for p in self.procs.values():           # nothing of the run survives it
                if p.poll() is None:
                    p.kill()
                    try:
                        p.wait(5)
                    except subprocess.TimeoutExpired:
                        pass
            if self.pm is not None:
                self.pm.close()
            if sup is not None:
                left = sweep(only_pid=sup.pid, alive=run_alive) if sup.poll() is not None else []
                self.end.setdefault("swept", []).extend(left)
                self.end["segments_left"] = [n for n, pid, _t in list_segments() if pid == sup.pid]
            if self._reaper:
                _subreaper(False)

    def _after_supervisor_death(self) -> None:
        deadline = time.monotonic() + ROLES_EXIT_BOUND_S
        while self.roles_left() and time.monotonic() < deadline:
            time.sleep(0.02)        # a poll period: each role notices on its own housekeeping period
        self.end["roles_killed_at_stop"] = self.roles_left()
        if self.pm.topo.dfx is not None and self.dfx_roles["collector"]:
            out = self.cfg["profiling"]["output_dir"]
            try:
                with open(os.path.join(out, "summary.json")) as f:
                    acc = json.load(f)
            except (OSError, ValueError) as exc:
                self.end["dfx_note"] = (f"no DFX accounting: the collector wrote no summary.json ({exc}) and its "
                                        f"supervisor, who would salvage, is dead")
            else:
                acc["salvaged_records"] = 0
                acc["lanes"] = lane_counters(self.pm)
                self.dfx_final = acc
                with open(os.path.join(out, "accounting.json"), "w") as f:
                    json.dump(acc, f, indent=1)
        swept = sweep(only_pid=self.supervisor.pid, alive=run_alive)
        self.end["swept"] = swept

    def _read_accounting(self) -> None:
        if self.pm.topo.dfx is None or not self.dfx_roles["collector"]:
            return
        try:
            self.dfx_final = json.loads(Path(self.cfg["profiling"]["output_dir"], "accounting.json").read_text())
        except (OSError, ValueError) as exc:
            self.end["dfx_note"] = f"the supervisor wrote no DFX accounting: {exc}"
