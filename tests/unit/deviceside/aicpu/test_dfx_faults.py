"""The DFX pipeline under faults and attack, driven in-process (the platform creates the DFX segments
only; the test drives the AICPU threads and the collector by hand, so every step is deterministic):
buffer ownership on both sides, rejected entries and payloads, supervised drain shards, the
accounting invariant with its causes, durability of what is counted collected, dead lanes, and the
smaller defects of the writer (synthetic load in the stall pool, the DepGen edge out of dispatch 0,
stall release times, live task counts)."""
import os
import threading

import numpy as np
import pytest

from deviceside.aicpu import Lane, TaskRings
from hostside.dfx import Collector, accounting, lane_statistics, load_output, read_stalls, salvage
from shm_layout import aql as A
from shm_layout import dfx as D
from shm_layout import layouts as L
from tests.scenarios.runner import wait_until
from tests.unit.deviceside.aicpu.dfxkit import (K, add_lane_role, buffer_header, buffer_records, dead_pid,
                                                entry, held_pointers, make, pool, recs, set_tail)

pytestmark = pytest.mark.timeout(60)
_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH


@pytest.fixture(params=["a2a3", "a5"])
def arch(request):
    return request.param


def pool_report(acc, t, kind="aicpu_task"):
    return next(p for p in acc["pools"] if p["thread"] == t and p["kind"] == kind)


# -- item 10: ownership ---------------------------------------------------------------------------------
def test_duplicated_ready_entry_is_collected_once_and_never_handed_out_twice(tmp_path, arch):
    plat = make(tmp_path, arch, lanes=2, drain_shards=1)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        th = lanes[0].threads[0]
        th.write(K, recs(4))                         # buffer b0 published as entry 0
        # the device publishes entry 0 twice (a duplicated ready entry)
        lanes[0].hdr.u8[lanes[0].g.entry_off(0, 1):lanes[0].g.entry_off(0, 2)] = \
            lanes[0].hdr.u8[lanes[0].g.entry_off(0, 0):lanes[0].g.entry_off(0, 1)]
        set_tail(lanes[0], 0, 2)
        th.tail = 2
        short = []
        col.sweep(0, [0, 1], short)
        assert col.collected[(0, K)] == 4, "the duplicate must not be collected again"
        col.sweep(0, [0, 1], short)
        th.write(K, recs(4, 4))                      # the next buffer: its top-up hands out what was recycled
        col.sweep(0, [0, 1], short)
        col.sweep(0, [0, 1], short)
        held = held_pointers(lanes[0], K)
        assert len(held) == len(set(held)), f"a buffer is handed out twice: {held}"
        assert col.collected[(0, K)] == 8
        th.flush()
        col.sweep(0, [0, 1], short)
        acc = accounting(plat.pm)
        p = pool_report(acc, 0)
        assert p["collected"] + p["dropped"] == p["total"] == 8
        assert any("duplicate" in c for c in p["causes"]), p      # balanced, and the rejection reported
    finally:
        plat.stop()


def test_foreign_ready_entry_does_not_spread_into_the_untouched_lane(tmp_path, arch):
    plat = make(tmp_path, arch, lanes=2, drain_shards=1)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        t0, t1 = lanes[0].threads[0], lanes[1].threads[0]
        t0.write(K, recs(2, 0, thread=0))            # thread 0 writes into its current buffer b0
        b0 = int(pool(lanes[0], 0)["current_buf_ptr"])
        # thread 1's ready queue names thread 0's current buffer (a forged or stray entry)
        e = entry(lanes[1], 1, 0)
        e["core_index"], e["kind"], e["buffer_ptr"], e["buffer_seq"] = 1, K, b0, 0
        set_tail(lanes[1], 1, 1)
        t1.tail = 1
        short = []
        col.sweep(0, [0, 1], short)
        col.sweep(0, [0, 1], short)
        for i in range(4):                           # thread 1 goes through every buffer it is handed
            t1.write(K, recs(4, 1000 + 4 * i, thread=1))
            col.sweep(0, [0, 1], short)
            col.sweep(0, [0, 1], short)
        t1.write(K, recs(2, 1016, thread=1))         # (before the fix: into b0, beside thread 0)
        t0.write(K, recs(2, 2, thread=0))            # thread 0 completes b0
        t0.flush()
        t1.flush()
        col.sweep(0, [0, 1], short)
        for f in col.files.values():
            f.flush()
        out = load_output(str(tmp_path / "o"))["aicpu_task"]
        mine = out[out["thread"] == 0]
        assert sorted(int(x) for x in mine["reg_task_id"]) == [0, 1, 2, 3], "thread 0's records were overwritten"
        theirs = out[out["thread"] == 1]
        assert sorted(int(x) for x in theirs["reg_task_id"]) == list(range(1000, 1018))
        acc = accounting(plat.pm)
        assert any("foreign" in c or "not released" in c for c in pool_report(acc, 1)["causes"])
    finally:
        plat.stop()


def test_payload_length_outside_the_arena_is_rejected_not_fatal(tmp_path, arch):
    plat = make(tmp_path, arch, subsystems=["args_dump"], records_per_buffer={"args_dump": 1})
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        th = lane.threads[0]
        karg = bytes(range(40))
        th.on_task((7, 0x5000_0001_0010, 100, 200, 90, 0, 1, 1, 1, len(karg), _DISPATCH, karg))
        ptr = int(entry(lane, 0, 0)["buffer_ptr"])
        buffer_records(lane, D.K_ARGS_DUMP, ptr, 1)[0]["payload_len"] = 0xFFFFFF00
        th.on_task((8, 0x5000_0001_0010, 100, 200, 90, 7, 1, 1, 1, len(karg), _DISPATCH, karg))
        short = []
        col.sweep(0, [0], short)                     # must not raise
        assert col.collected[(0, D.K_ARGS_DUMP)] == 2
        col.files["payload"].flush()
        assert os.path.getsize(tmp_path / "o" / "args_payload.bin") == D.payload_file_header.itemsize + len(karg)
        p = pool_report(accounting(plat.pm), 0, "args_dump")
        assert any("payload" in c for c in p["causes"]), p
    finally:
        plat.stop()


def test_an_error_in_a_drain_shard_is_contained_and_the_shard_goes_on(tmp_path):
    plat = make(tmp_path, lanes=2, drain_shards=1)
    try:
        lanes = [Lane(plat.name, i) for i in range(2)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        real = col.process_entry

        def broken(s, t, e, short):
            if t == 1:
                raise RuntimeError("a bug in the collector")
            return real(s, t, e, short)
        col.process_entry = broken
        lanes[1].threads[0].write(K, recs(4))
        shard = threading.Thread(target=col.shard_main, args=(0,), daemon=True)
        shard.start()
        try:
            wait_until(lambda: 1 in col.corrupt, 10, "the error to be reported against thread 1")
            lanes[0].threads[0].write(K, recs(4))
            wait_until(lambda: col.collected[(0, K)] == 4, 10, "thread 0 to be drained after the error")
        finally:
            col.running = False
            col.wake_all()
            shard.join(10)
        assert "a bug in the collector" in col.corrupt[1]
    finally:
        plat.stop()


def test_a_dead_drain_shard_is_restarted(tmp_path):
    plat = make(tmp_path, lanes=1)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        real = col.sweep
        calls = []

        def dies_once(s, queues, short):
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("shard killed")
            return real(s, queues, short)
        col.sweep = dies_once
        col.start_threads()
        try:
            wait_until(lambda: not col.threads["drain0"].is_alive(), 10, "the shard to die")
            col.supervise_threads()
            lane.threads[0].write(K, recs(4))
            wait_until(lambda: col.collected[(0, K)] == 4, 10, "the restarted shard to drain")
            assert col.stats["restarts"] == 1
        finally:
            col.stop_threads()
    finally:
        plat.stop()


def test_a_deflated_record_count_is_reported(tmp_path, arch):
    plat = make(tmp_path, arch, records_per_buffer={"aicpu_task": 64})
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        th = lane.threads[0]
        th.write(K, recs(64 * 3))                    # three full buffers published
        ptr = int(entry(lane, 0, 1)["buffer_ptr"])
        buffer_header(lane, ptr)["record_count"] = 1    # the second claims one record
        e = entry(lane, 0, 1)
        if "record_count" in e.dtype.names:
            e["record_count"] = 1                    # consistently, in the entry too
        short = []
        col.sweep(0, [0], short)
        th.flush()
        col.sweep(0, [0], short)
        acc = accounting(plat.pm)
        p = pool_report(acc, 0)
        assert p["total"] - p["dropped"] - p["collected"] == 63
        assert [i for i in acc["imbalances"] if i["thread"] == 0 and i["kind"] == "aicpu_task"]
        assert any("63" in c for c in p["causes"]), p
    finally:
        plat.stop()


def test_salvage_collects_a_dead_lanes_current_buffers(tmp_path, arch):
    plat = make(tmp_path, arch)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        th = lane.threads[0]
        th.write(K, recs(4))                         # one buffer published
        th.write(K, recs(3, 4))                      # three records in the current buffer
        col.sweep(0, [0], [])
        st = lane.status
        st["pid"] = dead_pid()                       # the lane was killed mid-run
        st["state"] = D.LANE_RUNNING
        plat.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)["collector_state"] = D.COL_DONE
        for f in col.files.values():
            f.flush()
        assert salvage(plat.pm, str(tmp_path / "o")) == 3
        acc = accounting(plat.pm)
        p = pool_report(acc, 0)
        assert p["collected"] == p["total"] == 7 and p["in_buffer"] == 0, p
        got = load_output(str(tmp_path / "o"))["aicpu_task"]
        assert sorted(int(x) for x in got["reg_task_id"]) == list(range(7))
    finally:
        plat.stop()


def test_task_events_of_a_dead_lane_are_counted(tmp_path):
    plat = make(tmp_path)
    try:
        lane = Lane(plat.name, 0)
        role = add_lane_role(plat, 0, L.ROLE_READY)
        rings = TaskRings(plat.pm, lane.g, 0, 1)
        assert rings.emit(0, 5, 0, 1, 2, 0, 0, (1, 1, 1), b"", _DISPATCH)      # pending when the lane dies
        plat.pm.roles[role]["state"] = L.ROLE_DEAD                           # the supervisor saw it die
        lane.status["pid"] = dead_pid()
        assert not rings.emit(0, 6, 0, 1, 2, 0, 5, (1, 1, 1), b"", _DISPATCH)
        st = lane_statistics(plat.pm)[0]
        assert st["task_events_dropped"] == 2, st        # the one never consumed and the one refused
    finally:
        plat.stop()


# -- item 11: durability --------------------------------------------------------------------------------
def test_collected_is_published_only_after_the_records_are_written(tmp_path, arch):
    plat = make(tmp_path, arch)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        lane.threads[0].write(K, recs(4))
        col.sweep(0, [0], [])
        g = lane.g
        counted = int(plat.pm.segs["dfxctl"].u8.view(np.uint64)[g.collected_word(0, K)])
        assert counted == 4
        # what another process (salvage, a reader after a SIGKILL) finds in the file right now
        assert os.path.getsize(tmp_path / "o" / "aicpu_task.bin") == counted * D.aicpu_task.itemsize
    finally:
        plat.stop()


# -- item 13 --------------------------------------------------------------------------------------------
def test_synthetic_load_never_goes_into_the_stall_pool(tmp_path):
    plat = make(tmp_path, mode="synthetic", synthetic_records=8, synthetic_batch=8)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col.proactive_replenish()
        th = lane.threads[0]
        th.run_synthetic()
        assert int(pool(lane, 0, K)["total_record_count"]) == 8
        assert int(pool(lane, 0, D.K_STALL)["total_record_count"]) == 0
    finally:
        plat.stop()


def test_depgen_edge_out_of_dispatch_id_zero(tmp_path):
    plat = make(tmp_path, subsystems=["depgen"])
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col.proactive_replenish()
        rings = TaskRings(plat.pm, lane.g, 0, 1)
        d0, d1 = L.dispatch_id(0, 0, 0), L.dispatch_id(0, 0, 1)
        assert d0 == 0
        # what the command processor passes: the queue's last dispatch id, 0 before its first packet
        rings.emit(0, d0, 0, 1, 2, 0, 0, (1, 1, 1), b"", _DISPATCH)
        rings.emit(0, d1, 0, 3, 4, 2, d0, (1, 1, 1), b"", _DISPATCH)
        th = lane.threads[0]
        assert th.poll_tasks() == 2
        th.flush()
        p = lane.hdr.view(D.pool_block, lane.g.pool_off(0, D.K_DEPGEN), 1)[0]
        assert int(p["total_record_count"]) == 1, "exactly one edge: 0 -> 1 (the first packet has none)"
        ptr = int(entry(lane, 0, 0)["buffer_ptr"])
        e = buffer_records(lane, D.K_DEPGEN, ptr, 1)[0]
        assert (int(e["src_task"]), int(e["dst_task"])) == (d0, d1)
    finally:
        plat.stop()


def test_refill_time_is_published_before_the_tail(tmp_path, arch):
    plat = make(tmp_path, arch)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        g = lane.g
        po = g.pool_off(0, K)
        seen = []
        real = col.host_put_u32

        def spy(off, v, *, t=None):
            if off == po + D.PB_TAIL:                # what the device sees when the tail moves
                seen.append(int(lane.hdr.view(np.uint64, po + D.PB_REFILL, 1)[0]))
            real(off, v, t=t)
        col.host_put_u32 = spy
        before = int(lane.hdr.view(np.uint64, po + D.PB_REFILL, 1)[0])
        col.push_free(0, K, col.allocate(0, K))
        assert seen and seen[0] > before, "the tail was published with the previous refill time"
    finally:
        plat.stop()


def test_a_stall_never_ends_in_a_release_before_it_started(tmp_path):
    plat = make(tmp_path)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        th = lane.threads[0]
        p = th.pools[K]
        calls = []

        def ready():                                 # the host refills right after the first check
            calls.append(1)
            if len(calls) == 1:
                col.push_free(0, K, col.allocate(0, K))
                return False
            return True
        assert th._gate(p, D.GATE_POP, ready)
        for s in read_stalls(plat.pm):
            assert s["release_ns"] == 0 or s["start_ns"] <= s["release_ns"] <= s["end_ns"], s
    finally:
        plat.stop()


def test_lane_tasks_are_published_as_the_lane_goes(tmp_path):
    plat = make(tmp_path)
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        col.proactive_replenish()
        rings = TaskRings(plat.pm, lane.g, 0, 1)
        for i in range(3):
            rings.emit(0, i + 1, 0, 1, 2, 0, i, (1, 1, 1), b"", _DISPATCH)
        assert lane.threads[0].poll_tasks() == 3
        st = lane_statistics(plat.pm)[0]
        assert st["tasks"] == 3, st
    finally:
        plat.stop()


def test_arena_acknowledgement_time_is_published_before_the_count(tmp_path):
    plat = make(tmp_path, subsystems=["args_dump"])
    try:
        lane = Lane(plat.name, 0)
        col = Collector(plat.name, str(tmp_path / "o"))
        g = lane.g
        ao = g.arena_off(0)
        ack = D.arena_block.fields["ack_ns"][1]
        done = D.arena_block.fields["completed_payload_count"][1]
        order = []
        real = col.host_put_u64

        def spy(off, v):
            order.append(off - ao)
            real(off, v)
        col.host_put_u64 = spy
        col.completed_payloads[0] = 1
        col.publish_arena_acks()
        assert order == [ack, done]
        assert lane.threads[0].h64[lane.threads[0].arena_ack_i] > 0     # where the writer reads its release
    finally:
        plat.stop()
