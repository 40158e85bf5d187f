"""DFX backpressure scenarios named after the reference unit tests, driven in-process: the platform
creates the DFX segments only (autostart = false); the test drives an AICPU thread and the collector
objects by hand, so every step is deterministic."""
import time

import numpy as np
import pytest

from deviceside.aicpu import Lane
from hostside.dfx import Collector, read_stalls
from hostside.platform import Platform
from shm_layout import dfx as D
from tests.unit.deviceside.aicpu.dfxkit import BUDGET, K, buffer_records, entry, give, make, pool, recs  # noqa: F401

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["a2a3", "a5"])
def arch(request):
    return request.param


def test_switch_with_ready_queue_full_drops_without_publishing(tmp_path, arch):
    plat = make(tmp_path, arch, ready_depth=2)       # the ready queue holds one entry
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        give(col, 0, K, 3)
        th = lane.threads[0]
        th.write(K, recs(4))                           # fills, publishes (tail 0 -> 1), claims the next
        assert lane.h32[lane.g.tail_off(0) // 4] == 1
        t0 = time.monotonic()
        th.write(K, recs(4, 4))                        # the push gate finds the queue full
        assert time.monotonic() - t0 >= BUDGET * 0.9
        assert lane.h32[lane.g.tail_off(0) // 4] == 1, "the tail must not move"
        pb = pool(lane)
        assert int(pb["total_record_count"]) == 8 and int(pb["dropped_record_count"]) == 4
        assert int(pb["current_buf_ptr"]) != 0          # ownership never left: buffer reused
        st = read_stalls(plat.pm)
        assert [(s["gate"], s["outcome"]) for s in st] == [("push", "expired")]
    finally:
        plat.stop()


def test_switch_with_no_replacement_clears_current_buffer(tmp_path, arch):
    plat = make(tmp_path, arch)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        give(col, 0, K, 1)
        th = lane.threads[0]
        th.write(K, recs(4))                           # publish ok, no replacement
        pb = pool(lane)
        assert int(pb["current_buf_ptr"]) == 0
        assert lane.h32[lane.g.tail_off(0) // 4] == 1
        th.write(K, recs(2, 4))                        # no buffer: the pop gate runs out again
        pb = pool(lane)
        assert int(pb["dropped_record_count"]) == 2 and int(pb["total_record_count"]) == 6
    finally:
        plat.stop()


def test_pop_gate_gives_up_when_nothing_refills(tmp_path, arch):
    plat = make(tmp_path, arch)
    try:
        lane = Lane(plat.name, 0)
        th = lane.threads[0]
        assert th.pools[K].budget == int(BUDGET * D.ARCHS[arch]["freq_hz"])   # cycles at the arch clock
        t0 = time.monotonic()
        th.write(K, recs(1))
        took = time.monotonic() - t0
        assert took >= BUDGET * 0.9
        pb = pool(lane)
        assert int(pb["dropped_record_count"]) == 1
        st = read_stalls(plat.pm)
        assert st and st[-1]["gate"] == "pop" and st[-1]["outcome"] == "expired"
    finally:
        plat.stop()


def test_drop_policy_never_blocks(tmp_path):
    plat = make(tmp_path, policy="drop", backpressure_timeout_s=30.0)
    try:
        th = Lane(plat.name, 0).threads[0]
        t0 = time.monotonic()
        th.write(K, recs(10))
        assert time.monotonic() - t0 < 5.0       # far below the 30 s budget: it never waited
        assert int(pool(th.lane)["dropped_record_count"]) == 10
    finally:
        plat.stop()


def test_short_top_up_is_reported_and_retried(tmp_path, arch):
    plat = make(tmp_path, arch, buffers_per_pool=1)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        give(col, 0, K, 1)
        th = lane.threads[0]
        th.write(K, recs(4))                     # publishes its only buffer; pop gate expires
        g = lane.g
        head = lane.h32[(g.pool_off(0, K) + D.PB_HEAD) // 4]
        short = []
        seen = []
        real_top_up = col.top_up

        def top_up(t, k):                        # what the free queue looked like at each top-up
            ok = real_top_up(t, k)
            seen.append((ok, int(lane.h32[(g.pool_off(0, K) + D.PB_TAIL) // 4])))
            return ok
        col.top_up = top_up
        assert col.sweep(0, [0], short) == 1
        # the top-up before the write finds nothing (the pool's only buffer is the one being
        # collected): a short site; once collected, the same shard hands the buffer back at once
        assert seen == [(False, head), (True, head + 1)], seen
        assert col.stats["short_sites"] == 1 and col.stats["retries_ok"] == 1 and short == []
        word = int(lane.h64[g.owner_off(g.buffer_id(K, g.buffer_addr(0, K, 0))) // 8])
        assert word == D.buffer_owner_word(D.BUF_FREE, 0)
        th.write(K, recs(2, 4))                   # the lane writes again
        assert int(pool(lane)["dropped_record_count"]) == 0
    finally:
        plat.stop()


def test_one_drain_shard_scans_every_live_queue(tmp_path):
    plat = make(tmp_path, lanes=4, drain_shards=1)
    try:
        lanes = [Lane(plat.name, i) for i in range(4)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        assert col.queues_of(0) == [0, 1, 2, 3]
        col.proactive_replenish()
        for ln in lanes:
            ln.threads[0].write(K, recs(4))
        short = []
        assert col.sweep(0, col.queues_of(0), short) == 4
        assert sum(col.collected[(t, K)] for t in range(4)) == 16
    finally:
        plat.stop()


def test_corrupt_entry_is_rejected_and_a_bad_index_marks_only_that_thread(tmp_path, arch):
    plat = make(tmp_path, arch, lanes=2, drain_shards=1)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        for ln in lanes:
            ln.threads[0].write(K, recs(4))
        # garbage in thread 1's published entry: a buffer pointer that is no buffer
        g = lanes[1].g
        eo = g.entry_off(1, 0)
        lanes[1].hdr.u8[eo + 8:eo + 16] = np.frombuffer((0xBAD0BAD0).to_bytes(8, "little"), np.uint8)
        short = []
        col.sweep(0, [0, 1], short)
        assert not col.corrupt                        # the entry is rejected, nobody is marked corrupt
        assert col.collected[(1, K)] == 0 and col.collected[(0, K)] == 4
        loss = plat.pm.segs["dfxctl"].u8.view(np.uint64)
        assert int(loss[g.loss_word(1, K, "rejected")]) == 1
        assert int(loss[g.loss_word(1, K, "causes")]) & D.LOSS_MALFORMED
        for ln in lanes:
            ln.threads[0].write(K, recs(4, 4))
        col.top_up_recycled()
        assert col.sweep(0, [0, 1], short) == 2       # both threads keep flowing
        assert col.collected[(0, K)] == 8 and col.collected[(1, K)] == 4
        # an index out of range marks that thread corrupt, and only that one
        lanes[0].h32[g.tail_off(0) // 4] = 999
        col.sweep(0, [0, 1], short)
        assert "outside" in col.corrupt[0] and 1 not in col.corrupt
        assert int(loss[g.corrupt_word(0)]) == 1
    finally:
        plat.stop()


def test_bulk_write_back_rolls_back_device_fields_on_a5(tmp_path):
    plat = make(tmp_path, "a5")
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        give(col, 0, K, 2)
        th = lane.threads[0]
        th.write(K, recs(4))                      # device: tail 1, free head 1, current buffer set
        g = lane.g
        dev_tail = lane.h32[g.tail_off(0) // 4]
        dev_head = lane.h32[(g.pool_off(0, K) + D.PB_HEAD) // 4]
        assert dev_tail == 1 and dev_head == 2      # claimed the first buffer, then its replacement
        # the mistake: write the whole (stale) host mirror back to the device
        col.hdr.write_range_to_device(0, g.hdr_bytes)
        assert lane.h32[g.tail_off(0) // 4] == 0, "device-owned queue_tails rolled back"
        assert lane.h32[(g.pool_off(0, K) + D.PB_HEAD) // 4] == 0, "device-owned free-queue head rolled back"
    finally:
        plat.stop()


def test_stall_record_of_a_push_stall_never_takes_the_slot_the_gate_found(tmp_path, arch):
    """A push that stalls on a full ready queue logs a stall, whose in-band record fills the stall
    pool's one-record buffer: that buffer is published after the push, never from inside its gate
    (it took the slot the gate had just found free, and the push then wrote over the oldest unread
    entry: the host saw a full queue as empty and a whole lap of entries was lost)."""
    import threading

    from shm_layout.layouts import struct_of
    from shm_layout.sync import notify
    from tests.scenarios.runner import wait_until     # (cond, timeout, what): polls with a deadline
    entry = struct_of(D.ready_entry)
    # a budget no loaded machine outlasts between the gate's sleep and the host's take (BUDGET would)
    plat = make(tmp_path, arch, ready_depth=4, buffers_per_pool=6, records_per_buffer={"aicpu_task": 4, "stall": 1},
                backpressure_timeout_s=30.0)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        g = lane.g
        give(col, 0, K, 5)
        give(col, 0, D.K_STALL, 4)
        th = lane.threads[0]
        for i in range(3):
            th.write(K, recs(4, 4 * i))                 # three entries: the queue (4 slots) is full
        assert lane.h32[g.tail_off(0) // 4] == 3
        waiters = (g.wake_word_off(0) + 4) // 4       # the thread's wake word: who sleeps on it
        w = threading.Thread(target=th.write, args=(K, recs(4, 12)), daemon=True)
        w.start()                                      # its push finds the queue full and waits
        wait_until(lambda: lane.c32[waiters] > 0, 10, "the push gate to sleep")
        eo = g.entry_off(0, 0)                         # the host takes entry 0: one slot free
        col.hdr.read_range_from_device(eo, entry.size)
        col.process_entry(0, 0, entry.unpack_from(col.hdr.host, eo), [])
        col.heads[0] = 1
        col.host_put_u32(g.head_off(0), 1)
        notify(lane.ctl.addr + g.wake_word_off(0))
        w.join(10)
        assert not w.is_alive()
        head, tail = 1, int(lane.h32[g.tail_off(0) // 4])
        assert (tail - head) % g.N == 3, f"tail {tail}: the ready queue holds {(tail - head) % g.N} entries, not 3"
        assert col.drain_queue(0, 0, []) == 3
        assert col.collected[(0, K)] == 16
        assert int(col.c64[g.loss_word(0, K, "lost")]) == 0
        st = read_stalls(plat.pm)
        assert ("push", "recovered") in [(s["gate"], s["outcome"]) for s in st]
    finally:
        plat.stop()


def test_write_lands_whole_records_of_every_layout_of_the_input(tmp_path):
    """``write`` copies contiguous records of the pool's own dtype as bytes, and assigns anything else
    (a strided slice) record by record: the buffers hold the same records either way, split where a
    buffer fills."""
    plat = make(tmp_path, "a2a3")                      # 4 records a buffer
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        give(col, 0, K, 2)
        th = lane.threads[0]
        th.write(K, recs(3, 100))                      # contiguous, the pool's dtype: a byte copy
        th.write(K, recs(6, 200)[::2])                 # strided: 1 into this buffer, 2 into the next
        first = buffer_records(lane, K, int(entry(lane, 0, 0)["buffer_ptr"]), 4)
        assert list(first["reg_task_id"]) == [100, 101, 102, 200]
        assert not first["dispatch_time"].any()
        cur = buffer_records(lane, K, int(pool(lane)["current_buf_ptr"]), 2)
        assert list(cur["reg_task_id"]) == [202, 204]
        assert int(pool(lane)["total_record_count"]) == 6
    finally:
        plat.stop()
