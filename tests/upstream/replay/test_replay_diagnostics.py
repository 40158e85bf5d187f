"""rocprofiler-sdk kernel_replay/tests/replay_diagnostics.cpp: the replay window's admission
decisions, its outcome line, the thread-scoped replay-window marker and the per-agent dispatch lock
(``hostside.replay._diagnostics``), and the restore identity and module-liveness gates
(``hostside.replay._snapshot``). Pure host logic; the environment-driven policy cases run a child
interpreter with ``HDEMU_REPLAY_*`` set (upstream: ``ROCPROFILER_KERNEL_REPLAY_*``)."""
import json
import subprocess
import sys
import threading

import pytest

from hostside.replay import Outcome, _diagnostics as D, _snapshot as S
from tests.paths import ROOT
from tests.scenarios.runner import child_env

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/replay_diagnostics.cpp"
MiB = 1024 * 1024
pytestmark = pytest.mark.timeout(60)


def permissive_policy():
    return D.ReplayPolicy(decline_on_vmem=False, decline_on_untracked_pool=False, max_snapshot_bytes=0,
                          warn_seconds=0.0, assumed_gbps=4.0)


def vmem_only(b, r):
    return D.UntrackedSummary(vmem_bytes=b, vmem_regions=r)


def pool_only(b, r):
    return D.UntrackedSummary(pool_bytes=b, pool_regions=r)


def footprint(b, r):
    return D.Footprint(b, r)


# -- untracked-memory policy ---------------------------------------------------------------------
def test_kernel_replay_diagnostics_no_untracked_memory_admits_replay():
    assert D.check_untracked(D.UntrackedSummary(), D.ReplayPolicy()) == "none"


def test_kernel_replay_diagnostics_live_vmem_mapping_declines_by_default():
    policy = D.ReplayPolicy()
    assert policy.decline_on_vmem
    assert D.check_untracked(vmem_only(64 * MiB, 1), policy) == "untracked_memory"


def test_kernel_replay_diagnostics_live_vmem_mapping_admits_when_override_set():
    assert D.check_untracked(vmem_only(64 * MiB, 1), D.ReplayPolicy(decline_on_vmem=False)) == "none"


def test_kernel_replay_diagnostics_untracked_pool_memory_admits_by_default():
    policy = D.ReplayPolicy()
    assert not policy.decline_on_untracked_pool
    assert D.check_untracked(pool_only(8 * MiB, 3), policy) == "none"


def test_kernel_replay_diagnostics_untracked_pool_memory_declines_under_strict_policy():
    policy = D.ReplayPolicy(decline_on_untracked_pool=True)
    assert D.check_untracked(pool_only(8 * MiB, 3), policy) == "untracked_memory"


def test_kernel_replay_diagnostics_zero_byte_vmem_region_still_declines():
    assert D.check_untracked(vmem_only(0, 1), D.ReplayPolicy()) == "untracked_memory"


def test_kernel_replay_diagnostics_bytes_without_regions_does_not_decline():
    assert D.check_untracked(vmem_only(MiB, 0), D.ReplayPolicy()) == "none"


def test_kernel_replay_diagnostics_untracked_summary_any_reflects_both_classes():
    assert not D.UntrackedSummary().any()
    assert vmem_only(MiB, 1).any()
    assert pool_only(MiB, 1).any()
    assert not vmem_only(MiB, 0).any()


# -- footprint admission -------------------------------------------------------------------------
def test_kernel_replay_diagnostics_footprint_within_budget_is_admitted():
    p = permissive_policy()
    p.max_snapshot_bytes = 256 * MiB
    assert D.check_admission(footprint(64 * MiB, 4), 4, p) == "none"


def test_kernel_replay_diagnostics_footprint_over_budget_is_declined():
    p = permissive_policy()
    p.max_snapshot_bytes = 256 * MiB
    assert D.check_admission(footprint(512 * MiB, 4), 4, p) == "footprint_budget"


def test_kernel_replay_diagnostics_footprint_exactly_at_budget_is_admitted():
    p = permissive_policy()
    p.max_snapshot_bytes = 256 * MiB
    assert D.check_admission(footprint(256 * MiB, 1), 2, p) == "none"


def test_kernel_replay_diagnostics_zero_budget_means_unlimited():
    p = permissive_policy()
    p.max_snapshot_bytes = 0
    assert D.check_admission(footprint(64 * 1024 * MiB, 1000), 100, p) == "none"


def test_kernel_replay_diagnostics_pass_count_does_not_affect_the_memory_budget():
    p = permissive_policy()
    p.max_snapshot_bytes = 256 * MiB
    for passes in (0, 1, 2, 64, 1000):
        assert D.check_admission(footprint(64 * MiB, 4), passes, p) == "none", passes


def test_kernel_replay_diagnostics_indefinite_pass_count_is_admitted_and_projected(capsys):
    p = permissive_policy()
    p.warn_seconds = 1.0
    assert D.check_admission(footprint(8 * 1024 * MiB, 1), 0, p) == "none"
    assert "2 passes" in capsys.readouterr().err       # projected as two passes, and warned


def test_kernel_replay_diagnostics_projected_time_warning_never_declines():
    p = permissive_policy()
    p.warn_seconds = 0.000001
    assert D.check_admission(footprint(MiB, 1), 2, p) == "none"


def test_kernel_replay_diagnostics_empty_footprint_is_admitted():
    assert D.check_admission(footprint(0, 0), 8, D.ReplayPolicy()) == "none"


# -- resolved policy -----------------------------------------------------------------------------
def test_kernel_replay_diagnostics_resolved_policy_is_usable():
    policy = D.resolve_policy()
    assert policy.assumed_gbps > 0.0
    assert policy.warn_seconds >= 0.0
    assert policy is D.resolve_policy()


# -- environment-driven policy (each case in a child interpreter) ------------------------------------
def _policy_in_child(env: dict) -> dict:
    code = ("import dataclasses, json; from hostside.replay import _diagnostics as D; "
            "print(json.dumps(dataclasses.asdict(D.resolve_policy())))")
    e = child_env({k: None for k in ("HDEMU_REPLAY_DECLINE_ON_VMEM", "HDEMU_REPLAY_DECLINE_ON_UNTRACKED_POOL",
                                      "HDEMU_REPLAY_MAX_SNAPSHOT_BYTES", "HDEMU_REPLAY_WARN_SECONDS",
                                      "HDEMU_REPLAY_ASSUMED_GBPS")} | env)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=e, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_kernel_replay_policy_env_decline_on_vmem_can_be_turned_off():
    assert _policy_in_child({"HDEMU_REPLAY_DECLINE_ON_VMEM": "0"})["decline_on_vmem"] is False


def test_kernel_replay_policy_env_decline_on_untracked_pool_can_be_turned_on():
    assert _policy_in_child({"HDEMU_REPLAY_DECLINE_ON_UNTRACKED_POOL": "1"})["decline_on_untracked_pool"] is True


def test_kernel_replay_policy_env_snapshot_budget_can_be_set_explicitly():
    assert _policy_in_child({"HDEMU_REPLAY_MAX_SNAPSHOT_BYTES": "12345678"})["max_snapshot_bytes"] == 12345678


def test_kernel_replay_policy_env_warn_threshold_and_bandwidth_can_be_set():
    p = _policy_in_child({"HDEMU_REPLAY_WARN_SECONDS": "42.5", "HDEMU_REPLAY_ASSUMED_GBPS": "7.25"})
    assert p["warn_seconds"] == 42.5 and p["assumed_gbps"] == 7.25


def test_kernel_replay_policy_env_a_nonpositive_bandwidth_is_rejected():
    for v in ("0", "-1"):
        assert _policy_in_child({"HDEMU_REPLAY_ASSUMED_GBPS": v})["assumed_gbps"] == D.ReplayPolicy().assumed_gbps


def test_kernel_replay_policy_env_the_default_budget_leaves_host_headroom():
    budget = _policy_in_child({})["max_snapshot_bytes"]
    if budget == 0:
        pytest.skip("MemAvailable unreadable; no default budget to check")
    assert budget < 1 << 50


# -- outcome reporting -----------------------------------------------------------------------------
def _outcome(reason="none", **kw):
    status = "replayed" if reason == "none" else "declined"
    base = dict(dispatch_id=0, agent=0, kernel="k", status=status, reason="" if reason == "none" else reason,
                requested=0, executed=0)
    base.update(kw)
    return Outcome(**base)


def test_kernel_replay_diagnostics_every_decline_reason_has_a_distinct_name():
    seen = []
    for name in D.DECLINE_REASON_NAMES:
        assert name and name != "unknown"
        assert name not in seen
        seen.append(name)
    assert len(seen) == 8


def test_kernel_replay_diagnostics_outcome_line_reports_a_successful_replay():
    line = D.format_outcome(_outcome(dispatch_id=42, requested=4, executed=4, footprint_bytes=1234, regions=7))
    for field in ("dispatch_id=42", "outcome=replayed", "reason=none", "requested_passes=4", "executed_passes=4",
                  "footprint_bytes=1234", "footprint_regions=7", "reentrancy=0"):
        assert field in line, line


def test_kernel_replay_diagnostics_outcome_line_reports_a_decline_with_its_cause():
    line = D.format_outcome(_outcome("untracked_memory", dispatch_id=9, requested=8, executed=0,
                                     untracked_vmem_bytes=4096, untracked_vmem_regions=2, untracked_bytes=512,
                                     untracked_regions=1))
    for field in ("outcome=declined", "reason=untracked_memory", "executed_passes=0", "untracked_vmem_bytes=4096",
                  "untracked_vmem_regions=2", "untracked_pool_bytes=512", "untracked_pool_regions=1"):
        assert field in line, line


def test_kernel_replay_diagnostics_outcome_line_flags_reentrancy_on_an_otherwise_clean_replay():
    line = D.format_outcome(_outcome(executed=4, reentrancy=True))
    assert "outcome=replayed" in line and "reentrancy=1" in line, line


def test_kernel_replay_diagnostics_logging_an_outcome_does_not_throw():
    o = _outcome(dispatch_id=1)
    D.log_outcome(o, log=lambda line: None)
    D.log_outcome(_outcome("queue_drain_stuck", dispatch_id=1))


# -- reentrancy marker -----------------------------------------------------------------------------
A, B = 11, 22


@pytest.fixture(autouse=True)
def _no_window_left():
    yield
    while D._stack():                        # a failed assert must not leak a frame into the next test
        D._stack().pop()


def test_kernel_replay_diagnostics_replay_window_marker_tracks_enter_and_exit():
    assert not D.in_replay_window(A)
    D.enter_replay_window(A)
    assert D.in_replay_window(A)
    assert not D.replay_reentrancy_observed(A)
    D.note_replay_reentrancy(A)
    assert D.replay_reentrancy_observed(A)
    D.exit_replay_window(A)
    assert not D.in_replay_window(A)
    D.enter_replay_window(A)
    assert not D.replay_reentrancy_observed(A)
    D.exit_replay_window(A)


def test_kernel_replay_diagnostics_replay_window_marker_is_agent_scoped():
    D.enter_replay_window(A)
    assert D.in_replay_window(A) and not D.in_replay_window(B)
    D.exit_replay_window(A)
    assert not D.in_replay_window(A)


def test_kernel_replay_diagnostics_an_inner_window_on_another_agent_does_not_close_the_outer_one():
    D.enter_replay_window(A)
    D.enter_replay_window(B)
    assert D.in_replay_window(B) and D.in_replay_window(A)
    D.exit_replay_window(B)
    assert not D.in_replay_window(B) and D.in_replay_window(A)
    D.exit_replay_window(A)
    assert not D.in_replay_window(A)


def test_kernel_replay_diagnostics_reentrancy_is_recorded_against_the_window_it_happened_in():
    D.enter_replay_window(A)
    D.note_replay_reentrancy(A)
    D.enter_replay_window(B)
    assert not D.replay_reentrancy_observed(B)
    assert D.replay_reentrancy_observed(A)
    D.exit_replay_window(B)
    assert D.replay_reentrancy_observed(A)
    D.exit_replay_window(A)


def test_kernel_replay_diagnostics_windows_nest_to_the_depth_of_the_agent_count():
    agents = [101, 102, 103, 104]
    for i, a in enumerate(agents):
        D.enter_replay_window(a)
        assert all(D.in_replay_window(b) for b in agents[:i + 1])
    for i in reversed(range(len(agents))):
        D.exit_replay_window(agents[i])
        assert not D.in_replay_window(agents[i])
        assert all(D.in_replay_window(b) for b in agents[:i])


def test_kernel_replay_diagnostics_exiting_without_a_matching_window_is_harmless():
    assert not D.in_replay_window(A)
    D.exit_replay_window(A)
    assert not D.in_replay_window(A)
    D.enter_replay_window(A)
    assert D.in_replay_window(A)
    D.exit_replay_window(A)
    assert not D.in_replay_window(A)


def test_kernel_replay_diagnostics_replay_window_marker_handles_a_zero_agent_handle():
    assert not D.in_replay_window(0)
    D.enter_replay_window(0)
    assert D.in_replay_window(0) and not D.in_replay_window(A)
    D.exit_replay_window(0)
    assert not D.in_replay_window(0)


def test_kernel_replay_diagnostics_replay_window_marker_is_thread_scoped():
    D.enter_replay_window(A)
    seen = []
    t = threading.Thread(target=lambda: seen.append(D.in_replay_window(A)))
    t.start()
    t.join(30)
    assert seen == [False]
    D.exit_replay_window(A)


def test_kernel_replay_diagnostics_concurrent_windows_on_separate_threads_do_not_interfere():
    failures = []
    n = 8

    def worker(h):
        for _ in range(200):
            D.enter_replay_window(h)
            if not D.in_replay_window(h) or D.in_replay_window(h + n):
                failures.append(h)
            D.note_replay_reentrancy(h)
            if not D.replay_reentrancy_observed(h):
                failures.append(h)
            D.exit_replay_window(h)
            if D.in_replay_window(h):
                failures.append(h)

    ts = [threading.Thread(target=worker, args=(1000 + i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert failures == []


def test_kernel_replay_diagnostics_reentrancy_warning_is_emitted_once():
    D._warned[0] = False                       # this process's first occurrence (other tests may have run)
    assert D.should_warn_replay_reentrancy()
    assert not D.should_warn_replay_reentrancy()
    assert not D.should_warn_replay_reentrancy()


# -- the per-agent dispatch lock ---------------------------------------------------------------------
def test_kernel_replay_dispatch_lock_an_ordinary_dispatch_gets_its_agents_lock():
    assert not D.in_replay_window(A)
    m = D.dispatch_lock_for(A)
    assert m is not None and m is D.agent_replay_mutex(A)


def test_kernel_replay_dispatch_lock_an_agent_always_names_the_same_lock():
    assert D.agent_replay_mutex(A) is D.agent_replay_mutex(A)
    assert D.dispatch_lock_for(A) is D.agent_replay_mutex(A)


def test_kernel_replay_dispatch_lock_distinct_agents_have_distinct_locks():
    assert D.agent_replay_mutex(A) is not D.agent_replay_mutex(B)


def test_kernel_replay_dispatch_lock_a_dispatch_inside_its_agents_window_skips_the_lock():
    D.enter_replay_window(A)
    try:
        assert D.dispatch_lock_for(A) is None
    finally:
        D.exit_replay_window(A)
    assert D.dispatch_lock_for(A) is not None


def test_kernel_replay_dispatch_lock_a_dispatch_on_another_agent_still_takes_its_lock():
    D.enter_replay_window(A)
    m = D.dispatch_lock_for(B)
    assert m is not None and m is D.agent_replay_mutex(B)
    D.exit_replay_window(A)


def test_kernel_replay_dispatch_lock_skipping_the_lock_marks_the_enclosing_window():
    D.enter_replay_window(A)
    assert not D.replay_reentrancy_observed(A)
    assert D.dispatch_lock_for(A) is None
    assert D.replay_reentrancy_observed(A)
    D.exit_replay_window(A)


def test_kernel_replay_dispatch_lock_taking_the_lock_marks_nothing():
    D.enter_replay_window(A)
    assert not D.replay_reentrancy_observed(A)
    assert D.dispatch_lock_for(B) is not None
    assert not D.replay_reentrancy_observed(A)
    assert not D.replay_reentrancy_observed(B)
    D.exit_replay_window(A)


def test_kernel_replay_dispatch_lock_the_dispatch_lock_is_the_lock_a_window_holds():
    agent = 0xBEEF
    m = D.dispatch_lock_for(agent)
    assert m is not None
    held, release, acquired = threading.Event(), threading.Event(), threading.Event()

    def window():
        assert D.agent_replay_mutex(agent).acquire_write(30)
        held.set()
        release.wait(30)
        D.agent_replay_mutex(agent).release_write()

    def dispatch():
        if m.acquire_read(30):
            acquired.set()
            m.release_read()

    w = threading.Thread(target=window)
    w.start()
    assert held.wait(30)
    d = threading.Thread(target=dispatch)
    d.start()
    # the absence of the event, asserted without a delay: the reader side is closed while held
    assert not m.try_acquire_read()
    assert not acquired.is_set()
    release.set()
    w.join(30)
    d.join(30)
    assert acquired.is_set()


# -- the restore identity gate (hostside.replay._snapshot.region_is_restorable) ----------------------
SNAP_AGENT = 0xF00D3


def region_addr(offset):
    return 0x200000000 + offset


def inventory_with(ptr, size, generation):
    return {ptr: S.AllocInfo(size, SNAP_AGENT, generation)}


def test_kernel_replay_restore_gate_the_captured_allocation_is_restorable():
    ptr = region_addr(0x0)
    assert S.region_is_restorable(inventory_with(ptr, 4 * MiB, 7), ptr, 4 * MiB, 7)


def test_kernel_replay_restore_gate_a_freed_allocation_is_not_restorable():
    assert not S.region_is_restorable({}, region_addr(0x1000), 4 * MiB, 7)


def test_kernel_replay_restore_gate_an_address_reused_by_a_different_allocation_is_not_restorable():
    ptr = region_addr(0x2000)
    assert not S.region_is_restorable(inventory_with(ptr, 4 * MiB, 8), ptr, 4 * MiB, 7), \
        "restoring here would write a dead buffer's bytes over live application data"


def test_kernel_replay_restore_gate_a_lower_generation_at_the_same_address_is_not_restorable():
    ptr = region_addr(0x2800)
    assert not S.region_is_restorable(inventory_with(ptr, 4 * MiB, 6), ptr, 4 * MiB, 7)


def test_kernel_replay_restore_gate_a_shrunk_allocation_is_not_restorable():
    ptr = region_addr(0x3000)
    assert not S.region_is_restorable(inventory_with(ptr, MiB, 7), ptr, 4 * MiB, 7)


def test_kernel_replay_restore_gate_an_allocation_grown_at_the_same_base_is_not_restorable():
    ptr = region_addr(0x4000)
    assert not S.region_is_restorable(inventory_with(ptr, 16 * MiB, 9), ptr, 4 * MiB, 7), \
        "the recorded bytes would fit, so only the generation stamp rejects this"


def test_kernel_replay_restore_gate_generation_zero_accepts_any_live_allocation_of_that_size():
    ptr = region_addr(0x5000)
    m = inventory_with(ptr, 4 * MiB, 123)
    assert S.region_is_restorable(m, ptr, 4 * MiB, 0)
    assert S.region_is_restorable(m, ptr, MiB, 0), "a prefix of a larger live allocation is still within it"
    assert not S.region_is_restorable(m, ptr, 8 * MiB, 0), "the size check still applies without a generation"


def test_kernel_replay_restore_gate_a_tracked_allocation_is_never_stamped_zero():
    ptr = region_addr(0x6000)
    assert not S.region_is_restorable(inventory_with(ptr, 4 * MiB, 0), ptr, 4 * MiB, 7)


def test_kernel_replay_restore_gate_an_interior_pointer_names_no_region():
    base = region_addr(0x7000)
    m = inventory_with(base, 4 * MiB, 7)
    assert S.region_is_restorable(m, base, 4 * MiB, 7)
    assert not S.region_is_restorable(m, base + MiB, MiB, 7)


def test_kernel_replay_restore_gate_a_zero_length_region_follows_the_liveness_of_its_base():
    ptr = region_addr(0x8000)
    assert S.region_is_restorable(inventory_with(ptr, 4 * MiB, 7), ptr, 0, 7)
    assert not S.region_is_restorable({}, ptr, 0, 7)


def test_kernel_replay_restore_gate_every_ambiguous_case_answers_false():
    ptr = region_addr(0x9000)
    size, gen = 4 * MiB, 42
    cases = [("freed", {}),
             ("reused at the same size", inventory_with(ptr, size, 43)),
             ("reused at a smaller size", inventory_with(ptr, MiB, 43)),
             ("reused at a larger size", inventory_with(ptr, 16 * MiB, 43)),
             ("shrunk in place", inventory_with(ptr, MiB, gen)),
             ("unstamped", inventory_with(ptr, size, 0)),
             ("a different address entirely", inventory_with(region_addr(0xA000), size, gen))]
    for what, m in cases:
        assert not S.region_is_restorable(m, ptr, size, gen), what
    assert S.region_is_restorable(inventory_with(ptr, size, gen), ptr, size, gen)   # the one true case


# -- the module-variable liveness gate (module_region_is_restorable) -----------------------------------
def test_kernel_replay_module_gate_a_variable_in_a_loaded_executable_is_restorable():
    assert S.module_region_is_restorable({11, 22, 33}, 22)


def test_kernel_replay_module_gate_a_variable_whose_executable_was_unloaded_is_not_restorable():
    assert not S.module_region_is_restorable({11, 33}, 22), \
        "restoring here would write into memory the unloaded module has released"


def test_kernel_replay_module_gate_only_the_owning_handle_admits_the_variable():
    assert not S.module_region_is_restorable({1}, 2)
    assert S.module_region_is_restorable({1}, 1)


def test_kernel_replay_module_gate_an_unenumerable_executable_set_admits_rather_than_refuses():
    assert S.module_region_is_restorable(set(), 22), "an empty set is a failed enumeration, not an empty process"


def test_kernel_replay_module_gate_a_zero_handle_is_not_a_wildcard():
    assert not S.module_region_is_restorable({11, 22}, 0)
    assert S.module_region_is_restorable({0, 11}, 0), "0 is matched by handle like any other, not specially"


def test_kernel_replay_module_gate_the_check_is_handle_identity_and_nothing_more():
    assert S.module_region_is_restorable({22}, 22)
    assert not S.module_region_is_restorable({23}, 22)
