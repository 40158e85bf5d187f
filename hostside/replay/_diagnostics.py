"""Admission control and per-dispatch reporting of the replay window, and the thread-scoped
replay-window marker (rocprofiler-sdk ``kernel_replay/replay_diagnostics``).

Pure host logic over plain records, so every decision is testable without a platform:

* ``check_untracked(summary, policy)`` and ``check_admission(footprint, passes, policy)`` decide
  whether a window may go ahead; each returns a decline-reason name (``"none"`` admits).
* ``format_outcome`` / ``log_outcome``: one ``key=value`` line per dispatch.
* The marker: ``enter_replay_window(agent)`` pushes a frame on this thread's stack (a stack, not a
  value: a callback inside agent A's window may open a window on agent B), ``note_replay_reentrancy``
  marks the frame of that agent, ``dispatch_lock_for(agent)`` names the agent's gate, or None (and
  marks the window) for a dispatch from inside that agent's window on this thread.
* ``should_warn_replay_reentrancy()``: True once per process.

Imports nothing of the project. ``RWLock`` (the agent gate) lives here so the gate registry can.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import threading


__all__ = ["RWLock", "DECLINE_REASON_NAMES", "ReplayPolicy", "UntrackedSummary", "Footprint", "resolve_policy",
           "check_untracked", "check_admission", "format_outcome", "log_outcome", "enter_replay_window",
           "exit_replay_window", "in_replay_window", "note_replay_reentrancy", "replay_reentrancy_observed",
           "current_frame", "should_warn_replay_reentrancy", "agent_replay_mutex", "dispatch_lock_for",
           "Frame", "ENV_PREFIX"]

#: Upstream's decline reasons, ``none`` first (a replayed dispatch); hdemu adds ``copy_fence_stuck``
#: and ``graph_launch`` (``_types.DECLINE_REASONS``).
DECLINE_REASON_NAMES = ("none", "untracked_memory", "footprint_budget", "snapshot_failed", "queue_drain_stuck",
                        "agent_drain_stuck", "pass_drain_stuck", "reentrant_dispatch")
#: The environment knobs of ``resolve_policy`` are ``HDEMU_REPLAY_<FIELD>`` (upstream:
#: ``ROCPROFILER_KERNEL_REPLAY_<FIELD>``).
ENV_PREFIX = "HDEMU_REPLAY_"
_GB = 1.0e9


class RWLock:
    """A writer-preferring reader/writer lock (std::shared_mutex stand-in): while a writer waits, new
    readers wait too, so a pending replay is not starved by a stream of ordinary dispatches."""

    def __init__(self):
        self.cv = threading.Condition(threading.Lock())
        self.readers = 0
        self.writer = None
        self.waiting_writers = 0

    def acquire_read(self, timeout: float | None) -> bool:
        with self.cv:
            if not self.cv.wait_for(lambda: self.writer is None and not self.waiting_writers, timeout):
                return False
            self.readers += 1
            return True

    def try_acquire_read(self) -> bool:
        with self.cv:
            if self.writer is None and not self.waiting_writers:
                self.readers += 1
                return True
            return False

    def release_read(self) -> None:
        with self.cv:
            self.readers -= 1
            if not self.readers:
                self.cv.notify_all()

    def acquire_write(self, timeout: float | None) -> bool:
        with self.cv:
            self.waiting_writers += 1
            try:
                ok = self.cv.wait_for(lambda: self.writer is None and not self.readers, timeout)
            finally:
                self.waiting_writers -= 1
            if ok:
                self.writer = threading.get_ident()
            else:
                self.cv.notify_all()
            return ok

    def release_write(self) -> None:
        with self.cv:
            self.writer = None
            self.cv.notify_all()

    def held_by_me(self) -> bool:
        with self.cv:
            return self.writer == threading.get_ident()


@dataclasses.dataclass
class ReplayPolicy:
    """The admission policy of one window (``resolve_policy()`` reads it from the environment once)."""
    decline_on_vmem: bool = True            # unambiguous evidence: decline by default
    decline_on_untracked_pool: bool = False  # weaker evidence: opt-in
    max_snapshot_bytes: int = 0             # 0 = unlimited (resolve_policy derives MemAvailable / 2)
    warn_seconds: float = 10.0              # projected host-copy time that warns (0 = never)
    assumed_gbps: float = 4.0               # host-copy bandwidth assumed for the projection


@dataclasses.dataclass
class UntrackedSummary:
    """Device-visible memory outside the snapshot. hdemu has no virtual-memory mappings; the window
    fills ``pool_*`` with the pointer arguments that lie outside the snapshot (which always decline:
    ``_window``), and tests set the other fields directly."""
    vmem_bytes: int = 0
    vmem_regions: int = 0
    pool_bytes: int = 0
    pool_regions: int = 0

    def any(self) -> bool:
        """Evidence is a region count: bytes alone are not."""
        return self.vmem_regions > 0 or self.pool_regions > 0


@dataclasses.dataclass
class Footprint:
    bytes: int = 0
    regions: int = 0


def _env(name: str, default, kind):
    raw = os.environ.get(ENV_PREFIX + name)
    if raw is None or raw == "":
        return default
    try:
        if kind is bool:
            return raw.strip().lower() not in ("0", "false", "no", "off")
        return kind(raw)
    except ValueError:
        print(f"hdemu replay: warning: {ENV_PREFIX}{name}={raw!r} is not a {kind.__name__}; using {default!r}",
              file=sys.stderr, flush=True)
        return default


def _mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


_policy: ReplayPolicy | None = None
_policy_lock = threading.Lock()


def resolve_policy() -> ReplayPolicy:
    """The process's policy, read from ``HDEMU_REPLAY_*`` once (the same object every call). A
    budget of 0 becomes half of MemAvailable; a non-positive bandwidth falls back to the default."""
    global _policy
    with _policy_lock:
        if _policy is None:
            d = ReplayPolicy()
            p = ReplayPolicy(decline_on_vmem=_env("DECLINE_ON_VMEM", d.decline_on_vmem, bool),
                             decline_on_untracked_pool=_env("DECLINE_ON_UNTRACKED_POOL",
                                                            d.decline_on_untracked_pool, bool),
                             max_snapshot_bytes=_env("MAX_SNAPSHOT_BYTES", 0, int),
                             warn_seconds=_env("WARN_SECONDS", d.warn_seconds, float),
                             assumed_gbps=_env("ASSUMED_GBPS", d.assumed_gbps, float))
            if p.max_snapshot_bytes <= 0:
                p.max_snapshot_bytes = _mem_available() // 2
            if not p.assumed_gbps > 0.0:
                p.assumed_gbps = d.assumed_gbps
            if p.warn_seconds < 0:
                p.warn_seconds = 0.0
            _policy = p
        return _policy


def _warn(msg: str) -> None:
    print(f"hdemu replay: warning: {msg}", file=sys.stderr, flush=True)


def check_untracked(summary: UntrackedSummary, policy: ReplayPolicy) -> str:
    """``"untracked_memory"`` if the evidence blocks replay under ``policy``, else ``"none"``."""
    if summary.vmem_regions > 0:
        _warn(f"{summary.vmem_regions} virtual-memory mapping(s) ({summary.vmem_bytes} bytes) are outside the "
              f"snapshot; " + ("declining replay" if policy.decline_on_vmem else
                               "replaying anyway (decline_on_vmem off): results may be wrong"))
        if policy.decline_on_vmem:
            return "untracked_memory"
    if summary.pool_regions > 0 and policy.decline_on_untracked_pool:
        return "untracked_memory"
    return "none"


def check_admission(footprint: Footprint, passes: int, policy: ReplayPolicy) -> str:
    """``"footprint_budget"`` if the snapshot would exceed the budget (over, not at), else
    ``"none"``; warns (never declines) when the projected copy time is over ``warn_seconds``. The
    pass count never enters the memory decision; an open-ended loop is projected as two passes."""
    if policy.max_snapshot_bytes > 0 and footprint.bytes > policy.max_snapshot_bytes:
        _warn(f"declining: a snapshot of {footprint.bytes} bytes in {footprint.regions} region(s) is over the "
              f"{policy.max_snapshot_bytes}-byte budget")
        return "footprint_budget"
    eff = 2 if passes == 0 else passes
    seconds = footprint.bytes * eff / (policy.assumed_gbps * _GB)
    if policy.warn_seconds > 0 and seconds > policy.warn_seconds:
        _warn(f"this dispatch will copy about {footprint.bytes * eff} bytes ({footprint.bytes} x {eff} passes), "
              f"about {seconds:.1f} s at {policy.assumed_gbps:.1f} GB/s")
    return "none"


def format_outcome(o) -> str:
    """The ``key=value`` fields of an ``Outcome`` (upstream's names, plus hdemu's agent, kernel,
    status and restores, and ``skipped_regions`` when a restore skipped some)."""
    reason = o.reason.split(" ")[0] if o.reason else "none"
    req = "-" if o.requested is None else o.requested
    return (f"dispatch_id={o.dispatch_id} agent={o.agent} kernel={o.kernel} status={o.status} "
            f"outcome={'replayed' if o.status == 'replayed' else 'declined'} reason={reason} "
            f"requested_passes={req} executed_passes={o.executed} footprint_bytes={o.footprint_bytes} "
            f"footprint_regions={o.regions} untracked_vmem_bytes={o.untracked_vmem_bytes} "
            f"untracked_vmem_regions={o.untracked_vmem_regions} untracked_pool_bytes={o.untracked_bytes} "
            f"untracked_pool_regions={o.untracked_regions} snap_seconds={o.snap_seconds:.4f} "
            f"restore_seconds={o.restore_seconds:.4f} restores={o.restores} "
            f"reentrancy={1 if o.reentrancy else 0}"
            + (f" skipped_regions={o.skipped_regions}" if getattr(o, "skipped_regions", 0) else "")
            + (f" detail={o.reason}" if o.reason and " " in o.reason else ""))


def log_outcome(o, log=None) -> str:
    """Write the outcome line (``[kernel-replay]`` tag) to ``log`` or, for declined, failed and
    tainted dispatches, to stderr; returns it."""
    line = "hdemu replay: " + format_outcome(o)
    if log is not None:
        log(line)
    elif o.status in ("declined", "failed") or o.reentrancy:
        print(line, file=sys.stderr, flush=True)
    return line


# -- the thread-scoped replay-window marker ------------------------------------------------------
class Frame:
    """One open replay window on one thread: its agent and whether a dispatch (or copy) was made
    into it from a tool callback. The window's agent state also points at it, so a dispatch from the
    async-handler thread taints it too."""
    __slots__ = ("agent", "reentrancy_observed")

    def __init__(self, agent):
        self.agent = agent
        self.reentrancy_observed = False


_tls = threading.local()


def _stack() -> list:
    s = getattr(_tls, "frames", None)
    if s is None:
        s = _tls.frames = []
    return s


def _find(agent):
    for f in reversed(_stack()):
        if f.agent == agent:
            return f
    return None


def enter_replay_window(agent) -> Frame:
    f = Frame(agent)
    _stack().append(f)
    return f


def exit_replay_window(agent) -> None:
    """Close the innermost window; closing a window that is not open is harmless."""
    s = _stack()
    if not s:
        return
    if s[-1].agent != agent:
        _warn(f"closing the replay window of agent {agent!r} but the innermost one is agent {s[-1].agent!r}; "
              f"replay window guards must nest")
    s.pop()


def in_replay_window(agent) -> bool:
    return _find(agent) is not None


def current_frame(agent):
    return _find(agent)


def note_replay_reentrancy(agent) -> None:
    f = _find(agent)
    if f is not None:
        f.reentrancy_observed = True


def replay_reentrancy_observed(agent) -> bool:
    f = _find(agent)
    return f is not None and f.reentrancy_observed


_warned = [False]
_warned_lock = threading.Lock()


def should_warn_replay_reentrancy() -> bool:
    """True the first time in the process, False after."""
    with _warned_lock:
        first = not _warned[0]
        _warned[0] = True
        return first


_mutexes: dict = {}
_mutex_lock = threading.Lock()


def agent_replay_mutex(agent) -> RWLock:
    """The agent's replay gate (one per agent, the same object every time; never removed)."""
    with _mutex_lock:
        m = _mutexes.get(agent)
        if m is None:
            m = _mutexes[agent] = RWLock()
        return m


def dispatch_lock_for(agent):
    """The gate a dispatch on ``agent`` takes, or None for a dispatch from inside that agent's
    window on this thread (its writer lock is held here): that marks the window as tainted."""
    if in_replay_window(agent):
        note_replay_reentrancy(agent)
        return None
    return agent_replay_mutex(agent)
