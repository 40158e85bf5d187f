"""rocprofiler-sdk kernel_replay/tests/local_context_test.cpp: the earlier copy of the localized
context tests (six cases, without the active-context set). Its loop guard took no active set and
its narrative says the contexts are globally active, so each case starts its contexts before the
loop (the later local_context.cpp makes that a rule: a context inactive before the loop cannot be
toggled)."""
from tests.upstream.replay import test_local_context as _lc_cases

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/local_context_test.cpp"


def test_kernel_replay_local_context_inactive_outside_loop():
    _lc_cases.test_kernel_replay_local_context_inactive_outside_loop()


def test_kernel_replay_local_context_loop_without_arm_rejects_toggles():
    _lc_cases.test_kernel_replay_local_context_loop_without_arm_rejects_toggles()


def test_kernel_replay_local_context_armed_toggles_record_and_stick():
    _lc_cases.test_kernel_replay_local_context_armed_toggles_record_and_stick()


def test_kernel_replay_local_context_per_context_independent():
    _lc_cases.test_kernel_replay_local_context_per_context_independent()


def test_kernel_replay_local_context_override_cleared_after_loop():
    _lc_cases.test_kernel_replay_local_context_override_cleared_after_loop()


def test_kernel_replay_local_context_simulated_replay_loop_and_misbehaving_tool():
    _lc_cases.test_kernel_replay_local_context_simulated_replay_loop_and_misbehaving_tool()
