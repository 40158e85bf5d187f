"""rocprofiler-sdk kernel_replay/tests/replay_abi.cpp: the three cases about the record's documented
semantics, on hdemu's ``ReplayData`` (the layout cases are in NOT_PORTED.md: ``ReplayData`` has no
binary layout)."""
from hostside.replay import ReplayData

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/replay_abi.cpp"


def test_kernel_replay_abi_zero_initialized_record_opts_out_of_replay():
    rec = ReplayData()
    assert rec.replay_pass_count is None          # not set: the dispatch is not replayed (docs/replay.md)
    assert rec.continue_callback is None
    assert rec.current_pass is None and rec.total_passes is None


def test_kernel_replay_abi_pass_indices_are_zero_based_against_the_total():
    rec = ReplayData(total_passes=4)
    for i in range(rec.total_passes):
        rec.current_pass = i
        assert rec.current_pass < rec.total_passes
    rec.current_pass = rec.total_passes - 1
    assert rec.current_pass == 3


def test_kernel_replay_abi_indefinite_loop_is_distinguishable_from_single_pass():
    indefinite, single = ReplayData(total_passes=0), ReplayData(total_passes=1)
    assert indefinite.total_passes != single.total_passes
    assert indefinite.total_passes == 0
