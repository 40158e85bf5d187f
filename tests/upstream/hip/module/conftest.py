"""The ported module tests share one embedded platform (the package's); a test that leaves a device's
queues failed (a launch the device refused) gets a fresh platform before the next test."""
import pytest

from hostside import hip
from tests.upstream.hipkit import devices_healthy, platform_module


class _Platform:
    def __init__(self):
        self._gen = None

    def start(self):
        self._gen = platform_module()
        next(self._gen)

    def stop(self):
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    def healthy(self) -> bool:
        return devices_healthy()


@pytest.fixture(scope="package")
def platform():
    p = _Platform()
    p.start()
    yield p
    p.stop()


@pytest.fixture(autouse=True)
def _recover(platform):
    yield
    if not platform.healthy():
        platform.stop()
        platform.start()
