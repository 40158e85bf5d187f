"""MIOpen test/pooling3d.cpp: the ``test_pooling3d`` ctest (``--float`` / ``--half``, ``--all`` with
MIOPEN_TEST_ALL): pooling_driver on 5-D inputs, workspace index mode Image only. Without ``--all``
one config; the ``--all`` runs are sampled, 10 float and 5 half configs at a fixed stride
(NOT_PORTED.md)."""
import pytest

from tests.upstream.miopen import poolkit

UPSTREAM = "ROCm/MIOpen:test/pooling3d.cpp"
pytestmark = pytest.mark.timeout(300)

INPUT_SHAPES = [(16, 64, 3, 4, 4), (16, 32, 4, 9, 9), (8, 512, 3, 14, 14), (8, 512, 4, 28, 28),
                (16, 64, 56, 56, 56), (4, 3, 4, 227, 227), (4, 4, 4, 161, 700)]
ARGS = {"input": (INPUT_SHAPES, 4), "lens": [(2, 2, 2), (3, 3, 3)], "strides": [(2, 2, 2), (1, 1, 1)],
        "pads": [(0, 0, 0), (1, 1, 1)], "wsidx": [1]}


def command(dtype, full_set=False):
    return poolkit.configs(dtype, full_set, 0, ARGS, limited={"input"})


CASES = (poolkit.cases("--float", command("--float")) + poolkit.cases("--half", command("--half"))
         + poolkit.cases("--float --all", command("--float", True), 10)
         + poolkit.cases("--half --all", command("--half", True), 5))


@pytest.mark.parametrize("cfg", CASES)
def test_pooling3d(handle, cfg):
    poolkit.run_impl(handle, cfg)
