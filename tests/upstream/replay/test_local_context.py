"""rocprofiler-sdk kernel_replay/tests/local_context.cpp: localized context control (thread-local
override state), pure host logic. ``fake_active_contexts{...}`` is a set of contexts started
globally before the loop (``_lc.loop``); toggles return upstream's status names."""
from hostside import replay

from tests.upstream.replay._lc import SUCCESS, contexts, has_overrides, loop, override, set_armed, status

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/local_context.cpp"
CONTEXT_ERROR, CONTEXT_NOT_STARTED = replay.CONTEXT_ERROR, replay.CONTEXT_NOT_STARTED


def test_kernel_replay_local_context_inactive_outside_loop():
    (c1,) = contexts(1)
    assert override(c1) is None
    c1.start()                       # outside a loop start/stop are the global toggles (upstream: not attached)
    c1.stop()
    assert override(c1) is None
    assert not has_overrides()
    c1.destroy()


def test_kernel_replay_local_context_loop_without_arm_rejects_toggles():
    (c7,) = contexts(7)
    with loop(c7):
        assert status(c7.start) == CONTEXT_ERROR
        assert override(c7) is None
        assert not has_overrides()


def test_kernel_replay_local_context_armed_toggles_record_and_stick():
    (c3,) = contexts(3)
    with loop(c3):
        set_armed(True)
        assert status(c3.start) == SUCCESS
        set_armed(False)
        assert has_overrides()
        assert override(c3) is True
        assert status(c3.stop) == CONTEXT_ERROR
        set_armed(True)
        assert status(c3.stop) == SUCCESS
        set_armed(False)
        assert override(c3) is False


def test_kernel_replay_local_context_per_context_independent():
    c1, c2, c3 = contexts(1, 2, 3)
    with loop(c1, c2):
        set_armed(True)
        assert status(c1.start) == SUCCESS
        assert status(c2.stop) == SUCCESS
        set_armed(False)
        assert override(c1) is True
        assert override(c2) is False
        assert override(c3) is None
    c3.destroy()


def test_kernel_replay_local_context_override_cleared_after_loop():
    (c5,) = contexts(5)
    with loop(c5):
        set_armed(True)
        assert status(c5.start) == SUCCESS
        set_armed(False)
        assert override(c5) is True
    assert override(c5) is None


def _simulated_loop():
    counters, timing = contexts(10, 20)
    counters_ran, timing_ran = [], []
    with loop(counters, timing):
        for p in range(4):
            set_armed(True)
            if p == 1:
                assert status(timing.stop) == SUCCESS
            set_armed(False)
            counters_ran.append(override(counters) if override(counters) is not None else True)
            timing_ran.append(override(timing) if override(timing) is not None else True)
        assert counters_ran == [True, True, True, True]
        assert timing_ran == [True, False, False, False]
        assert status(timing.start) == CONTEXT_ERROR          # stashed toggle fired mid-dispatch
        assert (override(timing) if override(timing) is not None else True) is False


def test_kernel_replay_local_context_simulated_replay_loop_and_misbehaving_tool():
    _simulated_loop()


def test_kernel_replay_local_context_toggle_rejects_context_inactive_pre_replay():
    c5, c9 = contexts(5, 9)
    with loop(c5):
        set_armed(True)
        assert status(c5.stop) == SUCCESS
        assert status(c5.start) == SUCCESS
        assert status(c9.start) == CONTEXT_NOT_STARTED
        assert status(c9.stop) == CONTEXT_NOT_STARTED
        set_armed(False)
        assert override(c9) is None
        assert override(c5) is not None
    c9.destroy()


def test_kernel_replay_local_context_last_write_wins_in_arm_window():
    (c9,) = contexts(9)
    with loop(c9):
        set_armed(True)
        assert status(c9.start) == SUCCESS
        assert status(c9.stop) == SUCCESS
        set_armed(False)
        assert override(c9) is False


def test_kernel_replay_local_context_simulated_service_consumers():
    counters, att, spm, pcs = contexts(10, 20, 30, 40)

    def dispatch_enabled(c, globally_on):
        ov = override(c)
        return ov if ov is not None else globally_on

    def att_runs(c):
        return override(c) is not False

    def pcs_runs(_c):
        return True                  # agent-wide; does not consult the override

    ran = {"counters": [], "att": [], "spm": [], "pcs": []}
    with loop(counters, att, spm, pcs):
        for p in range(4):
            set_armed(True)
            if p == 1:
                assert status(att.stop) == SUCCESS
                assert status(spm.stop) == SUCCESS
                assert status(pcs.stop) == SUCCESS
            set_armed(False)
            ran["counters"].append(dispatch_enabled(counters, True))
            ran["att"].append(att_runs(att))
            ran["spm"].append(dispatch_enabled(spm, True))
            ran["pcs"].append(pcs_runs(pcs))
    assert ran["counters"] == [True, True, True, True]
    assert ran["att"] == [True, False, False, False]
    assert ran["spm"] == [True, False, False, False]
    assert ran["pcs"] == [True, True, True, True]
