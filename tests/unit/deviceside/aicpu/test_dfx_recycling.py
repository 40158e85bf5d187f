"""A collected buffer goes back to its own pool at once, by the shard that collected it: a one-buffer
pool beside a large one never starves (the flake of shrunk_pool_stall under load: the old replenish
routing sent thread 0's only buffer to the shard of thread 1, whose free queue was full, and thread 0
waited at its pop gate for good). Driven in-process, step by step."""
import threading
import time

import pytest

from deviceside.aicpu import Lane
from hostside.dfx import Collector, accounting
from shm_layout import dfx as D
from tests.unit.deviceside.aicpu.dfxkit import K, held_pointers, make, pool, recs

pytestmark = pytest.mark.timeout(60)


def free_entries(lane, t, k=K):
    pb = pool(lane, t, k)
    return (int(pb["tail"]) - int(pb["head"])) & 0xFFFFFFFF


def uneven(tmp_path, **prof):
    """Thread 0: one buffer per pool; thread 1: eight; two drain shards (one thread each)."""
    p = dict(lanes=2, drain_shards=2, pool_overrides={"0": 1}, buffers_per_pool=8,
             records_per_buffer={"aicpu_task": 2}, backpressure_timeout_s=0.05)
    p.update(prof)
    return make(tmp_path, **p)


def test_a_collected_buffer_returns_to_its_own_thread_whatever_the_other_shard_did(tmp_path):
    plat = uneven(tmp_path)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        col.top_up_recycled()                      # the replenish thread's first round, then it backs off
        g = lanes[0].g
        t0, t1 = lanes[0].threads[0], lanes[1].threads[0]
        x = g.buffer_addr(0, K, 0)                 # thread 0's only buffer
        t1.write(K, recs(4, 100, thread=1))        # thread 1: two buffers published, one current
        t0.write(K, recs(2, 0, thread=0))          # thread 0 publishes x; its pop gate runs dry
        # the interleaving of the flake: shard 1 refills thread 1 (emptying its share of buffers)
        # while shard 0 collects x, then shard 1 collects thread 1's buffers; no replenish round
        assert col.top_up(1, K)
        s0, s1 = [], []
        col.drain_queue(0, 0, s0)
        col.drain_queue(1, 1, s1)
        assert free_entries(lanes[0], 0) == 1, "thread 0 must get its buffer back from the shard that collected it"
        assert int(pool(lanes[0], 0)["buffer_ptrs"][int(pool(lanes[0], 0)["head"]) % g.slots[K]]) == x
        assert int(lanes[0].h64[g.owner_off(g.buffer_id(K, x)) // 8]) == D.buffer_owner_word(D.BUF_FREE, 0)
        assert s0 == [] and s1 == []
        # every buffer stays in its own pool: handed to its own thread, or waiting in its own lane
        for (t, k), lane in col.recycled.items():
            assert all(g.check_buffer_kind(k, b)[0] == t for b in lane), (t, k)
        for t in (0, 1):
            pb = pool(lanes[t], t)
            head, tail = int(pb["head"]), int(pb["tail"])
            while head != tail:
                assert g.check_buffer_kind(K, int(pb["buffer_ptrs"][head % g.slots[K]]))[0] == t
                head = (head + 1) & 0xFFFFFFFF
        t0.write(K, recs(2, 2, thread=0))          # thread 0 goes on: nothing dropped
        assert int(pool(lanes[0], 0)["dropped_record_count"]) == 0
    finally:
        plat.stop()


def test_one_buffer_pool_flows_with_the_replenish_thread_stopped(tmp_path):
    """Live drain shards and no replenish thread at all (the worst back-off): thread 0 cycles its one
    buffer 40 times beside a busy thread 1 and drops nothing."""
    plat = uneven(tmp_path, backpressure_timeout_s=20.0)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        col.running = True
        shards = [threading.Thread(target=col.shard_main, args=(s,), daemon=True) for s in range(col.S)]
        for th in shards:
            th.start()
        t0, t1 = lanes[0].threads[0], lanes[1].threads[0]
        writers = [threading.Thread(target=lambda: [t0.write(K, recs(1, i, thread=0)) for i in range(80)]),
                   threading.Thread(target=lambda: [t1.write(K, recs(1, 1000 + i, thread=1)) for i in range(80)])]
        t_start = time.monotonic()
        for w in writers:
            w.start()
        for w in writers:
            w.join(30)
        took = time.monotonic() - t_start
        deadline = time.monotonic() + 10
        while sum(col.collected[(t, K)] for t in (0, 1)) < 160 and time.monotonic() < deadline:
            time.sleep(0.01)
        col.running = False
        col.wake_all()
        for th in shards:
            th.join(10)
        assert col.collected[(0, K)] == 80 and col.collected[(1, K)] == 80, (col.collected, took)
        for t in (0, 1):
            assert int(pool(lanes[t], t)["dropped_record_count"]) == 0
        assert took < 15, f"thread 0 waited at its pop gate: {took:.1f} s for 40 buffers"
        held = held_pointers(lanes[0], K)
        assert len(held) == len(set(held))
        acc = accounting(plat.pm)
        for p in acc["pools"]:
            if p["kind"] == "aicpu_task":
                assert p["total"] == p["dropped"] + p["in_buffer"] + p["published"], p
    finally:
        plat.stop()


def test_counters_add_up_while_a_thread_waits_at_its_pop_gate(tmp_path):
    """A thread parked at its pop gate right after publishing leaves total == dropped + current_count
    + published (the flake's snapshot had published 2 > total 1: total was stored after the write)."""
    plat = uneven(tmp_path, backpressure_timeout_s=1.0)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col.proactive_replenish()                  # thread 0: one buffer, nobody collects it
        th = lane.threads[0]
        seen = {}
        real_gate = th._gate

        def gate(p, which, ready, release_i=None):
            if which == D.GATE_POP and p.k == K and p.published:
                pb = pool(lane, 0)
                seen.update(total=int(pb["total_record_count"]), dropped=int(pb["dropped_record_count"]),
                            in_buffer=int(pb["current_count"]), published=int(pb["published_record_count"]))
                return False                       # the budget ran out
            return real_gate(p, which, ready, release_i)
        th._gate = gate
        th.write(K, recs(1, 0))
        th.write(K, recs(1, 1))                    # fills the buffer: publish, then the pop gate
        assert seen == {"total": 2, "dropped": 0, "in_buffer": 0, "published": 2}, seen
        th.write(K, recs(3, 2))                    # no buffer: dropped, and counted
        pb = pool(lane, 0)
        assert (int(pb["total_record_count"]), int(pb["dropped_record_count"])) == (5, 3)
    finally:
        plat.stop()


def test_events_dropped_on_a_full_task_ring_are_reported_with_a_cause(tmp_path):
    """Packets the CP could not put on a full task ring never become records: no pool counts them, so
    accounting reports them per ring, with the cause, instead of losing them silently."""
    plat = uneven(tmp_path)
    try:
        g = plat.pm.topo.dfx
        acc = accounting(plat.pm)
        assert acc["unrecorded_events"] == 0 and all(not r["causes"] for r in acc["task_rings"])
        plat.pm.segs["dfxctl"].view(D.task_ring_header, g.task_ring_off(0), 1)[0]["dropped"] = 7
        acc = accounting(plat.pm)
        assert acc["unrecorded_events"] == 7
        (r,) = [r for r in acc["task_rings"] if r["dropped_events"]]
        assert r["ring"] == 0 and "the ring was full" in r["causes"][0]
    finally:
        plat.stop()
