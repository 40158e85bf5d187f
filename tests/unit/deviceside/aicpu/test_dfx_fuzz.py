"""DFX fuzz, in-process and seeded: three AICPU threads write (AicpuTask, AicoreTask, ArgsDump with
payloads) while a fuzzer corrupts what thread 1 shares with the host between the collector's sweeps:
its ready entries (core, kind, pointer, seq, count; duplicated entries), its tail index, the record
counts in its buffer headers and the payload lengths of its ArgsDump records. The collector must
survive every sweep, the other two threads must flow untouched (balanced, nothing dropped, every
record once), and every loss must be reported: each pool where ``collected + dropped != total``
names its causes, in terms that add up to what is missing.

(The same fuzz against the real processes, racing the lanes, is in tests/scenarios/test_dfx_pipeline.py.)
"""
import random

import numpy as np
import pytest

from deviceside.aicpu import Lane
from hostside.dfx import Collector, accounting, load_output
from shm_layout import aql as A
from shm_layout import dfx as D
from tests.unit.deviceside.aicpu.dfxkit import buffer_header, buffer_records, entry, make, set_tail

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]
VICTIM = 1
ROUNDS = 60
_DISPATCH = A.HSA_PACKET_TYPE_KERNEL_DISPATCH


def published(lane, t, col):
    """Indices of thread t's entries the collector has not read yet (host head .. device tail)."""
    g = lane.g
    head, tail = col.heads[t], int(lane.hdr.view(np.uint32, g.tail_off(t), 1)[0])
    if tail >= g.N:
        return []
    out = []
    while head != tail:
        out.append(head)
        head = (head + 1) % g.N
    return out


def mutate(rng, lanes, col, late: bool):
    """One corruption of the victim's shared state; returns what it did (an index out of its ring
    only when ``late``: after it the thread is no longer drained)."""
    lane = lanes[VICTIM]
    g = lane.g
    idx = published(lane, VICTIM, col)
    what = rng.choice(["entry", "entry", "duplicate", "count", "count", "payload", "payload", "tail"])
    if what == "tail":
        if late and rng.random() < 0.3:
            set_tail(lane, VICTIM, rng.choice([g.N, 999, 0xFFFFFFFF]))      # out of the ring: corrupt
        else:
            set_tail(lane, VICTIM, rng.randrange(g.N))                       # a wrong place in it
        return what
    if what == "payload":        # an ArgsDump buffer, if one is published
        idx = [i for i in idx if int(entry(lane, VICTIM, i)["kind"]) == D.K_ARGS_DUMP]
    if not idx:
        return None
    i = rng.choice(idx)
    e = entry(lane, VICTIM, i)
    if what == "entry":
        field = rng.choice(["core_index", "kind", "buffer_ptr", "buffer_seq", "record_count"])
        other = lanes[rng.choice([0, 2])]
        choices = {"core_index": [0, 2, 77], "kind": [D.K_AICORE_TASK, D.K_PMU, 99],
                   "buffer_ptr": [int(other.hdr.view(D.pool_block, g.pool_off(rng.choice([0, 2]), D.K_AICPU_TASK), 1)
                                      [0]["current_buf_ptr"]), D.DFX_BUF_BASE + 8, 0xBAD0BAD0,
                                  g.buffer_addr(rng.choice([0, 2]), D.K_AICPU_TASK, rng.randrange(4))],
                   "buffer_seq": [int(e["buffer_seq"]) + 1, int(e["buffer_seq"]) - 1, 0],
                   "record_count": [0, 1, int(e["record_count"]) + 1, 0xFFFF]}
        e[field] = rng.choice(choices[field]) & (0xFFFFFFFFFFFFFFFF if field == "buffer_ptr" else 0xFFFFFFFF)
        return f"entry.{field}"
    if what == "duplicate":
        src = lane.hdr.u8[g.entry_off(VICTIM, i):g.entry_off(VICTIM, i) + D.ready_entry.itemsize].copy()
        j = rng.choice(idx)
        lane.hdr.u8[g.entry_off(VICTIM, j):g.entry_off(VICTIM, j) + D.ready_entry.itemsize] = src
        return what
    ptr = int(e["buffer_ptr"])
    k = int(e["kind"])
    try:
        owner, _i = g.check_buffer_kind(k, ptr)
    except (ValueError, KeyError):
        return None
    if owner != VICTIM:          # an entry whose pointer was made another thread's: not its buffer to hurt
        return None
    if what == "count":
        buffer_header(lane, ptr)["record_count"] = rng.choice([0, 1, int(e["record_count"]) - 1, 0xFFFFFFFF])
        if rng.random() < 0.5:
            e["record_count"] = int(buffer_header(lane, ptr)["record_count"])     # consistently deflated
        return what
    if k != D.K_ARGS_DUMP or not int(e["record_count"]):
        return None
    r = buffer_records(lane, k, ptr, int(e["record_count"]))
    r[rng.randrange(len(r))]["payload_len"] = rng.choice([0xFFFFFF00, D.ARENA_BYTES + 1, D.ARENA_BYTES, 12345])
    return what


def write_round(rng, lanes, round_no):
    """Each thread: a few tasks' records (AicpuTask, AicoreTask, ArgsDump with a payload)."""
    for ln in lanes:
        th = ln.threads[0]
        for j in range(rng.randrange(1, 4)):
            did = (th.t << 40) | (round_no << 8) | j
            karg = bytes(rng.randrange(256) for _ in range(rng.choice([0, 16, 40])))
            th.on_task((did, 0x5000_0001_0010, 100, 200, 90, 0, 1, 1, 1, len(karg), _DISPATCH, karg))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dfx_fuzz_collector_survives_others_flow_every_loss_reported(tmp_path, seed):
    rng = random.Random(seed)
    plat = make(tmp_path, lanes=3, drain_shards=2, subsystems=["chip_swimlane", "args_dump"],
                records_per_buffer={"aicpu_task": 4, "aicore_task": 4, "args_dump": 2},
                buffers_per_pool=4, pool_overrides={str(VICTIM): 8}, ready_depth=16, backpressure_timeout_s=0.02)
    try:
        lanes = [Lane(plat.name, i) for i in range(3)]
        col = Collector(plat.name, str(tmp_path / "o"))
        col._open_outputs()
        col.proactive_replenish()
        done = []
        shards = [col.queues_of(s) for s in range(col.S)]
        shorts = [[] for _ in shards]

        def collect():
            for s, q in enumerate(shards):
                col.sweep(s, q, shorts[s])          # must never raise
            col.top_up_recycled()
            col.publish_arena_acks()
            for s, q in enumerate(shards):
                col.sweep(s, q, shorts[s])
        for n in range(ROUNDS):
            write_round(rng, lanes, n)
            for _ in range(rng.randrange(3)):
                done.append(mutate(rng, lanes, col, late=n > ROUNDS * 3 // 4))
            collect()
        for ln in lanes:
            ln.threads[0].flush()
        collect()
        assert any(done), "the fuzzer did nothing"
        acc = accounting(plat.pm)
        for p in acc["pools"]:
            terms = ((p["total"] - p["dropped"] - p["in_buffer"] - p["published"]) + p["in_buffer"]
                     + (p["published"] - (p["collected"] + p["lost"] - p["overlap"])) + p["lost"] - p["overlap"])
            assert terms == p["missing"], p                          # the causes add up
            if p["thread"] != VICTIM:
                assert p["missing"] == 0 and p["dropped"] == 0 and not p["causes"], p    # untouched
            elif p["missing"]:
                assert p["causes"], p                                 # every loss reported
        assert all(i["causes"] for i in acc["imbalances"])
        assert not [i for i in acc["imbalances"] if i["thread"] != VICTIM]
        assert VICTIM not in col.corrupt or "outside" in col.corrupt[VICTIM]
        assert not [t for t in col.corrupt if t != VICTIM]
        for f in col.files.values():
            f.close()
        out = load_output(str(tmp_path / "o"))
        for name in ("aicpu_task", "aicore_task"):
            for t in (0, 2):
                mine = out[name][out[name]["reg_task_id"] >> 40 == t]["reg_task_id"]
                total = next(p["total"] for p in acc["pools"] if p["thread"] == t and p["kind"] == name)
                assert len(mine) == len(np.unique(mine)) == total, (name, t)
        args = out["args_dump"]
        for t in (0, 2):
            mine = args[args["task_id"] >> 40 == t]
            assert len(mine) == len(np.unique(mine["task_id"]))
    finally:
        plat.stop()
