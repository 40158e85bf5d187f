"""An AICPU writer lane: one process with ``threads_per_lane`` AICPU threads (``AicpuThread``).

The lane attaches to the platform, starts its threads, and keeps its ``lane_status`` up to date:
records and tasks as its threads consume task events (``publish_progress``), ``stalls``, ``stall_ns``
and ``backstops`` as they happen; when the threads have ended it writes its totals (records, tasks,
drops) and its state: FLUSHED, or IDLE_HOST_GONE when a thread found the collector dead. Then it
waits for ``stop`` or the supervisor's death (a lane whose host is gone waits only under
``on_host_gone = "idle"``) and exits.

A lane ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the supervisor decides,
and the lane stops as on any stop) and turns SIGTERM into ``stop``.
"""
from __future__ import annotations

import os
import signal as _signal
import sys
import threading
import time

from shm_layout import dfx as D
from shm_layout import layouts as L
from shm_layout.errors import ConfigError, HdemuError, PlatformError
from shm_layout.sync import notify, pid_alive
from shm_layout.topology import PlatformMap

from shm_layout.logs import configure_stderr, role_logger

from ._writer import AicpuThread

__all__ = ["Lane", "main", "LANE_WAIT_S"]

#: How often a lane whose threads have ended checks for ``stop`` and the supervisor's death.
LANE_WAIT_S = 0.2

_CTL_COLLECTOR_WAKE = L.offset_of(D.ctl_header, "collector_wake")


class Lane:
    """Attaches to the platform as AICPU writer lane ``lane``; ``run`` serves until stopped."""

    def __init__(self, boot_name: str, lane: int):
        self.log = role_logger(f"aicpu{lane}")
        self.pm = PlatformMap.attach(boot_name)
        g = self.pm.topo.dfx
        if g is None:
            raise PlatformError("profiling is not enabled on this platform")
        if not 0 <= lane < g.prof["lanes"]:
            raise ConfigError(f"lane must be in [0, {g.prof['lanes']}), not {lane}")
        self.g = g
        self.prof = g.prof
        self.index = lane
        self.hdr = self.pm.segs["dfxhdr"]
        self.buf = self.pm.segs["dfxbuf"]
        self.ctl = self.pm.segs["dfxctl"]
        for seg in (self.hdr, self.buf, self.ctl):    # the lane streams through its buffers and task
            seg.populate(write=True)                  # rings: no first-touch page faults on the way
        self.h32 = memoryview(self.hdr.buf).cast("I")
        self.h64 = memoryview(self.hdr.buf).cast("Q")
        self.c32 = memoryview(self.ctl.buf).cast("I")
        self.c64 = memoryview(self.ctl.buf).cast("Q")
        self.ctl_hdr = self.ctl.view(D.ctl_header, 0, 1)
        self.status_off = g.lane_status_off(lane)
        self.status = self.ctl.view(D.lane_status, self.status_off, 1)
        tpl = self.prof["threads_per_lane"]
        self.first_thread = lane * tpl
        self.threads = [AicpuThread(self, t) for t in range(self.first_thread, self.first_thread + tpl)]

    def publish_progress(self) -> None:
        """Records and tasks so far into lane_status (each thread calls it; the sum is over all of them,
        so whichever thread stores last stores a total that is at most a moment old)."""
        st = self.status
        st["tasks"] = sum(th.tasks for th in self.threads)
        st["records"] = sum(th.records for th in self.threads)

    def collector_alive(self) -> bool:
        pid = int(self.ctl_hdr["collector_pid"][0])
        return pid != 0 and pid_alive(pid) and int(self.ctl_hdr["collector_state"][0]) != D.COL_DONE

    def run(self) -> int:
        sys.setswitchinterval(0.0005)
        st = self.status
        st["pid"] = os.getpid()
        st["state"] = D.LANE_RUNNING
        role = self._role()
        if role is not None:
            role["started_ns"] = time.monotonic_ns()
            role["state"] = L.ROLE_READY
        ts = [threading.Thread(target=th.main, name=f"aicpu{th.t}", daemon=True) for th in self.threads]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        st["records"] = sum(th.records for th in self.threads)
        st["tasks"] = sum(th.tasks for th in self.threads)
        st["drops"] = sum(p.dropped for th in self.threads for p in th.pools.values())
        host_gone = any(th.host_gone for th in self.threads)
        st["state"] = D.LANE_IDLE_HOST_GONE if host_gone else D.LANE_FLUSHED
        notify(self.ctl.addr + _CTL_COLLECTOR_WAKE)
        if not host_gone or self.prof["on_host_gone"] == "idle":
            sup = int(self.pm.boot_hdr["supervisor_pid"][0])
            while not int(self.ctl_hdr["stop"][0]) and pid_alive(sup):
                time.sleep(LANE_WAIT_S)
        if st["state"][0] == D.LANE_FLUSHED:
            st["state"] = D.LANE_EXITED
        if role is not None:
            role["state"] = L.ROLE_EXITED
        return 0

    def _role(self):
        for i in range(L.BOOT_MAX_ROLES):
            r = self.pm.roles[i]
            if int(r["kind"]) == L.ROLE_LANE and int(r["agent"]) == self.index:
                return self.pm.roles[i:i + 1]
        return None


USAGE = "usage: python -m deviceside.aicpu BOOT_NAME LANE"


def main(argv=None) -> int:
    """``python -m deviceside.aicpu BOOT_NAME LANE``: 0 after a clean stop, 2 on bad usage, 1 when the
    lane cannot start (one line on stderr says why)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or not argv[1].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)      # Ctrl-C is the supervisor's to handle
    configure_stderr()
    try:
        lane = Lane(argv[0], int(argv[1]))
    except HdemuError as exc:
        role_logger(f"aicpu{argv[1]}").error("cannot start: %s", exc)
        return 1
    _signal.signal(_signal.SIGTERM, lambda *_: lane.ctl_hdr.__setitem__("stop", 1))
    return lane.run()
