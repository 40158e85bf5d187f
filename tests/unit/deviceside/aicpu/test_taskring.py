"""The task ring between a CP engine (producer, ``TaskRings.emit``) and its AICPU thread (consumer,
``AicpuThread.poll_tasks``), both laid out by ``shm_layout.dfx.task_ring_header`` / ``task_event``."""
import time

import numpy as np
import pytest

from deviceside.aicpu import Lane, TaskRings
from hostside.platform import Platform
from shm_layout import aql as A
from shm_layout import dfx as D

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def lane(tmp_path):
    prof = {"enabled": True, "autostart": False, "lanes": 1, "subsystems": ["chip_swimlane"],
            "output_dir": str(tmp_path / "out")}
    plat = Platform({"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "profiling": prof},
                    quiet_roles=True).start()
    try:
        yield Lane(plat.name, 0)
    finally:
        plat.stop()


def ring_header(lane, r=0):
    return lane.ctl.view(D.task_ring_header, lane.g.task_ring_off(r), 1)[0]


def test_emitted_event_is_consumed_field_for_field(lane):
    rings = TaskRings(lane.pm, lane.g, 0, 1)
    th = lane.threads[0]
    seen = []
    th.on_task = seen.append
    assert not th.has_tasks()
    karg = bytes(range(40))
    assert rings.emit(0, 7, 0x5000_0001_0010, 100, 200, 90, 6, (64, 2, 1), karg, A.HSA_PACKET_TYPE_KERNEL_DISPATCH)
    assert th.has_tasks()
    assert int(ring_header(lane)["tail"]) == 1
    ev = lane.ctl.view(D.task_event, lane.g.task_ring_off(0) + D.task_ring_header.itemsize, 1)[0]
    assert (int(ev["did"]), int(ev["kobj"]), list(ev["grid"]), int(ev["karg_len"])) == (7, 0x5000_0001_0010, [64, 2, 1], 40)
    assert th.poll_tasks() == 1
    (did, kobj, start, end, fetch, prev, gx, gy, gz, klen, ptype, kb), = seen
    assert (did, kobj, start, end, fetch, prev, gx, gy, gz, klen, ptype) == \
        (7, 0x5000_0001_0010, 100, 200, 90, 6, 64, 2, 1, 40, A.HSA_PACKET_TYPE_KERNEL_DISPATCH)
    assert kb[:klen] == karg
    assert int(ring_header(lane)["head"]) == 1 and not th.has_tasks()


def test_full_ring_drops_and_counts_without_blocking(lane):
    rings = TaskRings(lane.pm, lane.g, 0, 1)
    hdr = ring_header(lane)
    hdr["tail"] = D.TASK_RING             # as if TASK_RING events were published and none consumed
    assert not rings.emit(0, 1, 0, 0, 0, 0, 0, (1, 1, 1), b"", A.HSA_PACKET_TYPE_BARRIER_AND)
    assert int(hdr["dropped"]) == 1 and int(hdr["tail"]) == D.TASK_RING
    assert np.all(lane.ctl.view(D.task_event, lane.g.task_ring_off(0) + D.task_ring_header.itemsize, 1)["did"] == 0)


def test_the_consumer_is_woken_once_per_pass_and_only_after_events(lane):
    """Within ``WAKE_EVERY_NS`` of the last notify, ``emit`` publishes without one; ``wake`` (the
    engine's, after each pass over its queues) notifies the consumer's wake word once for everything
    published since. Past it, ``emit`` notifies at once (long packets are not held to a pass)."""
    from deviceside.aicpu._taskring import WAKE_EVERY_NS
    rings = TaskRings(lane.pm, lane.g, 0, 1)
    now = time.monotonic_ns()
    rings.woke_ns[0] = now
    off = lane.g.wake_word_off(lane.g.thread_of_ring(0))
    words = np.frombuffer(lane.ctl.buf, np.uint32, count=2, offset=off)     # (seq, waiters)
    words[1] = 1                                   # as if the thread slept there
    try:
        seq = int(words[0])
        rings.wake(0)
        assert int(words[0]) == seq                # nothing published: no wake-up
        for i in range(3):                         # end times within WAKE_EVERY_NS of the last notify
            assert rings.emit(0, i + 1, 0, now, now + i, 0, i, (1, 1, 1), b"", A.HSA_PACKET_TYPE_KERNEL_DISPATCH)
        assert int(words[0]) == seq                # publishing alone wakes nobody
        rings.wake(0)
        assert int(words[0]) == seq + 1            # one wake-up for the three events
        rings.wake(0)
        assert int(words[0]) == seq + 1
        late = rings.woke_ns[0] + WAKE_EVERY_NS    # a packet that ended that long after the notify
        assert rings.emit(0, 9, 0, late, late, 0, 3, (1, 1, 1), b"", A.HSA_PACKET_TYPE_KERNEL_DISPATCH)
        assert int(words[0]) == seq + 2            # notified at once
        rings.wake(0)
        assert int(words[0]) == seq + 2            # and nothing left for the pass
    finally:
        words[1] = 0


@pytest.mark.parametrize("agents,engines,lanes", [(2, 2, 2), (4, 2, 2), (2, 4, 4), (3, 2, 3), (1, 2, 2)])
def test_rings_are_engine_major_so_each_devices_first_engine_has_its_own_thread(agents, engines, lanes):
    """Every (agent, engine) has a ring of its own, and the engines 0 of the agents (a process's first
    stream on each device) feed different AICPU threads while there are as many threads as agents
    (agent-major rings put them all on thread 0 when engines == threads)."""
    from shm_layout.config import parse_config
    cfg = parse_config({"agents": agents, "engines": engines, "profiling": {"enabled": True, "lanes": lanes}})
    g = D.DfxGeometry(cfg["profiling"], cfg["arch"], agents * engines)
    rings = [g.ring_of(a, e, engines) for a in range(agents) for e in range(engines)]
    assert sorted(rings) == list(range(agents * engines))
    first = [g.thread_of_ring(g.ring_of(a, 0, engines)) for a in range(agents)]
    assert len(set(first)) == min(agents, g.T), first


@pytest.mark.parametrize("freq", [19_200_000, 50_000_000, 1_000_000_000])
def test_cycles_of_nanoseconds_are_exact_on_both_paths(freq):
    """``_ns_to_cycles`` equals Python's ``ns * freq // 10**9`` (mod 2**64) whether the product fits in
    uint64 (the one-multiply path) or not (the split path), with and without a cap."""
    from deviceside.aicpu._writer import _ns_to_cycles
    rng = np.random.default_rng(7)
    for hi in (10**6, 10**12, 2**63):
        ns = rng.integers(0, hi, 500, dtype=np.uint64)
        exact = [int(x) * freq // 10**9 for x in ns]
        assert list(_ns_to_cycles(ns, freq)) == [e % 2**64 for e in exact]
        assert list(_ns_to_cycles(ns, freq, 0xFFFFFFFF)) == [min(e, 0xFFFFFFFF) for e in exact]
    assert len(_ns_to_cycles(np.zeros(0, np.uint64), freq)) == 0
