"""Synchronizing a stream with nothing submitted costs no look at the command processor's process: the
legacy null stream's sync and hipDeviceSynchronize sync every idle stream, and each paid a /proc read
per queue (a null-stream launch + sync took 44 us instead of 10 beside one unused created stream). A
failed queue still raises; a stream still busy still checks its device while it waits or is queried."""
import pytest

from hostside import hip
from hostside.hsa import _runtime
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4})


def test_idle_streams_sync_and_query_without_a_liveness_read(mod, monkeypatch):
    empty = hip.hipModuleGetFunction(mod, "empty")
    idle = [hip.hipStreamCreate() for _ in range(3)]
    hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, None, [])
    hip.hipDeviceSynchronize()
    looks = []
    real = _runtime.pid_alive
    monkeypatch.setattr(_runtime, "pid_alive", lambda pid: looks.append(pid) or real(pid))
    for _ in range(20):
        for s in idle:
            hip.hipStreamSynchronize(s)
            assert hip.hipStreamQuery(s) == hip.hipError_t.hipSuccess
        hip.hipStreamSynchronize(None)          # the legacy null stream: every blocking stream too
        hip.hipDeviceSynchronize()
    assert looks == []
    for s in idle:
        hip.hipStreamDestroy(s)
