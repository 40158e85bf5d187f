"""The kernel-replay interceptor and its window (public face: ``hostside.replay``).

Why it looks like this (rationale; the spec is ``../shared/seeds/000_*.txt``):

* Everything runs on the submitting thread: there is no replay worker. ``VirtualGPU.launch`` calls
  ``intercept`` once ``install()`` has put it on the kernel write path (``clr.set_interceptor``),
  bound to the configured service (None: counting only). This module never imports the service:
  the service calls ``install()``; the window gets the service as an argument.
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
* A dispatch travels as the command layer's frozen ``clr.Dispatch``; a window's fixed parameters as
  one frozen ``_Plan``; what an async handler delivers as one frozen ``_Delivery``.
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
import logging
import os
import sys
import threading
import time

from shm_layout import counters as C
from shm_layout import layouts as L

from .. import clr
from ..hsa import HSA_SIGNAL_CONDITION_EQ, HostWaitTimeout, HsaError
from . import _context, _diagnostics
from ._fence import FENCE, taint
from ._state import _Agent, _State, state
from ._types import CONFIG, ENTER, EXIT, PASS, REENTRANT_LOCK_TIMEOUT_S, CounterRecord, Outcome, ReplayData, StatCounters

__all__ = ["install", "intercept", "STATS"]
_log = logging.getLogger("hdemu.replay")

#: The service's counters (``replay.statistics()`` snapshots them), process-wide.
STATS = StatCounters()


def install(service) -> None:
    """Put the interceptor on the kernel write path, bound to ``service`` (the configured
    ``_api._Service``, or None for counting only). Idempotent; the caller serialises calls."""
    cur = clr.interceptor()
    if isinstance(cur, functools.partial) and cur.func is intercept and cur.args == (service,):
        return
    clr.set_interceptor(functools.partial(intercept, service))


def _warn(msg: str) -> None:
    print(f"hdemu replay: warning: {msg}", file=sys.stderr, flush=True)


_warned: set = set()
_warned_lock = threading.Lock()


def _warn_once(key: str, msg: str) -> None:
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    _warn(msg)


def _fatal(msg: str) -> None:
    """The document's ROCP_FATAL: say which wait ran out, then abort the process."""
    sys.stderr.write(f"hdemu replay FATAL: {msg}\n")
    sys.stderr.flush()
    os.abort()


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    """The fixed parameters of one candidate dispatch's window."""
    st: _State
    ag: _Agent
    svc: object                 # the configured service (_api._Service)
    v: clr.VirtualGPU
    d: clr.Dispatch
    did: int                    # the service's dispatch id
    kname: str
    data: ReplayData            # the callbacks' payload (mutable; the reference is fixed)
    passes: int                 # replay_pass_count as the tool set it (0 = open-ended)
    cont: object                # the continue callback, or None
    user: object                # user_data as CONFIG ENTER left it


@dataclasses.dataclass(frozen=True, slots=True)
class _Delivery:
    """What a counted dispatch's (or a pass's) async handler delivers: the counter-request block
    (address, record view; None when nothing is counted) and the services that asked for it."""
    st: _State
    ag: _Agent
    did: int
    kname: str
    svcs: tuple
    ids: tuple
    blk: tuple | None


# -- submission ------------------------------------------------------------------------------------
def _counting(st: _State):
    """(services, counter ids to request) of the DispatchCounting services active on this thread."""
    svcs = _context.active_services()
    if not svcs:
        return (), ()
    ids = tuple(dict.fromkeys(i for s in svcs for i in s.ids))[:st.slots]
    return tuple(svcs), ids


def _deliver(dlv: _Delivery, replay_pass) -> None:
    rec = dlv.blk[1]
    n = int(rec["n_written"][0])
    out = rec["out"][0]
    ids = dlv.ids
    got = {ids[j]: int(out[j]) for j in range(min(n, len(ids)))}
    ddid = int(rec["dispatch_id"][0])
    for s in dlv.svcs:
        values = {C.COUNTER_NAMES[c]: got.get(c) for c in s.ids}
        _context.call_tool(s.callback, CounterRecord(dlv.did, ddid, dlv.ag.index, dlv.kname, replay_pass, values))


def _forward(value, arg):
    """Async handler of a counted, non-replayed dispatch: records, then the application's signal."""
    dlv, app, psig = arg
    st, ag = dlv.st, dlv.ag
    try:
        _deliver(dlv, None)
    except Exception:  # noqa: BLE001 - the application's completion below must still happen
        _log.exception("kernel replay: delivering the counters of dispatch %d (%s) failed", dlv.did, dlv.kname)
    finally:
        with ag.ilock:
            ag.fwd.pop(psig.slot, None)
        app.subtract(1)
        st.sig_put(psig)
        st.block_put(dlv.blk[0])
    return False


def _submit_app(st: _State, v, d: clr.Dispatch, did: int, app=None, publish: bool = True) -> int:
    """Submit the application's dispatch once (caller holds ``v.lock``), counting if a context asks."""
    svcs, ids = _counting(st)
    if app is None:
        app = v._next_signal()
    if ids:
        STATS.add(counted=1)
        ag = st.agents[v.agent]
        blk = st.block_get(ids)
        psig = st.sig_get(1)
        q, idx = v.write_dispatch_locked(d, psig.handle, blk[0])
        with ag.ilock:
            ag.fwd[psig.slot] = v.queue
        dlv = _Delivery(st, ag, did, st.kernel_name(d.kobj), svcs, ids, blk)
        v.rt.async_handler.register(psig, HSA_SIGNAL_CONDITION_EQ, 0, _forward, (dlv, app, psig))
    else:
        q, idx = v.write_dispatch_locked(d, app.handle, 0)
    v.last_signal = app
    v.last_engine = "aql"
    if publish:
        v._publish(q, idx)
    else:
        q.ring_doorbell(idx)
    return idx


# -- the interceptor -------------------------------------------------------------------------------
def intercept(svc, v, d: clr.Dispatch):
    """The hook ``VirtualGPU.launch`` calls (bound to ``svc`` by ``install``); returns the packet id
    (None for a replayed dispatch, which has completed when this returns)."""
    sig, args = d.sig, d.args
    if len(args) != len(sig.args):
        sig.pack_into(bytearray(max(sig.size, 1)), 0, args)     # raises the usual SignatureError
    if sig.size:
        sig.struct.pack(*args)              # a bad argument fails here, before any state changes
    st = state(v.rt)
    if _context.in_callback():
        return _reentrant(st, svc, v, d)
    if svc is None:                         # counting only: no gate
        with v.lock:
            return _submit_app(st, v, d, st.next_id())
    return _candidate(st, svc, v, d)


def _reentrant(st: _State, svc, v, d: clr.Dispatch):
    ag = st.agents[v.agent]
    did = st.next_id()
    got = False if ag.lock.held_by_me() else ag.lock.try_acquire_read()
    try:
        if not v.lock.acquire(timeout=REENTRANT_LOCK_TIMEOUT_S):
            raise HostWaitTimeout(f"a dispatch from inside a tool callback waited {REENTRANT_LOCK_TIMEOUT_S} s "
                                  f"(REENTRANT_LOCK_TIMEOUT_S) for its stream")
        try:
            idx = _submit_app(st, v, d, did)
        finally:
            v.lock.release()
    finally:
        if got:
            ag.lock.release_read()
    taint(ag)                               # the window open on this agent (any thread's) is not trustworthy
    if svc is not None:
        STATS.add(reentrant=1, declined=1)
        svc.record(Outcome(did, v.agent, st.kernel_name(d.kobj), "declined", "reentrant_dispatch", executed=1))
    return idx


def _candidate(st: _State, svc, v, d: clr.Dispatch):
    kname = st.kernel_name(d.kobj)
    did = st.next_id()
    data = ReplayData(dispatch_id=did, agent=v.agent, queue=v.queue.slot, kernel=kname, kernel_object=d.kobj,
                      grid=tuple(d.grid), block=tuple(d.block), continue_callback=svc.continue_callback)
    _context.call_tool(svc.callback, CONFIG, ENTER, data)
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
        limit = v.rt.wait_timeout_s
        if not ag.lock.acquire_read(limit):
            raise HostWaitTimeout(f"agent {v.agent}'s replay gate stayed closed for {limit} s "
                                  f"(HDEMU_WAIT_TIMEOUT_S)")
        try:
            with v.lock:
                idx = _submit_app(st, v, d, did)
        finally:
            ag.lock.release_read()
        STATS.add(ordinary=1, not_replayed=1)
        out = Outcome(did, v.agent, kname, "not_replayed", why,
                      requested=n if isinstance(n, int) and not isinstance(n, bool) else None)
    else:
        out, idx = _window(_Plan(st, st.agents[v.agent], svc, v, d, did, kname, data, n, cont, user))
        STATS.add(**{out.status: 1})
    svc.record(out)
    data.outcome = out
    data.user_data = user
    data.current_pass = data.total_passes = None
    _context.call_tool(svc.callback, CONFIG, EXIT, data)
    return idx


def _window(p: _Plan):
    v, ag = p.v, p.ag
    limit = v.rt.wait_timeout_s
    if not ag.lock.acquire_write(limit):
        raise HostWaitTimeout(f"agent {v.agent}'s replay gate (writer) not acquired in {limit} s "
                              f"(HDEMU_WAIT_TIMEOUT_S)")
    try:
        if not v.lock.acquire(timeout=limit):
            raise HostWaitTimeout(f"stream lock of queue {v.queue.slot} not acquired in {limit} s "
                                  f"(HDEMU_WAIT_TIMEOUT_S)")
        frame = _diagnostics.enter_replay_window(v.agent)
        ag.frame = frame
        try:
            STATS.add(windows=1)
            out, idx = _window_locked(p)
            out.reentrancy = frame.reentrancy_observed
            return out, idx
        finally:
            ag.frame = None
            _diagnostics.exit_replay_window(v.agent)
            if p.svc.copy_fence:
                FENCE.close_window(v.agent)
            v.lock.release()
    finally:
        ag.lock.release_write()


def _expired(svc, wait: str, msg: str) -> None:
    if svc.policy == "fatal":
        _fatal(f"{wait}: {msg}")


def _window_locked(p: _Plan):
    st, ag, svc, v = p.st, p.ag, p.svc, p.v
    rt, b = v.rt, svc.bounds
    out = Outcome(p.did, v.agent, p.kname, "replayed", requested=p.passes, executed=0)
    v.flush()
    app = v._next_signal()                  # captured: never handed to the device (suppressed)
    p.data.completion_signal = app

    def decline(reason, detail=""):
        out.status, out.reason, out.executed = "declined", reason + (f" ({detail})" if detail else ""), 1
        return out, _submit_app(st, v, p.d, p.did, app=app, publish=False)

    # 1. queue drain: a barrier packet on this queue (after the stream's SDMA work, if it was last)
    t0 = time.monotonic_ns()
    q = v.queue
    dep = v._cross_engine_dep("aql")
    dsig = st.sig_get(1)
    idx = q.add_write_index(1)
    q.wait_for_space(idx)
    q.write_barrier(idx, clr.MARKER_HEADER, [dep] if dep else [], dsig.handle)
    q.ring_doorbell(idx)
    v.last_engine = "aql"
    ok, detail = _sync(dsig, q, b, b.queue_drain_slices, "queue drain")
    STATS.add(queue_drain_ns=time.monotonic_ns() - t0)
    st.sig_put(dsig)                        # reused only once it reads 0 (sig_get checks)
    if not ok:
        _expired(svc, "queue drain (barrier on the replaying queue)", detail)
        return decline("queue_drain_stuck", detail)
    # 2. agent-wide drain: no queue of this agent (in this process) has work or a handler in flight
    t0 = time.monotonic_ns()
    ok, detail = _drain_agent(rt, ag, b)
    STATS.add(agent_drain_ns=time.monotonic_ns() - t0)
    if not ok:
        _expired(svc, "replay_drain_agent_or_fatal", detail)
        return decline("agent_drain_stuck", detail)
    # 2b. the copy fence: new async copies on this agent wait; those in flight must finish
    if svc.copy_fence and not FENCE.open_window(v.agent, b.copy_fence_timeout_s):
        n = FENCE.copies_in_flight(v.agent)
        _warn_once("copy_fence", f"agent {v.agent}: {n} async cop(ies) still in flight after "
                   f"{b.copy_fence_timeout_s:g} s (copy_fence_timeout_s); the dispatch runs once without replay")
        return decline("copy_fence_stuck", f"{n} async copies in flight after {b.copy_fence_timeout_s:g} s")
    # 3. the agent-scoped inventory: coarse-grained device memory the tracker tags with this agent
    allocs = sorted(rt.allocations(v.agent, {L.ALLOC_DEVICE}), key=lambda a: a.base)
    out.regions = len(allocs)
    out.footprint_bytes = sum(a.size for a in allocs)
    bad, nbad, bbad = _uncovered(p.d, allocs, v.agent, rt)
    out.untracked_regions, out.untracked_bytes = nbad, bbad
    if bad:
        return decline("untracked_memory", bad)
    pol = _diagnostics.resolve_policy()
    budget = svc.footprint_budget or pol.max_snapshot_bytes
    policy = _diagnostics.ReplayPolicy(pol.decline_on_vmem, pol.decline_on_untracked_pool, budget,
                                       pol.warn_seconds, pol.assumed_gbps)
    if _diagnostics.check_admission(_diagnostics.Footprint(out.footprint_bytes, out.regions), p.passes,
                                    policy) != "none":
        return decline("footprint_budget", f"{out.footprint_bytes} > {budget} bytes")
    t0 = time.monotonic_ns()
    try:
        snapshot = ag.snap(rt)
    except MemoryError as exc:
        ag.buf = None
        return decline("snapshot_failed", f"host memory: {exc}")
    out.footprint_bytes, out.regions = snapshot.bytes, len(snapshot.blocks)    # what was captured
    dt = time.monotonic_ns() - t0
    out.snap_seconds = dt / 1e9
    STATS.add(snaps=1, snap_bytes=out.footprint_bytes, snap_ns=dt)
    # 4. localized context control for the loop, then the passes
    with _context.localized():
        fired = _passes(p, out)
    if fired:
        app.subtract(1)                     # the application's completion signal, exactly once
    v.last_signal = app
    v.last_engine = "aql"
    return out, None


def _uncovered(d: clr.Dispatch, allocs, agent, rt):
    """(why the first pointer argument outside the snapshot is, or ''; how many are; their bytes
    where the runtime knows the allocation, else 0)."""
    bases = [a.base for a in allocs]
    why, n, nbytes = "", 0, 0
    for (name, _ty, ptr), val in zip(d.sig.args, d.args):
        if not ptr or not val:
            continue
        i = bisect.bisect_right(bases, val) - 1
        if i < 0 or val >= allocs[i].base + allocs[i].size:
            n += 1
            if not why:
                where = ("fine-grained host memory" if L.HOST_POOL_BASE <= val < L.KERNARG_BASE
                         else f"not a tracked coarse-grained allocation of agent {agent}")
                why = f"argument {name}={val:#x}: {where}"
            info = rt.pointer_info(val)
            nbytes += info.size if info is not None else 0
    return why, n, nbytes


def _sync(s, q, b, slices: int, what: str):
    """Wait for ``s`` to reach 0 in slices of ``queue_sync_slice_s`` (a Queue::sync() each); an
    expired slice warns with the number of kernels still active. (ok, detail)."""
    for i in range(slices):
        if s.wait(HSA_SIGNAL_CONDITION_EQ, 0, b.queue_sync_slice_s, check=q.check) == 0:
            return True, ""
        active = q.load_write_index() - q.load_read_index()
        STATS.add(slice_warnings=1)
        _warn(f"{what}: queue sync slice {i + 1}/{slices} ({b.queue_sync_slice_s} s) expired; "
              f"{active} kernel(s) still active on queue {q.slot} of agent {q.agent.index}")
    total = slices * b.queue_sync_slice_s
    return False, (f"queue {q.slot} of agent {q.agent.index} did not drain in {slices} x "
                   f"{b.queue_sync_slice_s} s = {total:g} s ({q.describe()})")


def _drain_agent(rt, ag: _Agent, b):
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
    """One pass's handoff between the window and the async-handler thread: ``done`` (the handler
    ran) and ``cancelled`` (set by the window before it lets a faulted pass's handler run)."""
    __slots__ = ("done", "cancelled")

    def __init__(self):
        self.done = threading.Event()
        self.cancelled = threading.Event()


def _pass_handler(value, arg):
    dlv, w, i, psig = arg
    try:
        if not w.cancelled.is_set():
            STATS.add(pass_kernel_ns=psig.end_ts - psig.start_ts)   # device time of the pass's kernel
            if dlv.blk is not None:
                _deliver(dlv, i)
    except Exception:  # noqa: BLE001 - the window waits for done below; it must be set
        _log.exception("kernel replay: the async handler of dispatch %d (%s) pass %d failed", dlv.did, dlv.kname, i)
    finally:
        if dlv.blk is not None:
            dlv.st.block_put(dlv.blk[0])
        with dlv.ag.ilock:
            dlv.ag.pass_inflight -= 1
        w.done.set()
    return False


def _passes(p: _Plan, out: Outcome) -> bool:
    """The pass loop. Returns whether the host should fire the application's signal now."""
    st, ag, svc, v, data = p.st, p.ag, p.svc, p.v, p.data
    rt, b, q = v.rt, svc.bounds, v.queue
    total = p.passes
    i = 0
    while True:
        data.current_pass, data.total_passes, data.user_data = i, total, p.user
        data.continue_callback = p.cont     # the CONFIG choice; PASS ENTER/EXIT may replace it for this pass
        _context.call_tool(svc.callback, PASS, ENTER, data, armed=True)
        svcs, ids = _counting(st)
        blk = st.block_get(ids) if ids else None
        psig = st.sig_get(1)
        with ag.ilock:
            if ag.pass_inflight:
                raise AssertionError(f"replay dispatch {p.did} pass {i}: {ag.pass_inflight} async handler(s) "
                                     f"of an earlier pass still in flight (exactly one per pass)")
            ag.pass_inflight = 1
        w = _Pass()
        _q, idx = v.write_dispatch_locked(p.d, psig.handle, blk[0] if blk else 0)
        q.ring_doorbell(idx)
        STATS.add(passes=1)
        dlv = _Delivery(st, ag, p.did, p.kname, svcs, ids, blk)
        rt.async_handler.register(psig, HSA_SIGNAL_CONDITION_EQ, 0, _pass_handler, (dlv, w, i, psig))
        try:
            ok, detail = _drain_pass(rt, psig, q, b, w)
        except HsaError as exc:             # the pass faulted (or the device is gone)
            w.cancelled.set()
            psig.store(0)                   # lets the handler run (and unregister) at once
            out.status, out.reason, out.executed = "failed", str(exc), i + 1
            return False                    # the stream is in error: its sync reports it
        out.executed = i + 1
        if not ok:
            _expired(svc, "replay_drain_or_fatal", detail)
            # decline: no further pass and no restore; the stuck pass completes the application's
            # signal through a barrier behind it, exactly once, whenever it finishes
            out.status, out.reason = "declined", f"pass_drain_stuck ({detail})"
            j = q.add_write_index(1)
            q.wait_for_space(j)
            q.write_barrier(j, clr.MARKER_HEADER, [psig.handle], data.completion_signal.handle)
            q.ring_doorbell(j)
            return False
        st.sig_put(psig)
        _context.call_tool(svc.callback, PASS, EXIT, data)
        if total and i + 1 >= total:
            break
        if i + 1 >= b.open_loop_max_passes:
            _warn(f"dispatch {p.did}: open-ended replay stopped at open_loop_max_passes={b.open_loop_max_passes}")
            break
        cont = data.continue_callback       # this pass's: an override made during the pass decides now
        if cont is None:
            if not total:
                break                       # an open-ended loop with no one to ask ends
        elif not callable(cont) or not _context.call_tool(cont, data):
            break
        t0 = time.monotonic_ns()
        out.skipped_regions = max(out.skipped_regions, ag.restore())
        dt = time.monotonic_ns() - t0
        out.restore_seconds += dt / 1e9
        STATS.add(restores=1, restore_bytes=out.footprint_bytes, restore_ns=dt)
        out.restores += 1
        i += 1
    return True


def _drain_pass(rt, psig, q, b, w: _Pass):
    """replay_drain_or_fatal: the pass's completion, then its async handler, in slices."""
    for i in range(b.pass_drain_slices):
        t_end = time.monotonic() + b.queue_sync_slice_s
        if psig.wait(HSA_SIGNAL_CONDITION_EQ, 0, b.queue_sync_slice_s, check=q.check) == 0:
            rt.async_handler.kick()
            if w.done.wait(max(0.0, t_end - time.monotonic())):
                return True, ""
        active = q.load_write_index() - q.load_read_index()
        STATS.add(slice_warnings=1)
        _warn(f"replay pass drain: queue sync slice {i + 1}/{b.pass_drain_slices} ({b.queue_sync_slice_s} s) "
              f"expired; {active} kernel(s) still active on queue {q.slot} of agent {q.agent.index}")
    return False, (f"the pass's async handler on queue {q.slot} of agent {q.agent.index} did not finish in "
                   f"{b.pass_drain_slices} x {b.queue_sync_slice_s} s ({q.describe()})")
