"""Fault injection on a running platform (``Platform`` object of this process) and its workload.

Signals go through the ``Popen`` of each role (the supervisor's own handles, so a reused pid is never
hit). A corrupted AQL header is written through the ring's declared layout
(``shm_layout.aql.kernel_dispatch_packet``): once the target queue has a backlog, the command
processor of the agent is held with SIGSTOP while the header of a packet it has not looked at yet
(one past ``read_dispatch_id``, published, below ``write_dispatch_id``) is overwritten, then released
with SIGCONT (a few milliseconds; without a backlog it is released at once and the look repeats).
"""
from __future__ import annotations

import signal
import subprocess
import time

from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L

__all__ = ["Injector", "InjectError", "dispatches", "records", "owned_by"]

#: How long corrupt_header looks for a backlog (two published packets) on the target queue.
CORRUPT_WAIT_S = 5.0


class InjectError(Exception):
    """A fault could not be injected (its target is gone, no queue to corrupt); the reason is recorded."""


def dispatches(pm) -> int:
    """AQL packets (dispatches and barriers) every AQL engine of every agent has executed so far."""
    return sum(int(am.engine_stats[e]["packets"]) for am in pm.agents for e in range(pm.topo.n_engines))


def records(pm) -> int:
    """DFX records every AICPU thread has handed to its pools so far (collected, dropped or pending)."""
    g = pm.topo.dfx
    if g is None:
        return 0
    hdr = pm.segs["dfxhdr"]
    return sum(int(hdr.view(D.pool_block, g.pool_off(t, k), 1)[0]["total_record_count"])
               for t in range(g.T) for k in g.kinds)


def owned_by(pm, pid: int) -> dict:
    """Queues (per agent), allocations and signals that ``pid`` still owns."""
    queues = [(a, q) for a, am in enumerate(pm.agents) for q in range(pm.topo.max_queues)
              if L.owner_pid(int(am.qdesc[q]["owner"])) == pid]
    allocs = sum(int(((r["owner_pid"] == pid) & (r["kind"] != 0)).sum()) for r in pm.alloc_recs)
    sigs = int(((pm.signals["owner"] & 0xFFFFFFFF) == pid).sum())
    return {"queues": queues, "allocations": allocs, "signals": sigs}


class Injector:
    """Resolves role names (``workload``, ``cp<i>``, ``lane<i>``, ``collector``) to processes and
    injects faults into them."""

    def __init__(self, plat, workload: subprocess.Popen):
        self.plat, self.workload = plat, workload
        self.stopped: dict[str, subprocess.Popen] = {}

    def proc(self, target: str) -> subprocess.Popen:
        p = self.plat
        if target == "workload":
            return self.workload
        if target == "collector":
            return p.procs[p.dfx_roles["collector"][0]]
        if target.startswith("lane"):
            return p.procs[p.dfx_roles["lanes"][int(target[4:])]]
        return p.procs[int(target[2:])]

    def _signal(self, target: str, sig: int) -> int:
        pr = self.proc(target)
        if pr.poll() is not None:
            raise InjectError(f"{target} (pid {pr.pid}) had already exited with code {pr.returncode}")
        pr.send_signal(sig)
        return pr.pid

    def kill(self, target: str) -> dict:
        self.resume(target)
        return {"pid": self._signal(target, signal.SIGKILL)}

    def stop(self, target: str) -> dict:
        pid = self._signal(target, signal.SIGSTOP)
        self.stopped[target] = self.proc(target)
        return {"pid": pid}

    def resume(self, target: str) -> bool:
        """SIGCONT a role this injector stopped; False if it was not stopped."""
        pr = self.stopped.pop(target, None)
        if pr is None:
            return False
        if pr.poll() is None:
            pr.send_signal(signal.SIGCONT)
        return True

    def resume_all(self) -> None:
        for t in list(self.stopped):
            self.resume(t)

    def workload_queues(self, agent: int) -> list[int]:
        """Slots of the workload's AQL queues on ``agent``, in slot order."""
        am = self.plat.pm.agents[agent]
        return [q for q in range(self.plat.pm.topo.max_queues)
                if L.owner_pid(int(am.qdesc[q]["owner"])) == self.workload.pid
                and int(am.qdesc[q]["kind"]) == L.QKIND_AQL and int(am.qdesc[q]["active"])]

    def corrupt_header(self, agent: int, nth: int, packet_type: int) -> dict:
        """Overwrite the packet type of a published, not yet fetched packet of the workload's ``nth``
        AQL queue on ``agent``; returns where and what was written."""
        qs = self.workload_queues(agent)
        if nth >= len(qs):
            raise InjectError(f"the workload has {len(qs)} AQL queue(s) on agent {agent}, no queue {nth}")
        slot = qs[nth]
        am = self.plat.pm.agents[agent]
        d = am.qdesc[slot]
        size = int(d["size"])
        ring = am.seg.view(A.kernel_dispatch_packet, am.ring_offset(slot), size)
        cp = f"cp{agent}"
        deadline = time.monotonic() + CORRUPT_WAIT_S
        while True:
            read, write = int(d["read_dispatch_id"]), int(d["write_dispatch_id"])
            if write > read + 1:        # a backlog: hold the CP and look again
                self.stop(cp)
                try:
                    read, write = int(d["read_dispatch_id"]), int(d["write_dispatch_id"])
                    idx = read + 1      # the CP may hold the packet at `read` already; not this one
                    old = int(ring[idx & (size - 1)]["header"])
                    if write > idx and A.header_type(old) != A.HSA_PACKET_TYPE_INVALID:
                        new = (old & 0xFF00) | packet_type
                        ring[idx & (size - 1)]["header"] = new
                        break
                finally:
                    self.resume(cp)
            if time.monotonic() > deadline or self.workload.poll() is not None:
                raise InjectError(f"queue {slot} of agent {agent} had no packet waiting behind the one in flight "
                                  f"within {CORRUPT_WAIT_S} s (read {read}, write {write})")
            time.sleep(0.0002)          # a poll period: catch the queue with a backlog
        return {"agent": agent, "queue": slot, "packet": idx, "old_header": hex(old), "new_header": hex(int(new)),
                "workload_pid": self.workload.pid}
