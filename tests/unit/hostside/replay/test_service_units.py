"""Units of the kernel-replay service that need no platform: the error family, the statistics
snapshot and its lock, the context registry (pruning, destroy, order) and localized context control,
the interceptor hook's installation, and the counters tool's handling of a missing program.

Nothing here calls ``replay.configure`` (once per process: scenario programs do that); a test that
installs the interceptor removes it again."""
import dataclasses
import gc
import subprocess
import sys
import threading

import pytest

from hostside import clr, replay
from hostside.replay import _context, _window
from hostside.replay._types import StatCounters
from shm_layout import errors
from tests.paths import ROOT


def test_replay_error_is_the_error_family():
    assert issubclass(replay.ReplayError, errors.ReplayError)
    assert issubclass(replay.ReplayError, errors.HdemuError)
    with pytest.raises(errors.ReplayError, match="unknown bounds"):
        replay.configure(lambda *a: None, nope=1)
    with pytest.raises(errors.ReplayError, match="policy"):
        replay.configure(lambda *a: None, policy="maybe")
    assert not replay.is_configured() and replay._service is None


def test_statistics_is_a_frozen_snapshot():
    st = replay.statistics()
    assert isinstance(st, replay.ReplayStatistics)
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.passes = 1
    d = dataclasses.asdict(st)
    assert {"windows", "passes", "snaps", "restores", "snap_bytes", "snap_ns", "restore_bytes", "restore_ns",
            "queue_drain_ns", "agent_drain_ns", "pass_kernel_ns", "slice_warnings"} <= set(d)


def test_stat_counters_are_exact_under_threads():
    c = StatCounters()
    n, per = 4, 5000

    def work():
        for _ in range(per):
            c.add(passes=1, restore_bytes=3)

    ts = [threading.Thread(target=work) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    s = c.snapshot()
    assert (s.passes, s.restore_bytes) == (n * per, 3 * n * per)
    with pytest.raises(KeyError):
        c.add(pases=1)                       # a misspelt counter is a bug, never ignored


def test_unreferenced_and_destroyed_contexts_leave_the_registry():
    a = replay.Context("a")
    b = replay.Context("b")
    assert [c.name for c in _context.live_contexts() if c.name in ("a", "b")] == ["a", "b"]
    del b
    gc.collect()
    assert [c.name for c in _context.live_contexts() if c.name in ("a", "b")] == ["a"]
    a.destroy()
    assert a not in _context.live_contexts()
    with pytest.raises(replay.ReplayError, match="destroyed"):
        a.start()


def test_counting_contexts_are_held_until_destroy_and_keep_creation_order():
    before = clr.interceptor()
    try:
        first, second = replay.Context("first"), replay.Context("second")
        s2 = replay.DispatchCounting(second, ["WAVEFRONTS"], lambda rec: None)     # attached first
        s1 = replay.DispatchCounting(first, ["WORKGROUPS", "WAVEFRONTS"], lambda rec: None)
        assert clr.interceptor() is not None                 # counting alone installs the interceptor
        first.start()
        second.start()
        assert _context.active_services() == [s1, s2]        # context creation order, not attach order
        ref = [second]
        del second
        gc.collect()
        assert ref[0] in _context._observed                  # held: its counting must not stop at GC
        second = ref.pop()
        second.stop()
        assert _context.active_services() == [s1]
        first.destroy()
        second.destroy()
        assert _context.active_services() == [] and first.services == ()
    finally:
        clr.set_interceptor(before)


def test_install_binds_the_service_and_is_idempotent():
    before = clr.interceptor()
    try:
        _window.install(None)
        hook = clr.interceptor()
        assert hook.func is _window.intercept and hook.args == (None,)
        _window.install(None)
        assert clr.interceptor() is hook                     # same binding: not replaced
        marker = object()
        _window.install(marker)
        assert clr.interceptor().args == (marker,)
    finally:
        clr.set_interceptor(before)


def test_localized_toggles_are_armed_only_in_pass_enter_and_stay_on_this_thread():
    on, off = replay.Context("on"), replay.Context("off")
    on.start()
    seen = {}
    try:
        with _context.localized():
            with pytest.raises(replay.ReplayError, match="PASS ENTER"):
                on.stop()                                     # not armed
            _context.call_tool(on.stop, armed=True)           # armed: a local toggle
            assert on.active is False and on.globally_active is True
            t = threading.Thread(target=lambda: seen.setdefault("other", on.active))
            t.start()
            t.join()
            with pytest.warns(RuntimeWarning, match="was not active when the replay loop began"):
                _context.call_tool(off.start, armed=True)     # reported, not raised, by call_tool
        assert seen["other"] is True and on.active is True   # the loop's overrides are gone
    finally:
        on.destroy()
        off.destroy()


@pytest.mark.parametrize("args, says", [
    (["--", "python", "no/such/prog.py"], "no such program: no/such/prog.py"),
    (["--", "-m", "no_such_pkg_xyz.mod"], "cannot find module 'no_such_pkg_xyz.mod'"),
])
def test_counters_tool_missing_program_is_one_line(args, says):
    p = subprocess.run([sys.executable, "-m", "hostside.replay.counters", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hdemu counters: {says}"), p.stderr
    assert p.stdout == ""
