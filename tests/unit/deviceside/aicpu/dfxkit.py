"""Helpers of the in-process DFX tests: a platform with the DFX segments only (autostart = false), on
which a test drives AICPU threads (``Lane``) and the collector (``Collector``) by hand."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from hostside.platform import Platform
from shm_layout import dfx as D
from shm_layout import layouts as L

K = D.K_AICPU_TASK
BUDGET = 0.2


def make(tmp_path, arch="a2a3", **prof):
    p = {"enabled": True, "autostart": False, "lanes": 1, "subsystems": ["chip_swimlane"],
         "records_per_buffer": {"aicpu_task": 4}, "backpressure_timeout_s": BUDGET,
         "buffers_per_pool": 4, "ready_depth": 8, "output_dir": str(tmp_path / "out")}
    p.update(prof)
    plat = Platform({"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "arch": arch,
                     "profiling": p}, quiet_roles=True).start()
    ctl = plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
    ctl["collector_pid"] = os.getpid()          # the test plays the (live) host
    ctl["collector_state"] = D.COL_RUNNING
    return plat


def recs(n, start=0, thread=0):
    r = np.zeros(n, D.aicpu_task)
    r["reg_task_id"] = np.arange(start, start + n)
    r["thread"] = thread
    return r


def give(col, t, k, n):
    for _ in range(n):
        col.push_free(t, k, col.allocate(t, k))


def pool(lane, t=0, k=K):
    return lane.hdr.view(D.pool_block, lane.g.pool_off(t, k), 1)[0]


def entry(lane, t, i):
    """Ready entry i of thread t, as a writable numpy record (device memory)."""
    return lane.hdr.view(D.ready_entry, lane.g.entry_off(t, i), 1)[0]


def set_tail(lane, t, v):
    lane.hdr.view(np.uint32, lane.g.tail_off(t), 1)[0] = v


def buffer_header(lane, ptr):
    return lane.buf.view(D.buffer_header, ptr - D.DFX_BUF_BASE, 1)[0]


def buffer_records(lane, k, ptr, n):
    return lane.buf.view(lane.g.rec_dtype[k], ptr - D.DFX_BUF_BASE + D.buffer_header.itemsize, n)


def held_pointers(lane, k):
    """Every buffer pointer some thread holds or may claim: current buffers and free-queue entries."""
    g = lane.g
    out = []
    for t in range(g.T):
        pb = lane.hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]
        if int(pb["current_buf_ptr"]):
            out.append(int(pb["current_buf_ptr"]))
        head, tail = int(pb["head"]), int(pb["tail"])
        while head != tail:
            out.append(int(pb["buffer_ptrs"][head % g.slots[k]]))
            head = (head + 1) & 0xFFFFFFFF
    return out


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def add_lane_role(plat, lane: int, state: int) -> int:
    """A lane role entry in the boot block (autostart = false creates none); returns its index."""
    roles = plat.pm.roles
    for i in range(L.BOOT_MAX_ROLES):
        if int(roles[i]["kind"]) == 0 and i >= plat.topo.n_agents:
            roles[i]["kind"] = L.ROLE_LANE
            roles[i]["agent"] = lane
            roles[i]["state"] = state
            return i
    raise AssertionError("no free role entry")
