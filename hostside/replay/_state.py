"""Per-runtime and per-agent state of the kernel-replay service: the agent gate (a reader/writer
lock), the snapshot buffer, signal and counter-block pools (used by ``hostside.replay._window``).

Every field shared between threads is behind a lock: the gate's own condition, ``_Agent.ilock``
(in-flight handlers), ``_State.lock`` (pools and dispatch ids), ``_State.names_lock`` (the kernel-name
cache) and ``_st_lock`` (the current state). The snapshot buffer and its ranges are touched only by
the holder of the agent's writer lock (``_snapshot`` copies under the runtime's tracker lock)."""
from __future__ import annotations

import itertools
import threading
import time

from shm_layout import counters as C
from shm_layout import layouts as L

from . import _snapshot
from ._diagnostics import RWLock, agent_replay_mutex


class _Agent:
    """Per-agent replay state: the gate, the snapshot buffer and in-flight handler counts."""

    def __init__(self, index: int):
        self.index = index
        self.lock = agent_replay_mutex(index)     # the agent's gate (the same object as dispatch_lock_for's)
        self.frame = None            # the open window's reentrancy frame (set by its writer), or None
        self.buf = None              # host-private snapshot buffer (grown, kept)
        self.snapshot = None         # the current window's _snapshot.Snapshot (in self.buf)
        self.ilock = threading.Lock()
        self.fwd = {}                # signal slot -> queue: handlers of counted, non-replayed dispatches
        self.pass_inflight = 0       # async handlers of replay passes not yet run (at most 1)

    def handlers_in_flight(self) -> int:
        """Async handlers of this agent not yet run; one whose queue is in error never will."""
        with self.ilock:
            return sum(1 for q in self.fwd.values() if not q.status) + self.pass_inflight

    def snap(self, rt) -> _snapshot.Snapshot:
        """Capture this agent's inventory into the kept buffer (grown as needed); a buffer that
        cannot be allocated raises ``MemoryError`` (the window declines ``snapshot_failed``)."""
        s = _snapshot.snap(self.index, rt, self.buf)
        if not s.ok:
            self.buf = None
            raise MemoryError(f"no host buffer for a {s.bytes}-byte snapshot of agent {self.index}")
        self.buf, self.snapshot = s.buf, s
        return s

    def restore(self) -> int:
        """Write the current snapshot back through the identity gate; returns the regions skipped."""
        _snapshot.restore(self.snapshot)
        return self.snapshot.skipped


#: The service's dispatch ids: one sequence for the process, never reissued (a hipDeviceReset makes
#: a new _State but does not restart it: a tool keys its records by dispatch id, as rocprofiler-sdk's
#: dispatch ids are unique within a process).
_ids = itertools.count(1)


class _State:
    """Everything tied to one runtime (a hipDeviceReset starts over)."""

    def __init__(self, rt):
        self.rt = rt
        self.agents = [_Agent(a) for a in range(len(rt.agents))]
        self.lock = threading.Lock()
        self.free_sigs = []
        self.free_blocks = []
        self.names_lock = threading.Lock()
        self.names = {}
        self.slots = int(rt.pm.topo.cfg.get("counter_slots", C.DEFAULT_SLOTS))

    def next_id(self) -> int:
        """The service's next dispatch id (1, 2, ...; one sequence per process)."""
        with self.lock:
            return next(_ids)

    def sig_get(self, value: int):
        with self.lock:
            for i, s in enumerate(self.free_sigs):
                if s.load() == 0:
                    del self.free_sigs[i]
                    break
            else:
                s = None
        if s is None:
            s = self.rt.signals.create(0, kind=1)
        s.store_relaxed_nowake(value)
        return s

    def sig_put(self, s) -> None:
        with self.lock:
            self.free_sigs.append(s)

    def block_get(self, ids):
        with self.lock:
            if not self.free_blocks:
                n = 64
                base = self.rt.allocate(None, n * C.REQUEST_BYTES, L.ALLOC_HOST)
                self.free_blocks.extend(base + i * C.REQUEST_BYTES for i in range(n))
            addr = self.free_blocks.pop()
        rec = self.rt.host_view(addr, C.REQUEST_BYTES).view(C.counter_request)
        rec["n_written"] = 0
        rec["dispatch_id"] = 0
        rec["n_slots"] = len(ids)
        rec["ids"][0][:len(ids)] = ids
        return addr, rec

    def block_put(self, addr) -> None:
        with self.lock:
            self.free_blocks.append(addr)

    def kernel_name(self, kobj: int) -> str:
        with self.names_lock:
            n = self.names.get(kobj)
            if n is None:
                for co in list(self.rt.code_objects):
                    for name, (k, _sig) in co.kernels.items():
                        self.names[k] = name
                n = self.names.get(kobj, f"kernel@{kobj:#x}")
        return n


_st: _State | None = None           # the state of the current runtime (a hipDeviceReset starts over)
_st_lock = threading.Lock()


def state(rt) -> _State:
    """The replay state of runtime ``rt`` (made on first use, replaced when the runtime changes)."""
    global _st
    with _st_lock:
        if _st is None or _st.rt is not rt:
            _st = _State(rt)
        return _st


def flush(timeout_s: float) -> bool:
    """Wait until every async handler of the service (counter deliveries, forwarded completions,
    passes) has run; False if some are still in flight after ``timeout_s``."""
    with _st_lock:
        st = _st
    if st is None:
        return True
    deadline = time.monotonic() + timeout_s
    while any(a.handlers_in_flight() for a in st.agents):
        if time.monotonic() > deadline:
            return False
        st.rt.async_handler.kick()
        time.sleep(1e-3)
    return True
