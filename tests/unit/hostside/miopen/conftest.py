"""Fixtures of the hostside.miopen tests: one embedded platform per test module, the binary cache in a
temporary directory (MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR, so nothing is written to the home
directory), and a handle destroyed after each test."""
import pytest

from hostside import hip, hsa
from hostside import miopen as mi

PLATFORM = {"agents": 1, "memory_mib": 32, "host_pool_mib": 16, "engines": 2}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("miopen-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MIOPEN_USER_DB_PATH", str(d / "db"))
        mp.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(d / "cache"))
        mp.delenv("MIOPEN_DISABLE_CACHE", raising=False)
        mp.delenv("MIOPEN_LOG_LEVEL", raising=False)
        yield d


@pytest.fixture(scope="module")
def platform(cache_dir):
    hip.hipDeviceReset()
    hsa.configure(PLATFORM)
    try:
        hip.hipGetDeviceCount()
        yield
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()


@pytest.fixture
def handle(platform):
    h = mi.miopenCreate()
    yield h
    mi.miopenDestroy(h)


@pytest.fixture
def fresh_cache(platform, tmp_path, monkeypatch):
    """An empty binary cache for this test (handles created after it use it)."""
    monkeypatch.setenv("MIOPEN_USER_DB_PATH", str(tmp_path / "db"))
    monkeypatch.setenv("MIOPEN_CUSTOM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
