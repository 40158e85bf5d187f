"""MIOpen test/gtest/pooling2d_codecov.cpp: ``test_pooling2d --float|--half --input 1, 192, 28, 28
--lens 2 2 --strides 2 2 --pads 0 0`` (the other arguments at their first value: uint8 indices, max,
Mask index mode)."""
import pytest

from tests.upstream.miopen import poolkit
from tests.upstream.miopen.pooling2d_driver import command

UPSTREAM = "ROCm/MIOpen:test/gtest/pooling2d_codecov.cpp"
pytestmark = pytest.mark.timeout(120)
ARGS = {"input": (1, 192, 28, 28), "lens": (2, 2), "strides": (2, 2), "pads": (0, 0)}


@pytest.mark.parametrize("cfg", poolkit.cases("--float --input 1, 192, 28, 28 --lens 2 2 --strides 2 2 --pads 0 0",
                                              command("--float", **ARGS)))
def test_GPU_Pooling2d_CodecovTest_FP32_FloatTest_pooling2d_codecov(handle, cfg):
    poolkit.run_impl(handle, cfg)


@pytest.mark.parametrize("cfg", poolkit.cases("--half --input 1, 192, 28, 28 --lens 2 2 --strides 2 2 --pads 0 0",
                                              command("--half", **ARGS)))
def test_GPU_Pooling2d_CodecovTest_FP16_HalfTest_pooling2d_codecov(handle, cfg):
    poolkit.run_impl(handle, cfg)
