"""Shared fields that a client corrupted (by accident or on purpose) never kill the command processor
or stall a queue silently: counters wrap, an impossible queue descriptor or index puts its queue in
error with an HSA status naming the field, a corrupted allocation record or code-object entry is no
allocation / no code object, and an owner word that names no process is reclaimed. Each case ends
with the CP alive, its engines running, and a good queue on the same engine served."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shm_layout import layouts as L
from shm_layout.kernels import encode_blob, read_metadata
from shm_layout.sync import cas
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (U64_MAX, Bystander, RawQueue, alloc, cp_alive, engine_states, load_code,
                                            platform, table, wait_for)

pytestmark = pytest.mark.timeout(90)

CFG = {"agents": 1, "engines": 2, "memory_mib": 4, "host_pool_mib": 4, "max_queues": 16, "queue_size_max": 16}
BASIC = open(kernel_file("basic.py")).read()
NO_PID = 0xFFFF_FFFF          # an owner pid outside pid_t


@pytest.fixture
def plat(tmp_path):
    with platform(CFG, tmp_path / "roles.stderr") as p:
        yield p


def _served(plat, engine: int = 0) -> None:
    """The CP lives, every engine runs, and a good packet on a new queue of ``engine`` is served."""
    n = plat.pm.topo.n_engines
    if engine == n:
        addr, view = alloc(plat, 64)
        s = RawQueue(plat, kind=L.QKIND_SDMA)
        s.wait_done(s.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=9, dst=addr, size=64))
        assert (view == 9).all()
    else:
        co = load_code(plat, BASIC, "good")
        addr, view = alloc(plat, 16)
        x = view.view(np.int32)
        x[:] = 0
        q = RawQueue(plat, engine=engine)
        k, sig = co.kernels["inc"]
        q.wait_done(q.dispatch(k, sig, (addr, 4)))
        assert list(x) == [1] * 4
    assert cp_alive(plat)
    assert engine_states(plat) == [L.ENGINE_RUNNING] * (n + 1)


def _inc(plat, q, co=None):
    co = co or load_code(plat, BASIC, "basic")
    addr, _view = alloc(plat, 16)
    k, sig = co.kernels["inc"]
    return q.dispatch(k, sig, (addr, 4))


def _housekept(plat, rounds: int = 2) -> None:
    """Wait until engines have done ``rounds`` more housekeeping passes (the heartbeat moved)."""
    hdr = plat.pm.agents[0].hdr
    for _ in range(rounds):
        seen = int(hdr["heartbeat_ns"][0])
        wait_for(plat, lambda: int(hdr["heartbeat_ns"][0]) != seen, "a housekeeping pass")


# -- counters -------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["kernels_done", "packets_done"])
def test_queue_counter_at_u64_max_wraps(plat, field):
    q = RawQueue(plat, fields={field: U64_MAX})
    q.wait_done(_inc(plat, q))
    assert int(q.desc[field][0]) == 0
    _served(plat)


@pytest.mark.parametrize("field", ["busy_ns", "packets"])
def test_engine_counter_at_u64_max_wraps(plat, field):
    stats = plat.pm.agents[0].engine_stats
    stats[0:1][field] = U64_MAX
    q = RawQueue(plat, engine=0)
    q.wait_done(_inc(plat, q))
    wait_for(plat, lambda: int(stats[field][0]) < U64_MAX, f"engine_stats.{field} to wrap")
    _served(plat)


def test_agent_copies_at_u64_max_wraps(plat):
    plat.pm.agents[0].hdr["copies"] = U64_MAX
    _served(plat, plat.pm.topo.n_engines)
    assert int(plat.pm.agents[0].hdr["copies"][0]) == 0


# -- queue descriptors ----------------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 3, 32, 1 << 31])
def test_impossible_queue_size_fails_the_queue(plat, size):
    q = RawQueue(plat, size=size)
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION
    assert f"size {size} is not a power of two" in q.error_msg, q.error_msg
    _served(plat)


@pytest.mark.parametrize("kind, engine, what", [(L.QKIND_AQL, 99, "engine 99"), (7, 0, "kind 7"),
                                                (L.QKIND_AQL, 2, "engine 2 of an AQL queue"),
                                                (L.QKIND_SDMA, 0, "engine 0 of an SDMA queue")])
def test_queue_no_engine_can_serve_fails(plat, kind, engine, what):
    q = RawQueue(plat, kind=kind, engine=engine)
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION
    assert what in q.error_msg, q.error_msg
    _served(plat)


@pytest.mark.parametrize("field, value", [("engine", 1), ("engine", 77), ("kind", L.QKIND_SDMA), ("size", 8),
                                          ("size", 0)])
def test_engine_kind_or_size_changed_under_the_cp_fails_the_queue(plat, field, value):
    q = RawQueue(plat, engine=0)
    q.wait_done(_inc(plat, q))
    q.desc[field] = value
    q.bump_table()
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE
    assert "changed under the command processor" in q.error_msg, q.error_msg
    _served(plat, 0)
    _served(plat, 1)


@pytest.mark.parametrize("moved", [0, 10 ** 6, U64_MAX])
def test_read_index_moved_by_the_host_fails_the_queue(plat, moved):
    q = RawQueue(plat)
    q.wait_done(_inc(plat, q))
    q.wait_done(_inc(plat, q))
    q.desc["read_dispatch_id"] = moved
    _inc(plat, q)                             # the next doorbell makes the engine look
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE
    assert f"read_dispatch_id changed under the command processor from 2 to {moved}" in q.error_msg, q.error_msg
    _served(plat)


@pytest.mark.parametrize("doorbell, write", [(5, 1), (U64_MAX - 1, 1), (1, 0)])
def test_doorbell_past_the_reserved_packets_fails_the_queue(plat, doorbell, write):
    q = RawQueue(plat)
    q.wait_done(_inc(plat, q))                # read index 1
    q.desc["write_dispatch_id"] = write
    q.ring_doorbell(doorbell)                 # rung for packets that were never written
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE
    assert ("past write_dispatch_id" if doorbell >= write > 0 else "behind read_dispatch_id") in q.error_msg, \
        q.error_msg
    _served(plat)


def test_recreated_queue_with_impossible_indices_fails(plat):
    q = RawQueue(plat)
    q.wait_done(_inc(plat, q))
    d = q.desc
    d["read_dispatch_id"] = d["write_dispatch_id"] = U64_MAX
    d["generation"] += 1                      # looks like a queue the CP has never seen
    q.bump_table()
    wait_for(plat, lambda: q.status, "the queue to fail")
    assert q.status == L.HSA_STATUS_ERROR_INVALID_QUEUE
    assert "past 2**63" in q.error_msg, q.error_msg
    _served(plat)


def test_queue_of_an_owner_pid_outside_pid_t_is_reclaimed(plat):
    q = RawQueue(plat, owner=NO_PID)
    _housekept(plat, 3)
    wait_for(plat, lambda: int(q.desc["owner"][0]) == 0, "the queue to be reclaimed")
    _served(plat)


# -- allocation records ---------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["past_segment_end", "huge_size", "below_aperture", "wrapping"])
def test_allocation_record_leaving_its_region_is_no_allocation(plat, where):
    t = table(plat, 1)
    addr, _view = alloc(plat, 256)
    i = int(np.flatnonzero(t.recs["base"] == addr)[0])
    end = L.device_base(0) + plat.pm.topo.memory_bytes
    base, size = {"past_segment_end": (end - 256, 1 << 20), "huge_size": (addr, U64_MAX),
                  "below_aperture": (L.device_base(0) - 4096, 1 << 20), "wrapping": (U64_MAX - 255, 4096)}[where]
    t.recs[i:i + 1]["base"] = base
    t.recs[i:i + 1]["size"] = size
    t.hdr["gen"] += 1
    co = load_code(plat, BASIC, "basic")
    k, sig = co.kernels["inc"]
    q = RawQueue(plat)
    ptr = base if L.device_base(0) <= base < end else addr
    q.dispatch(k, sig, (ptr, 4))
    assert q.wait_error() == L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
    assert "not inside a live allocation" in q.error_msg, q.error_msg
    assert t.record_error(base, size) is not None
    _served(plat)


def test_allocation_owner_outside_pid_t_is_reclaimed(plat):
    addr, _view = alloc(plat, 256, owner=NO_PID)
    t = table(plat, 1)
    wait_for(plat, lambda: not len(np.flatnonzero((t.recs["base"] == addr) & (t.recs["kind"] != 0))),
             "the record to be reclaimed")
    _served(plat)


def test_region_lock_held_forever_does_not_block_or_kill_the_cp(plat):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    addr, _view = alloc(plat, 256, owner=dead.pid)         # to reclaim: its owner is gone
    co = load_code(plat, BASIC, "basic")
    k, sig = co.kernels["inc"]
    x_addr, x_view = alloc(plat, 16)
    x = x_view.view(np.int32)
    x[:] = 0
    q = RawQueue(plat, engine=0)                            # the janitor's own queue
    t = table(plat, 1)
    holder = Bystander()
    try:
        t.hdr["lock"] = holder.pid                          # a live process that never lets go
        _housekept(plat, 2)                                 # the janitor tried to reclaim meanwhile
        for _ in range(3):
            q.wait_done(q.dispatch(k, sig, (x_addr, 4)))    # and still serves, with the lock held
        assert list(x) == [3] * 4
        _housekept(plat, 2)
        assert cp_alive(plat)
        t.hdr["lock"] = 0
        wait_for(plat, lambda: not len(np.flatnonzero((t.recs["base"] == addr) & (t.recs["kind"] != 0))),
                 "the record to be reclaimed")
    finally:
        t.hdr["lock"] = 0
        holder.close()
    _served(plat)


# -- other owner words ----------------------------------------------------------------------------
def test_owner_words_outside_pid_t_are_reclaimed(plat):
    pm = plat.pm
    sig_slot = pm.topo.n_signals - 1
    pm.signals[sig_slot:sig_slot + 1]["owner"] = L.own_word(NO_PID, L.OWN_ALLOCATED)
    co_slot = L.CODEOBJ_SLOTS - 1
    pm.codeobj[co_slot:co_slot + 1]["owner"] = L.own_word(NO_PID, L.CO_LOADED)
    seg = pm.segs["trace"]
    ring = pm.topo.trace_rings - 1
    hdr = seg.view(L.trace_ring_header, ring * pm.topo.trace_ring_bytes, 1)
    hdr["owner"] = L.own_word(NO_PID, 1)
    wait_for(plat, lambda: not int(pm.signals["owner"][sig_slot]) and not int(pm.codeobj["owner"][co_slot])
             and not int(hdr["owner"][0]), "the owner words to be reclaimed")
    _served(plat)


# -- code-object entries --------------------------------------------------------------------------
def _rewrite(plat, co, meta=None, n_kernels=None, meta_text=None):
    """Rewrite a loaded code object's metadata in place (as a corrupting client would)."""
    pm = plat.pm
    m = read_metadata(BASIC, "basic")
    if meta is not None:
        m = meta(m)
    blob, meta_len = encode_blob(BASIC, m)
    if meta_text is not None:
        src = blob[meta_len:]
        blob, meta_len = meta_text + src, len(meta_text)
    pm.codeobj_blob(co.slot)[:len(blob)] = np.frombuffer(blob, np.uint8)
    e = pm.codeobj[co.slot:co.slot + 1]
    e["meta_len"], e["src_len"] = meta_len, len(blob) - meta_len
    if n_kernels is not None:
        e["n_kernels"] = n_kernels


def _bad_signature(m):
    m[0]["signature"] = "f32** x, what"
    return m


def _no_name(m):
    m[0]["name"] = 12
    return m


@pytest.mark.parametrize("how, expect", [
    (dict(meta=_bad_signature), "kernel argument must look like"),
    (dict(meta=_no_name), "has no name and signature strings"),
    (dict(n_kernels=200), "not a list of n_kernels = 200"),
    (dict(meta_text=json.dumps({"not": "a list"}).encode()), "not a list of n_kernels"),
    (dict(meta_text=b"\xff\xfe garbage"), "does not load"),
])
def test_corrupted_code_object_metadata_is_a_bad_code_object(plat, how, expect):
    co = load_code(plat, BASIC, "basic")
    _rewrite(plat, co, **how)
    q = RawQueue(plat)
    k, _sig = co.kernels["inc"]
    kobj = L.make_kernel_object(co.slot, co.gen, 150) if how.get("n_kernels") else k
    addr, _view = alloc(plat, 16)
    q.dispatch(kobj, _sig, (addr, 4))
    assert q.wait_error() == L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT
    assert expect in q.error_msg, q.error_msg
    _served(plat)

