"""hipMemsetD32 (synchronous): device and pinned host buffers of several sizes set to a pattern, a null
destination and a zero count, and memset buffers feeding a kernel (memset_common has the template)."""
import pytest

from tests.upstream.hip.memory import memset_common as m

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetD32.cc"

WIDTH, ASYNC = "D32", False


@pytest.mark.parametrize("section", ["Device Buffer", "Host Buffer"])
def test_Unit_hipMemsetD32_ValidBuffer(platform, section):
    m.valid_buffer(WIDTH, ASYNC, section)


@pytest.mark.parametrize("section", ["nullptr destination", "zero size"])
def test_Unit_hipMemsetD32_InvalidArg(platform, section):
    m.invalid_arg(WIDTH, ASYNC, section)


def test_Unit_hipMemsetD32_KernelBuffer(kmod):
    m.kernel_buffer(kmod, WIDTH, ASYNC)
