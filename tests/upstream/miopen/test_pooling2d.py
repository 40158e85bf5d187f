"""MIOpen test/pooling2d.cpp: the ``test_pooling2d`` ctest (``test_pooling2d --float``, or ``--half`` in
a half build; ``--all`` added by MIOPEN_TEST_ALL). Each config is pooling_driver::run_impl: forward
on the CPU and the GPU (saving indices), then backward from a generated dout with the GPU's indices,
checked as ``verify`` does (poolkit). Without ``--all`` the driver runs one config (the first value of
each argument); the ``--all`` runs (462 configs after the driver's own skips) are sampled: 16 float
and 8 half configs at a fixed stride through the list (NOT_PORTED.md)."""
import pytest

from tests.upstream.miopen import poolkit
from tests.upstream.miopen.pooling2d_driver import command

UPSTREAM = "ROCm/MIOpen:test/pooling2d.cpp"
pytestmark = pytest.mark.timeout(300)

CASES = (poolkit.cases("--float", command("--float")) + poolkit.cases("--half", command("--half"))
         + poolkit.cases("--float --all", command("--float", full_set=True), 16)
         + poolkit.cases("--half --all", command("--half", full_set=True), 8))


@pytest.mark.parametrize("cfg", CASES)
def test_pooling2d(handle, cfg):
    poolkit.run_impl(handle, cfg)
