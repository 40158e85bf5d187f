"""The ported MIOpen tests run on one embedded single-device platform per module, with the binary cache
in a temporary directory (nothing is written to the home directory), and one handle per module (as an
upstream command's configs share its process's ``get_handle()``)."""
import pytest

from hostside import hip, hsa
from hostside import miopen as mi

#: device memory for the largest config the port runs (x of poolkit.MAX_ELEMS floats, y, dx, dy, indices)
PLATFORM = {"agents": 1, "memory_mib": 128, "host_pool_mib": 16, "engines": 2}


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    d = tmp_path_factory.mktemp("miopen-upstream-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MIOPEN_USER_DB_PATH", str(d / "db"))
        mp.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(d / "cache"))
        mp.delenv("MIOPEN_DISABLE_CACHE", raising=False)
        mp.delenv("MIOPEN_LOG_LEVEL", raising=False)
        hip.hipDeviceReset()
        hsa.configure(PLATFORM)
        try:
            hip.hipGetDeviceCount()
            yield
        finally:
            hsa.configure(None)
            hip.hipDeviceReset()


@pytest.fixture(scope="module")
def handle(platform):
    h = mi.miopenCreate()
    yield h
    mi.miopenDestroy(h)
