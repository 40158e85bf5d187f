"""MIOpen test/gtest/pooling2d_asymmetric.cpp: ``test_pooling2d --half --all --dataset 1 --limit 0``
(one 1x4x4x4 input; windows 2x2, 1x2, 2x1; strides 1x1, 2x1, 1x2, 2x2; index types uint8 and uint32;
every mode; both workspace index modes). Every config the driver runs (84 after its skips) is a case.
The FP32 TEST_P is commented out upstream."""
import pytest

from tests.upstream.miopen import poolkit
from tests.upstream.miopen.pooling2d_driver import command

UPSTREAM = "ROCm/MIOpen:test/gtest/pooling2d_asymmetric.cpp"
pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("cfg", poolkit.cases("--half --all --dataset 1 --limit 0",
                                              command("--half", full_set=True, dataset_id=1)))
def test_GPU_AsymPooling2d_FP16_HalfTest_pooling2d_asymmetric(handle, cfg):
    poolkit.run_impl(handle, cfg)
