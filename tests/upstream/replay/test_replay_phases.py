"""rocprofiler-sdk kernel_replay/tests/replay_phases.cpp: the user_data lifecycle of the CONFIG and
PASS callbacks and the per-pass replay_continue decision. Upstream drives its tracing helpers by
hand; here the real service drives them (one child process runs every case: programs/phases.py).
Dispatch 1 is case 1, dispatch 2 case 2, dispatches 3 and 4 case 3 (4 holds its final-pass half)."""
import pytest

from tests.upstream.replay._child import run_program

UPSTREAM = "ROCm/rocm-systems:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/kernel_replay/tests/replay_phases.cpp"
CONFIG_ENTER_VALUE = 0x00C0FFEE
PASS_1_ENTER_VALUE = 0x0000BEEF
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def child():
    return run_program("phases")


def test_kernel_replay_phases_config_user_data_flows_to_config_exit_and_every_pass(child):
    obs = child["obs"]["1"]
    assert obs["config_exit_seen"] == CONFIG_ENTER_VALUE
    assert len(obs["passes"]) == 3
    for p in obs["passes"]:
        assert p["enter_seen"] == CONFIG_ENTER_VALUE
        assert p["exit_seen"] == CONFIG_ENTER_VALUE


def test_kernel_replay_phases_pass_enter_user_data_write_scoped_to_its_own_pass(child):
    obs = child["obs"]["2"]["passes"]
    assert obs[0]["enter_seen"] == CONFIG_ENTER_VALUE and obs[0]["exit_seen"] == CONFIG_ENTER_VALUE
    assert obs[1]["enter_seen"] == CONFIG_ENTER_VALUE
    assert obs[1]["exit_seen"] == PASS_1_ENTER_VALUE
    assert obs[2]["enter_seen"] == CONFIG_ENTER_VALUE and obs[2]["exit_seen"] == CONFIG_ENTER_VALUE


def test_kernel_replay_phases_replay_continue_per_pass_override_and_pass_scoped_user_data(child):
    calls = [c[1:] for c in child["calls"] if c[0] == 3]
    assert child["executed"]["3"] == 2                      # pass 1's override stopped the loop
    assert len(calls) == 2
    assert calls[0] == [0, CONFIG_ENTER_VALUE, 1]
    assert calls[1] == [1, PASS_1_ENTER_VALUE, 0]           # pass-scoped, not the CONFIG value
    # the final pass of a fixed loop stops without consulting the callback
    final = [c[1:] for c in child["calls"] if c[0] == 4]
    assert child["executed"]["4"] == 2 and [c[0] for c in final] == [0]
