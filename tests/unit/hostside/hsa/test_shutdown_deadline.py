"""A runtime whose command processor does not answer (SIGSTOPped) tears its queues down against one
deadline: every queue is told first, then each is waited for until the same deadline. Before, each
queue waited its own ``QUEUE_DESTROY_TIMEOUT_S`` in turn (5 s per queue, one after another)."""
import os
import signal

import pytest

from hostside import hip, hsa
from hostside.hsa import _queue, _runtime
from tests.paths import kernel_file

pytestmark = pytest.mark.timeout(120)


def test_a_stopped_cp_costs_the_destroy_timeout_once_not_once_per_queue(monkeypatch):
    hip.hipDeviceReset()
    hsa.configure({"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4})
    cp = None
    try:
        mod = hip.hipModuleLoad(kernel_file("basic.py"))
        empty = hip.hipModuleGetFunction(mod, "empty")
        streams = [hip.hipStreamCreate() for _ in range(3)]
        for s in streams:                       # each stream's queue exists and has run a packet
            hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, [])
            hip.hipStreamSynchronize(s)
        rt = hsa.runtime()
        queues = list(rt.queues)
        assert len(queues) >= 3
        waits = []
        real = _queue.Queue.destroy

        def destroy(q, deadline=None):
            waits.append((q, deadline, [x.destroyed for x in queues]))
            real(q, deadline)
            if q is queues[-1]:
                os.kill(cp, signal.SIGCONT)     # the queues are done: let the platform's stop be quick

        monkeypatch.setattr(_queue.Queue, "destroy", destroy)
        monkeypatch.setattr(_runtime, "QUEUE_DESTROY_TIMEOUT_S", 0.3)
        cp = rt.agents[0].cp_pid
        os.kill(cp, signal.SIGSTOP)             # no engine acknowledges a destroy from now on
        hsa.shutdown()
        assert [q for q, _d, _s in waits] == queues
        assert len({d for _q, d, _s in waits}) == 1 and waits[0][1] is not None
        assert all(all(told) for _q, _d, told in waits)     # every queue was told before the first wait
    finally:
        if cp is not None:
            try:
                os.kill(cp, signal.SIGCONT)
            except ProcessLookupError:
                pass
        hsa.configure(None)
        hip.hipDeviceReset()
