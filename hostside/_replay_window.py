"""The kernel-replay interceptor and its window (public face: ``hostside.replay``).

Why it looks like this (rationale; the spec is ``../shared/seeds/000_*.txt``):

* Everything runs on the submitting thread: there is no replay worker. ``VirtualGPU.launch`` calls
  ``intercept`` once ``install()`` has set ``commands._INTERCEPT``.
* Lock order is *agent gate, then stream lock*: an ordinary dispatch takes its agent's reader lock
  before its stream's lock, a replayed one takes the writer lock before its stream's lock. So a thread
  blocked at a gate never holds a stream lock another window needs, and a dispatch from inside a tool
  callback (which runs with the writer lock held) can still take a sibling stream's lock.
* A dispatch from inside a tool callback never waits at a gate: it is declined as
  ``reentrant_dispatch`` and submitted at once (under the reader lock only if that is free right
  now). Waiting there could deadlock: the callback's own thread may hold the writer lock, or be the
  async-handler thread a window is draining.
* The application's completion signal is never handed to the device inside a window. Passes complete
  private signals; the host fires the application's signal once, after the last executed pass. A
  dispatch that counts but is not replayed also completes a private signal, whose async handler
  delivers the counter records and then forwards completion to the application's signal (as
  rocprofiler-sdk's interceptor does).
* Snapshot and restore are host-side ``numpy.copyto`` between the agent's device-memory segment (the
  host maps every segment, like a large-BAR system maps VRAM) and a host-private buffer kept per agent
  and grown as needed (pre-faulted once, so steady-state copies run at memory speed).
"""
from __future__ import annotations

import bisect
import os
import sys
import threading
import time
import traceback

from shm_layout import counters as C
from shm_layout import layouts as L

from . import commands as _commands
from . import hsa as _hsa
from . import replay as R
from ._replay_state import _State, _state, flush  # noqa: F401  (flush: replay.flush)
from .commands import KERNEL_HEADER, MARKER_HEADER
from .hsa import HSA_SIGNAL_CONDITION_EQ, HostWaitTimeout, HsaError

STATS = {k: 0 for k in ("windows", "replayed", "declined", "not_replayed", "failed", "reentrant",
                        "ordinary", "counted", "passes", "snaps", "restores", "snap_bytes", "snap_ns",
                        "restore_bytes", "restore_ns", "queue_drain_ns", "agent_drain_ns",
                        "pass_kernel_ns", "slice_warnings")}
_install_lock = threading.Lock()


def install() -> None:
    """Put the interceptor on the queue write path (idempotent)."""
    with _install_lock:
        _commands._INTERCEPT = intercept


def _warn(msg: str) -> None:
    print(f"hdemu replay: warning: {msg}", file=sys.stderr, flush=True)


def _fatal(msg: str) -> None:
    """The document's ROCP_FATAL: say which wait ran out, then abort the process."""
    sys.stderr.write(f"hdemu replay FATAL: {msg}\n")
    sys.stderr.flush()
    os.abort()


# -- submission ------------------------------------------------------------------------------------
def _submit(v, kobj, sig, args, grid, block, gseg, dims, completion: int, r2: int):
    """Write one dispatch packet on the stream's queue (caller holds ``v.lock``); not rung."""
    q = v.queue
    dep = v._cross_engine_dep("aql")
    if dep:
        v._marker_locked([dep], signal=False)
        v.last_engine = "aql"
    idx = q.add_write_index(1)
    q.wait_for_space(idx)
    koff, kaddr = q.kernarg_slot(idx)
    if sig.size:
        sig.pack_into(q.buf, koff, args)
    off = q.slot_offset(idx)
    _hsa._PKT_BODY.pack_into(q.buf, off + 2, dims, block[0], block[1], block[2], 0, grid[0], grid[1],
                             grid[2], 0, gseg, kobj, kaddr, r2, completion)
    q.a16[off >> 1] = KERNEL_HEADER
    tr = v.rt.trace
    if tr is not None:
        tr.record(L.EV_LAUNCH, q.slot, L.dispatch_id(v.agent, q.slot, idx), kobj)
    v.commands += 1
    return q, idx


def _counting(st: _State):
    """(services, counter ids to request) of the DispatchCounting services active on this thread."""
    ctxs = R.Context._all
    if not ctxs:
        return (), ()
    svcs, ids = [], []
    for c in list(ctxs):
        if c.services and c.active:
            for s in c.services:
                svcs.append(s)
                ids.extend(s.ids)
    ids = list(dict.fromkeys(ids))[:st.slots]
    return svcs, ids


def _deliver(st, rec, svcs, ids, did, agent, kname, replay_pass) -> None:
    n = int(rec["n_written"][0])
    out = rec["out"][0]
    got = {ids[j]: int(out[j]) for j in range(min(n, len(ids)))}
    ddid = int(rec["dispatch_id"][0])
    for s in svcs:
        values = {C.COUNTER_NAMES[c]: got.get(c) for c in s.ids}
        R._call_tool(s.callback, R.CounterRecord(did, ddid, agent, kname, replay_pass, values))


def _forward(value, arg):
    """Async handler of a counted, non-replayed dispatch: records, then the application's signal."""
    st, ag, app, d, blk, svcs, ids, did, kname = arg
    try:
        _deliver(st, blk[1], svcs, ids, did, ag.index, kname, None)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    finally:
        with ag.ilock:
            ag.fwd.pop(d.slot, None)
        app.subtract(1)
        st.sig_put(d)
        st.block_put(blk[0])
    return False


def _submit_app(st, v, kobj, sig, args, grid, block, gseg, dims, did, app=None, publish=True):
    """Submit the application's dispatch once (caller holds ``v.lock``), counting if a context asks."""
    svcs, ids = _counting(st)
    if app is None:
        app = v._next_signal()
    if ids:
        STATS["counted"] += 1
        ag = st.agents[v.agent]
        blk = st.block_get(ids)
        d = st.sig_get(1)
        q, idx = _submit(v, kobj, sig, args, grid, block, gseg, dims, d.handle, blk[0])
        with ag.ilock:
            ag.fwd[d.slot] = v.queue
        v.rt.async_handler.register(d, HSA_SIGNAL_CONDITION_EQ, 0, _forward,
                                    (st, ag, app, d, blk, svcs, ids, did, st.kernel_name(kobj)))
    else:
        q, idx = _submit(v, kobj, sig, args, grid, block, gseg, dims, app.handle, 0)
    v.last_signal = app
    v.last_engine = "aql"
    if publish:
        v._publish(q, idx)
    else:
        q.ring_doorbell(idx)
    return idx


# -- the interceptor -------------------------------------------------------------------------------
def intercept(v, kobj, sig, args, grid, block, gseg=0, dims=3):
    if len(args) != len(sig.args):
        sig.pack_into(bytearray(max(sig.size, 1)), 0, args)     # raises the usual SignatureError
    if sig.size:
        sig.struct.pack(*args)              # a bad argument fails here, before any state changes
    st = _state(v.rt)
    svc = R._service
    if getattr(R._tls, "in_callback", 0):
        return _reentrant(st, svc, v, kobj, sig, args, grid, block, gseg, dims)
    if svc is None:                         # counting only: no gate
        with v.lock:
            return _submit_app(st, v, kobj, sig, args, grid, block, gseg, dims, next(st.ids))
    return _candidate(st, svc, v, kobj, sig, args, grid, block, gseg, dims)


def _reentrant(st, svc, v, kobj, sig, args, grid, block, gseg, dims):
    ag = st.agents[v.agent]
    did = next(st.ids)
    got = False if ag.lock.held_by_me() else ag.lock.try_acquire_read()
    try:
        if not v.lock.acquire(timeout=R.REENTRANT_LOCK_TIMEOUT_S):
            raise HostWaitTimeout(f"a dispatch from inside a tool callback waited {R.REENTRANT_LOCK_TIMEOUT_S} s "
                                  f"(REENTRANT_LOCK_TIMEOUT_S) for its stream")
        try:
            idx = _submit_app(st, v, kobj, sig, args, grid, block, gseg, dims, did)
        finally:
            v.lock.release()
    finally:
        if got:
            ag.lock.release_read()
    if svc is not None:
        STATS["reentrant"] += 1
        STATS["declined"] += 1
        svc.record(R.Outcome(did, v.agent, st.kernel_name(kobj), "declined", "reentrant_dispatch",
                             executed=1))
    return idx


def _candidate(st, svc, v, kobj, sig, args, grid, block, gseg, dims):
    kname = st.kernel_name(kobj)
    did = next(st.ids)
    data = R.ReplayData(dispatch_id=did, agent=v.agent, queue=v.queue.slot, kernel=kname, kernel_object=kobj,
                        grid=tuple(grid), block=tuple(block), continue_callback=svc.continue_callback)
    R._call_tool(svc.callback, R.CONFIG, R.ENTER, data)
    n, cont, user = data.replay_pass_count, data.continue_callback, data.user_data
    why = None
    if n is None:
        why = "pass count not set"
    elif not isinstance(n, int) or isinstance(n, bool) or n < 0:
        why = f"refused: pass count must be a non-negative int, not {n!r}"
    elif n == 1:
        why = "pass count 1"
    elif n == 0 and cont is None:
        why = "refused: pass count 0 needs a continue callback"
    if why is not None:
        if why.startswith("refused"):
            _warn(f"dispatch {did} ({kname}): {why}; it runs once")
        ag = st.agents[v.agent]
        if not ag.lock.acquire_read(_hsa.HOST_WAIT_TIMEOUT_S):
            raise HostWaitTimeout(f"agent {v.agent}'s replay gate stayed closed for {_hsa.HOST_WAIT_TIMEOUT_S} s")
        try:
            with v.lock:
                idx = _submit_app(st, v, kobj, sig, args, grid, block, gseg, dims, did)
        finally:
            ag.lock.release_read()
        STATS["ordinary"] += 1
        STATS["not_replayed"] += 1
        out = R.Outcome(did, v.agent, kname, "not_replayed", why,
                        requested=n if isinstance(n, int) and not isinstance(n, bool) else None)
    else:
        out, idx = _window(st, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname, data, n, cont, user)
        STATS[out.status] += 1
    svc.record(out)
    data.outcome = out
    data.user_data = user
    data.current_pass = data.total_passes = None
    R._call_tool(svc.callback, R.CONFIG, R.EXIT, data)
    return idx


def _window(st, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname, data, n, cont, user):
    ag = st.agents[v.agent]
    limit = _hsa.HOST_WAIT_TIMEOUT_S
    if not ag.lock.acquire_write(limit):
        raise HostWaitTimeout(f"agent {v.agent}'s replay gate (writer) not acquired in {limit} s")
    try:
        if not v.lock.acquire(timeout=limit):
            raise HostWaitTimeout(f"stream lock of queue {v.queue.slot} not acquired in {limit} s")
        try:
            STATS["windows"] += 1
            return _window_locked(st, ag, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname,
                                  data, n, cont, user)
        finally:
            v.lock.release()
    finally:
        ag.lock.release_write()


def _expired(svc, wait: str, msg: str) -> None:
    if svc.policy == "fatal":
        _fatal(f"{wait}: {msg}")


def _window_locked(st, ag, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname, data, n, cont, user):
    rt, b = v.rt, svc.bounds
    out = R.Outcome(did, v.agent, kname, "replayed", requested=n, executed=0)
    v.flush()
    app = v._next_signal()                  # captured: never handed to the device (suppressed)
    data.completion_signal = app

    def decline(reason, detail=""):
        out.status, out.reason, out.executed = "declined", reason + (f" ({detail})" if detail else ""), 1
        return out, _submit_app(st, v, kobj, sig, args, grid, block, gseg, dims, did, app=app, publish=False)

    # 1. queue drain: a barrier packet on this queue (after the stream's SDMA work, if it was last)
    t0 = time.monotonic_ns()
    q = v.queue
    dep = v._cross_engine_dep("aql")
    dsig = st.sig_get(1)
    idx = q.add_write_index(1)
    q.wait_for_space(idx)
    q.write_barrier(idx, MARKER_HEADER, [dep] if dep else [], dsig.handle)
    q.ring_doorbell(idx)
    v.last_engine = "aql"
    ok, detail = _sync(rt, dsig, q, b, b.queue_drain_slices, "queue drain")
    STATS["queue_drain_ns"] += time.monotonic_ns() - t0
    st.sig_put(dsig)                        # reused only once it reads 0 (sig_get checks)
    if not ok:
        _expired(svc, "queue drain (barrier on the replaying queue)", detail)
        return decline("queue_drain_stuck", detail)
    # 2. agent-wide drain: no queue of this agent (in this process) has work or a handler in flight
    t0 = time.monotonic_ns()
    ok, detail = _drain_agent(rt, ag, b)
    STATS["agent_drain_ns"] += time.monotonic_ns() - t0
    if not ok:
        _expired(svc, "replay_drain_agent_or_fatal", detail)
        return decline("agent_drain_stuck", detail)
    # 3. the agent-scoped inventory: coarse-grained device memory the tracker tags with this agent
    allocs = sorted(rt.allocations(v.agent, {L.ALLOC_DEVICE}), key=lambda a: a.base)
    out.regions = len(allocs)
    out.footprint_bytes = sum(a.size for a in allocs)
    bad = _uncovered(sig, args, allocs, v.agent)
    if bad:
        return decline("untracked_memory", bad)
    if svc.footprint_budget and out.footprint_bytes > svc.footprint_budget:
        return decline("footprint_budget", f"{out.footprint_bytes} > {svc.footprint_budget} bytes")
    base = L.device_base(v.agent)
    ranges = []
    for a in allocs:
        off = a.base - base
        if ranges and ranges[-1][0] + ranges[-1][1] == off:
            ranges[-1][1] += a.size
        else:
            ranges.append([off, a.size])
    mem = rt.pm.segs[f"mem{v.agent}"].u8
    t0 = time.monotonic_ns()
    try:
        ag.snap(mem, ranges, out.footprint_bytes)
    except MemoryError as exc:
        ag.buf = None
        return decline("snapshot_failed", f"host memory: {exc}")
    STATS["snap_ns"] += time.monotonic_ns() - t0
    STATS["snaps"] += 1
    STATS["snap_bytes"] += out.footprint_bytes
    # 4. localized context control for the loop, then the passes
    R._tls.base = {c: c._active for c in list(R.Context._all)}
    R._tls.overrides = {}
    fired = True
    try:
        fired = _passes(st, ag, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname, data, n,
                        cont, user, out, mem)
    finally:
        R._tls.overrides = None
        R._tls.base = None
    if fired:
        app.subtract(1)                     # the application's completion signal, exactly once
    v.last_signal = app
    v.last_engine = "aql"
    return out, None


def _uncovered(sig, args, allocs, agent) -> str:
    """Why a pointer argument lies outside the snapshot, or ''."""
    bases = [a.base for a in allocs]
    for (name, _ty, ptr), val in zip(sig.args, args):
        if not ptr or not val:
            continue
        i = bisect.bisect_right(bases, val) - 1
        if i < 0 or val >= allocs[i].base + allocs[i].size:
            where = ("fine-grained host memory" if L.HOST_POOL_BASE <= val < L.KERNARG_BASE
                     else f"not a tracked coarse-grained allocation of agent {agent}")
            return f"argument {name}={val:#x}: {where}"
    return ""


def _sync(rt, s, q, b, slices: int, what: str):
    """Wait for ``s`` to reach 0 in slices of ``queue_sync_slice_s`` (a Queue::sync() each); an
    expired slice warns with the number of kernels still active. (ok, detail)."""
    for i in range(slices):
        if s.wait(HSA_SIGNAL_CONDITION_EQ, 0, b.queue_sync_slice_s, check=q.check) == 0:
            return True, ""
        active = q.load_write_index() - q.load_read_index()
        STATS["slice_warnings"] += 1
        _warn(f"{what}: queue sync slice {i + 1}/{slices} ({b.queue_sync_slice_s} s) expired; "
              f"{active} kernel(s) still active on queue {q.slot} of agent {q.agent.index}")
    total = slices * b.queue_sync_slice_s
    return False, (f"queue {q.slot} of agent {q.agent.index} did not drain in {slices} x "
                   f"{b.queue_sync_slice_s} s = {total:g} s ({q.describe()})")


def _drain_agent(rt, ag, b):
    """Poll every queue of the agent until none has work or a handler in flight; the queue list is
    re-read on every poll and nothing is held across the sleep."""
    deadline = time.monotonic() + b.agent_drain_timeout_s
    while True:
        busy = []
        for q in list(rt.queues):
            if q.destroyed or q.agent.index != ag.index or q.status or not int(q.desc["active"][0]):
                continue
            d = q.load_write_index() - q.load_read_index()
            if d > 0:
                busy.append(f"queue {q.slot} ({'sdma' if q.kind == L.QKIND_SDMA else 'aql'}): {d} packet(s)")
        h = ag.handlers_in_flight()
        if not busy and not h:
            return True, ""
        if time.monotonic() > deadline:
            return False, (f"agent {ag.index} still has work in flight after {b.agent_drain_timeout_s:g} s "
                           f"(agent_drain_timeout_s): {', '.join(busy) or 'no queue'}; {h} async handler(s)")
        time.sleep(b.agent_drain_poll_s)


class _Pass:
    __slots__ = ("done", "cancelled")

    def __init__(self):
        self.done = threading.Event()
        self.cancelled = False


def _pass_handler(value, arg):
    st, ag, w, blk, svcs, ids, did, kname, p, psig = arg
    try:
        if not w.cancelled:
            STATS["pass_kernel_ns"] += psig.end_ts - psig.start_ts  # device time of the pass's kernel
        if blk is not None and not w.cancelled:
            _deliver(st, blk[1], svcs, ids, did, ag.index, kname, p)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    finally:
        if blk is not None:
            st.block_put(blk[0])
        with ag.ilock:
            ag.pass_inflight -= 1
        w.done.set()
    return False


def _passes(st, ag, svc, v, kobj, sig, args, grid, block, gseg, dims, did, kname, data, n, cont, user,
            out, mem) -> bool:
    """The pass loop. Returns whether the host should fire the application's signal now."""
    rt, b, q = v.rt, svc.bounds, v.queue
    total = n
    p = 0
    while True:
        data.current_pass, data.total_passes, data.user_data = p, total, user
        R._call_tool(svc.callback, R.PASS, R.ENTER, data, armed=True)
        svcs, ids = _counting(st)
        blk = st.block_get(ids) if ids else None
        psig = st.sig_get(1)
        with ag.ilock:
            if ag.pass_inflight:
                raise AssertionError(f"replay dispatch {did} pass {p}: {ag.pass_inflight} async handler(s) "
                                     f"of an earlier pass still in flight (exactly one per pass)")
            ag.pass_inflight = 1
        w = _Pass()
        _q, idx = _submit(v, kobj, sig, args, grid, block, gseg, dims, psig.handle, blk[0] if blk else 0)
        q.ring_doorbell(idx)
        STATS["passes"] += 1
        rt.async_handler.register(psig, HSA_SIGNAL_CONDITION_EQ, 0, _pass_handler,
                                  (st, ag, w, blk, svcs, ids, did, kname, p, psig))
        try:
            ok, detail = _drain_pass(rt, psig, q, b, w)
        except HsaError as exc:             # the pass faulted (or the device is gone)
            w.cancelled = True
            psig.store(0)                   # lets the handler run (and unregister) at once
            out.status, out.reason, out.executed = "failed", str(exc), p + 1
            return False                    # the stream is in error: its sync reports it
        out.executed = p + 1
        if not ok:
            _expired(svc, "replay_drain_or_fatal", detail)
            # decline: no further pass and no restore; the stuck pass completes the application's
            # signal through a barrier behind it, exactly once, whenever it finishes
            out.status, out.reason = "declined", f"pass_drain_stuck ({detail})"
            j = q.add_write_index(1)
            q.wait_for_space(j)
            q.write_barrier(j, MARKER_HEADER, [psig.handle], data.completion_signal.handle)
            q.ring_doorbell(j)
            return False
        st.sig_put(psig)
        R._call_tool(svc.callback, R.PASS, R.EXIT, data)
        if total and p + 1 >= total:
            break
        if p + 1 >= b.open_loop_max_passes:
            _warn(f"dispatch {did}: open-ended replay stopped at open_loop_max_passes={b.open_loop_max_passes}")
            break
        if cont is not None and not R._call_tool(cont, data):
            break
        t0 = time.monotonic_ns()
        ag.restore(mem)
        STATS["restore_ns"] += time.monotonic_ns() - t0
        STATS["restores"] += 1
        STATS["restore_bytes"] += out.footprint_bytes
        out.restores += 1
        p += 1
    return True


def _drain_pass(rt, psig, q, b, w):
    """replay_drain_or_fatal: the pass's completion, then its async handler, in slices."""
    for i in range(b.pass_drain_slices):
        t_end = time.monotonic() + b.queue_sync_slice_s
        if psig.wait(HSA_SIGNAL_CONDITION_EQ, 0, b.queue_sync_slice_s, check=q.check) == 0:
            rt.async_handler.kick()
            if w.done.wait(max(0.0, t_end - time.monotonic())):
                return True, ""
        active = q.load_write_index() - q.load_read_index()
        STATS["slice_warnings"] += 1
        _warn(f"replay pass drain: queue sync slice {i + 1}/{b.pass_drain_slices} ({b.queue_sync_slice_s} s) "
              f"expired; {active} kernel(s) still active on queue {q.slot} of agent {q.agent.index}")
    return False, (f"the pass's async handler on queue {q.slot} of agent {q.agent.index} did not finish in "
                   f"{b.pass_drain_slices} x {b.queue_sync_slice_s} s ({q.describe()})")
