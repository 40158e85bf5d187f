"""The ported memory tests share one embedded platform (the package's) with tests/kernels/upstream.py
loaded; a test that leaves a device's queues failed gets a fresh platform before the next test."""
import pytest

from hostside import hip
from tests.upstream.hipkit import devices_healthy, platform_module


class _Platform:
    def __init__(self):
        self._gen = None
        self.mod = None

    def start(self, config: dict | None = None):
        """A fresh platform; ``config`` overrides keys of tests.upstream.hipkit.CONFIG."""
        self._gen = platform_module(config)
        self.mod = next(self._gen)

    def stop(self):
        if self._gen is not None:
            self._gen.close()
            self._gen = self.mod = None

    def healthy(self) -> bool:
        return devices_healthy()


@pytest.fixture(scope="package")
def platform():
    p = _Platform()
    p.start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def small_gpu(platform):
    """The package's platform restarted with 2 MiB of memory per device (cases that allocate more host
    memory than a device has), and restarted with the usual config after the module (module scope: the
    restarts fall outside every test's /dev/shm check; put the cases that use it last in the module)."""
    platform.stop()
    platform.start({"memory_mib": 2})
    yield platform
    platform.stop()
    platform.start()


@pytest.fixture
def kmod(platform):
    """The loaded tests/kernels/upstream.py of the current platform."""
    return platform.mod


@pytest.fixture
def stream(request):
    """StreamGuard(stream_type), for ``@pytest.mark.parametrize("stream", [...], indirect=True)``: the null
    stream ("nullstream"), hipStreamPerThread ("perThread") or a created stream ("created", destroyed
    from device 0)."""
    kind = request.param
    if kind == "created":
        s = hip.hipStreamCreate()
        yield s
        hip.hipSetDevice(0)
        hip.hipStreamDestroy(s)
    else:
        yield None if kind == "nullstream" else hip.hipStreamPerThread


@pytest.fixture(autouse=True)
def _recover(platform):
    yield
    if not platform.healthy():
        platform.stop()
        platform.start()
