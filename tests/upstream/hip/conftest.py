"""The ported hip-tests run on one embedded platform per module (tests.upstream.hipkit)."""
import pytest

from tests.upstream.hipkit import platform_module


@pytest.fixture(scope="module")
def mod():
    """The loaded tests/kernels/upstream.py module on a fresh two-device embedded platform."""
    yield from platform_module()


@pytest.fixture(autouse=True)
def _device0():
    """Each case starts on device 0 with no last error, as a fresh hip-tests process would."""
    from hostside import hip
    yield
    hip.hipSetDevice(0)
    hip.hipGetLastError()
