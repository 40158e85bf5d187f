"""`hdemu run` with the other workload sources: the built-in graph loop (with the client itself
SIGSTOPped and resumed) and a user's program using hostside.hip; scenario files written by the test."""
import pytest

from tests.scenarios.runkit import check_consistent, of, run, verdicts

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

GRAPH = """
[platform]
agents = 1
memory_mib = 8
host_pool_mib = 8
queue_size_max = 1024

[workload]
builtin = "graph_loop"
streams = 1
nodes = 8
batch = 4
duration_s = 1.0

[[fault]]
kind = "stop"
target = "workload"
after_dispatches = 16
duration_s = 0.3

[[promise]]
kind = "no_host_error"

[[promise]]
kind = "workload_completes"
"""

PROGRAM = '''
import numpy as np
from hostside import hip

mod = hip.hipModuleLoadData("""
from shm_layout.kernels import kernel

@kernel("i32* x, u32 n")
def fill(ctx, x, n):
    x[:n] = 7
""", "prog_kernels.py")
f = hip.hipModuleGetFunction(mod, "fill")
d = hip.hipMalloc(64)
hip.hipModuleLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, None, [d, 16])
out = np.zeros(16, np.int32)
hip.hipMemcpy(out, d, 64, hip.hipMemcpyDeviceToHost)
assert (out == 7).all()
if out.sum() == 7 * 16:
    hip.hipMemcpy(out, d + (1 << 30), 64, hip.hipMemcpyDeviceToHost)   # not an allocation: a HipError
'''


def test_graph_loop_with_the_client_stopped_and_resumed(tmp_path):
    (tmp_path / "graph-stop.toml").write_text(GRAPH)
    r, rep, hist = run(str(tmp_path / "graph-stop.toml"), tmp_path)
    check_consistent(r, rep, hist)
    (f,) = rep["faults"]
    assert f["state"] == "injected" and f["evidence"]["pid"] == rep["workload"]["pid"] and f["end_t_s"] > f["t_s"]
    (done,) = [h for h in of(hist, "workload") if h["ev"] == "done"]
    assert done["verified"] == [True] and done["launched"][0] % 8 == 0 and done["launched"][0] >= 16
    assert verdicts(rep) == {(0, "no_host_error"): "HELD", (1, "workload_completes"): "HELD"}


def test_a_user_program_and_its_hip_error(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "prog.toml").write_text(f'[platform]\nagents = 1\n[workload]\nprogram = "{tmp_path / "prog.py"}"\n'
                                        '[[promise]]\nkind = "no_host_error"\n')
    r, rep, hist = run(str(tmp_path / "prog.toml"), tmp_path)
    check_consistent(r, rep, hist)
    errs = [h for h in of(hist, "workload") if h["ev"] == "error"]
    assert [e["name"] for e in errs] == ["hipErrorInvalidValue"], errs
    assert rep["workload"]["exit_code"] == 1
    assert verdicts(rep) == {(0, "no_host_error"): "FAILED"}
    assert "hipErrorInvalidValue" in rep["promises"][0]["evidence"]
