"""MIOpen test/gtest/pooling2d_wide.cpp: ``test_pooling2d --half --all --dataset 2 --limit 0`` (wide
windows 35x35 to 410x400, stride 1, uint32 indices). The driver runs 33 configs (Image index mode
only); 4 of them are sampled at a fixed stride (the 100x100 and 255x255 windows take seconds each;
NOT_PORTED.md). The FP32 TEST_P is commented out upstream."""
import pytest

from tests.upstream.miopen import poolkit
from tests.upstream.miopen.pooling2d_driver import command

UPSTREAM = "ROCm/MIOpen:test/gtest/pooling2d_wide.cpp"
pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("cfg", poolkit.cases("--half --all --dataset 2 --limit 0",
                                              command("--half", full_set=True, dataset_id=2), 4))
def test_GPU_WidePooling2d_FP16_HalfTest_pooling2d_wide(handle, cfg):
    poolkit.run_impl(handle, cfg)
