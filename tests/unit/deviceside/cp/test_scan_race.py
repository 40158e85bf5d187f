"""An engine's queue scan reads a descriptor field by field while its owner may free and re-create the
slot. The scan must never take (or fail) the re-created queue on what it read of the old one.

The CI fuzz (tests/scenarios/test_cp.py) caught it: the SDMA engine read a slot as its old SDMA queue,
the fuzzer re-created the slot as an AQL queue in between, and the SDMA engine took the AQL queue and
failed its first kernel dispatch as an SDMA packet ("dependency 0x100000001 is not a signal handle").
Here the re-creation is made deterministic: it happens inside the scan, just before the engine reads
the state it would take (``QueueState``), in process, on a table of descriptors in plain memory."""
from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

from deviceside.cp import _queues
from shm_layout import layouts as L

pytestmark = pytest.mark.timeout(30)

N_ENGINES, QMAX, SLOT = 2, 16, 3
SDMA_ENGINE = N_ENGINES


class _Agent:
    """The few parts of an AgentMap a QueueTable and a QueueState read, over numpy memory."""

    def __init__(self):
        self.index = 0
        self.qdesc = np.zeros(QMAX, L.queue_desc)
        self.topo = SimpleNamespace(qdesc_off=0, kernarg_queue_bytes=4096, max_queues=QMAX, qmax=QMAX)

    def ring_offset(self, q):
        return q * QMAX * 64

    def kernarg_offset(self, q):
        return q * 4096

    def kernarg_address(self, q, slot):
        return L.kernarg_base(0) + q * 4096 + slot * L.KERNARG_SLOT_BYTES


def _make_queue(d, engine, kind, gen):
    d["size"], d["engine"], d["kind"], d["generation"] = 16, engine, kind, gen
    d["read_dispatch_id"] = d["write_dispatch_id"] = 0
    d["doorbell"] = (1 << 64) - 1
    d["destroy_req"] = d["status"] = 0
    d["active"] = 1
    d["owner"] = L.own_word(os.getpid(), L.Q_ACTIVE)


@pytest.fixture
def table():
    agent = _Agent()
    gen_word = np.zeros(1, np.uint64)
    failed = []
    cp = SimpleNamespace(agent=agent, n_engines=N_ENGINES, topo=agent.topo, queue_table_gen_addr=gen_word.ctypes.data,
                         fail_queue=lambda qs, idx, err, engine, sig: failed.append((qs.q, qs.gen, str(err))))
    t = _queues.QueueTable(cp)
    t.failed = failed
    t._keep = gen_word
    return t


def _recreate_inside_the_scan(monkeypatch, table, engine, kind):
    """The first QueueState the scan builds for SLOT sees the slot re-created (new generation) as a
    queue of ``engine`` and ``kind``: what a host does between two of the scan's reads."""
    real = _queues.QueueState
    done = []

    def racing(agent, q):
        if q == SLOT and not done:
            done.append(1)
            _make_queue(table.agent.qdesc[SLOT:SLOT + 1], engine, kind, int(table.agent.qdesc[SLOT]["generation"]) + 1)
        return real(agent, q)

    monkeypatch.setattr(_queues, "QueueState", racing)


def test_the_sdma_engine_never_takes_an_aql_queue_it_read_as_the_old_sdma_one(table, monkeypatch):
    _make_queue(table.agent.qdesc[SLOT:SLOT + 1], SDMA_ENGINE, L.QKIND_SDMA, 7)
    _recreate_inside_the_scan(monkeypatch, table, 0, L.QKIND_AQL)
    assert table.scan(SDMA_ENGINE, L.QKIND_SDMA, []) == []
    assert SLOT not in table.bound and table.failed == []
    took = table.scan(0, L.QKIND_AQL, [])                 # the next scan: its own engine takes it
    assert [(qs.q, qs.kind, qs.engine, qs.gen) for qs in took] == [(SLOT, L.QKIND_AQL, 0, 8)]


def test_the_janitor_never_fails_a_good_queue_it_read_as_the_old_unservable_one(table, monkeypatch):
    _make_queue(table.agent.qdesc[SLOT:SLOT + 1], 99, L.QKIND_AQL, 7)        # engine 99: no engine serves it
    _recreate_inside_the_scan(monkeypatch, table, 1, L.QKIND_AQL)
    assert table.scan(0, L.QKIND_AQL, []) == []          # engine 0 is the janitor; the queue is engine 1's
    assert table.failed == []
    took = table.scan(1, L.QKIND_AQL, [])
    assert [(qs.q, qs.engine, qs.gen) for qs in took] == [(SLOT, 1, 8)]


def test_an_unservable_queue_still_fails(table):
    _make_queue(table.agent.qdesc[SLOT:SLOT + 1], 99, L.QKIND_AQL, 7)
    assert table.scan(0, L.QKIND_AQL, []) == []
    assert [(q, g) for q, g, _m in table.failed] == [(SLOT, 7)]
    assert "engine" in table.failed[0][2]
