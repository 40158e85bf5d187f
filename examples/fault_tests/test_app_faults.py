"""Fault-injection tests of app.py with hdemu's pytest plugin (the ``hdemu_faults`` fixture).

Each test starts a platform with one emulated GPU, runs the program (or its ``workload`` function) in
its own process, injects a fault and checks what hdemu promises for it. A run's directory
(history.jsonl, report.json, workload.log, roles.log) is removed when the test passes and kept, with
its path in the failure report, when it fails: ``HDEMU_EXAMPLE_SHOW_FAILURE=1 pytest`` shows one.
"""
import os

import pytest

import app

PLATFORM = {"agents": 1, "memory_mib": 8, "host_pool_mib": 8}


def test_a_killed_device_ends_the_host_wait_in_a_clear_error(hdemu_faults):
    """SIGKILL the command processor mid-run: the program's wait raises hipErrorLaunchFailure instead of
    hanging. Its latency (a fraction of a second) is in the promise's evidence; the bound is generous, as a test's
    timing bound should be on a loaded machine: what it tells apart is an error from a hang."""
    run = hdemu_faults.run(
        program="app.py", args=["--seconds", "5"], platform=PLATFORM,
        faults=[hdemu_faults.kill("cp0", after_dispatches=40)],
        promises=[hdemu_faults.promise("host_error", error="hipErrorLaunchFailure", within_s=10.0),
                  hdemu_faults.promise("role_dead", role="cp0")])
    # check=True (the default) already failed the test if a promise did not hold; the history says more
    (err,) = run.events("error")
    (kill,) = run.faults
    assert "is gone" in err["message"] and err["t_s"] >= kill["t_s"]
    assert run.report["workload"]["exit_code"] == 1


def test_a_stall_shorter_than_the_wait_bound_is_not_an_error(hdemu_faults):
    """SIGSTOP the command processor for 0.5 s, then SIGCONT: no error, the rounds go on and check."""
    # 3 s of rounds: the stall (from the 20th packet, a few rounds in) ends seconds before the last round
    # even on a loaded machine, so rounds run after SIGCONT (with 1 s there was sometimes none left)
    run = hdemu_faults.run(
        entry=app.workload, env={"APP_SECONDS": "3.0"}, platform=PLATFORM,
        faults=[hdemu_faults.stop("cp0", duration_s=0.5, after_dispatches=20)],
        promises=["no_host_error", "workload_completes", "others_served", "roles_alive"])
    (stall,) = run.faults
    assert [e for e in run.events("sync") if e["t_s"] > stall["end_t_s"]], "no round after SIGCONT"


def _stall_past_the_bound(hdemu_faults, check):
    return hdemu_faults.run(
        program="app.py", args=["--seconds", "5"], platform=PLATFORM, wait_timeout_s=0.3, check=check,
        faults=[hdemu_faults.stop("cp0", duration_s=1.0, after_dispatches=20)],
        promises=[hdemu_faults.promise("no_host_error", description="a 1 s stall with a 0.3 s wait bound")])


def test_a_stall_longer_than_the_wait_bound_breaks_the_promise(hdemu_faults):
    """The same stall for 1 s, with HDEMU_WAIT_TIMEOUT_S at 0.3 s: no_host_error is broken on purpose;
    the run reports it FAILED with the error as evidence, and check() would fail the test."""
    run = _stall_past_the_bound(hdemu_faults, check=False)
    assert run.verdict == "FAILED"
    p = run.promise("no_host_error")
    assert p["verdict"] == "FAILED" and "HDEMU_WAIT_TIMEOUT_S" in p["evidence"], p
    with pytest.raises(pytest.fail.Exception) as failure:
        run.check()
    assert f"run directory kept: {run.out_dir}" in str(failure.value)
    assert "FAILED no_host_error" in str(failure.value)


@pytest.mark.skipif(not os.environ.get("HDEMU_EXAMPLE_SHOW_FAILURE"),
                    reason="fails on purpose: set HDEMU_EXAMPLE_SHOW_FAILURE=1 to see a failure report")
def test_what_a_failure_looks_like(hdemu_faults):
    _stall_past_the_bound(hdemu_faults, check=True)
