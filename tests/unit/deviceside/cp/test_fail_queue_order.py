"""``fail_queue`` publishes a queue error the way a host reads it: the packet id, the message and
``active = 0`` first, then a write barrier, then the status a host polls, so a host that sees the
status never reads an empty message (or an active queue)."""
from __future__ import annotations

import pytest

from deviceside.cp import CommandProcessor, PacketError
from deviceside.cp import _processor
from deviceside.cp._ring import QueueState
from shm_layout import layouts as L
from tests.unit.deviceside.cp.rawcp import RawQueue, platform

pytestmark = pytest.mark.timeout(60)

CFG = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 8, "queue_size_max": 16}


class _Recorder:
    """A queue descriptor that records the order of the fields written into it."""

    def __init__(self, desc, order):
        self.desc, self.order = desc, order

    def __setitem__(self, key, value):
        self.order.append(key)
        self.desc[key] = value

    def __getitem__(self, key):
        return self.desc[key]


def test_message_and_packet_id_are_written_before_the_status(tmp_path, monkeypatch):
    with platform(CFG, tmp_path / "roles.stderr") as plat:
        q = RawQueue(plat)
        cp = CommandProcessor(plat.name, 0)       # an in-process CP object (its engines are not started)
        try:
            order = []
            monkeypatch.setattr(_processor, "wmb", lambda: order.append("wmb"), raising=False)
            qs = QueueState(cp.agent, q.q)
            qs.desc = _Recorder(qs.desc, order)
            cp.fail_queue(qs, 3, PacketError(L.HSA_STATUS_ERROR_EXCEPTION, "kernel k raised boom"), 0, 0)
            assert order.index("status") > max(order.index("error_msg"), order.index("error_packet_id")), order
            assert max(order.index("error_msg"), order.index("active")) < order.index("wmb") < order.index("status"), \
                order
            assert q.status == L.HSA_STATUS_ERROR_EXCEPTION and q.error_msg == "kernel k raised boom"
            assert int(q.desc["error_packet_id"][0]) == 3 and not int(q.desc["active"][0])
        finally:
            if cp.trace is not None:
                cp.trace.release()
            cp.pm.close()
