"""Play the host of a live command processor with nothing but the ``shm_layout`` declarations.

A ``Platform`` (``hostside.platform``) runs the real CP processes; these helpers create queues,
signals, allocations and code objects in its segments the way the host runtime does, but by hand,
so that a test can also write what a well-behaved runtime never would (corrupted fields, another
process's handles). Everything a helper claims carries an owner pid: the test's own by default, or
that of a live helper process (``Bystander``) to stand for another client.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np

from hostside.platform import Platform
from shm_layout import aql as A
from shm_layout import layouts as L
from shm_layout.alloc import AllocTable
from shm_layout.coherence import wmb
from shm_layout.kernels import Signature, encode_blob, read_metadata
from shm_layout.sync import cas, fetch_add, notify

U64_MAX = (1 << 64) - 1
WAIT_S = 15.0
DISPATCH = A.make_header(A.HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier=True)
BARRIER_AND = A.make_header(A.HSA_PACKET_TYPE_BARRIER_AND, barrier=True)
BARRIER_OR = A.make_header(A.HSA_PACKET_TYPE_BARRIER_OR, barrier=True)
_DISPATCH_BODY = L.struct_of(A.kernel_dispatch_packet, "setup")
_BARRIER_BODY = L.struct_of(A.barrier_and_packet, "reserved0")
_BODY_OFF = L.offset_of(A.kernel_dispatch_packet, "setup")
_QTABLE_GEN = L.offset_of(L.agent_header, "queue_table_gen")
_SIG_OWNER = L.offset_of(L.signal_slot, "owner")
_CO_OWNER = L.offset_of(L.codeobj_entry, "owner")


@contextlib.contextmanager
def platform(cfg: dict, stderr_path):
    """A started platform whose roles write their stderr to ``stderr_path`` (read it with
    ``role_stderr``); stopped at the end."""
    with open(stderr_path, "w") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)            # the roles are spawned with this fd 2
        try:
            p = Platform(cfg).start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    p.role_stderr_path = stderr_path
    try:
        yield p
    finally:
        p.stop()


def role_stderr(plat) -> str:
    return open(plat.role_stderr_path).read()


class Bystander:
    """A live process whose pid stands for another client's (the CP reclaims what dead pids own)."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                                     stdin=subprocess.PIPE)
        self.pid = self.proc.pid

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cp_alive(plat, agent: int = 0) -> bool:
    return plat.procs[agent].poll() is None


def engine_states(plat, agent: int = 0) -> list:
    st = plat.pm.agents[agent].engine_stats["state"]
    return [int(st[e]) for e in range(plat.pm.topo.n_engines + 1)]


def wait_for(plat, cond, what: str, timeout: float = WAIT_S, agent: int = 0):
    """Poll ``cond`` until true; fails if the CP dies or ``timeout`` passes (a deadline, not a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert cp_alive(plat, agent), f"the command processor died (exit {plat.procs[agent].poll()}) waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


class RawQueue:
    """A queue of ``agent`` (AQL, or SDMA with ``kind=QKIND_SDMA``) owned by ``owner`` (default: us)."""

    def __init__(self, plat, kind: int = L.QKIND_AQL, size: int = 16, engine: int | None = None, agent: int = 0,
                 owner: int | None = None, fields: dict | None = None, announce: bool = True):
        pm = plat.pm
        self.plat, self.pm, self.agent = plat, pm, agent
        am = self.am = pm.agents[agent]
        self.owner = os.getpid() if owner is None else owner
        claiming = L.own_word(self.owner, 2)
        self.q = next((q for q in range(pm.topo.max_queues) if cas(am.qd_addr(q), 0, claiming)), None)
        assert self.q is not None, "no free queue slot"
        d = self.desc = am.qdesc[self.q:self.q + 1]
        n = pm.topo.n_engines
        self.kind = kind
        self.engine = (n if kind == L.QKIND_SDMA else 0) if engine is None else engine
        self.size = size
        d["size"], d["engine"], d["kind"] = size, self.engine, kind
        d["generation"] += 1
        for f in ("status", "error_packet_id", "read_dispatch_id", "write_dispatch_id", "destroy_req",
                  "packets_done", "kernels_done", "barrier_waits", "doorbells_rung"):
            d[f] = 0
        d["error_msg"] = b""
        d["doorbell"] = U64_MAX
        d["created_ns"] = time.monotonic_ns()
        for k, v in (fields or {}).items():
            d[k] = v
        ok = 0 < size <= pm.topo.qmax and not size & (size - 1)
        self.ring = am.seg.view(L.sdma_packet, am.ring_offset(self.q), pm.topo.qmax)
        self.ring[:] = np.zeros(pm.topo.qmax, L.sdma_packet)
        self.ring["header"] = L.SDMA_TYPE_INVALID
        self.mask = (size if ok else pm.topo.qmax) - 1         # (a bad size only has to fail)
        self.wake = am.engine_wake_addr(self.engine if 0 <= self.engine <= n else 0)
        self.next = 0
        self.buf = am.seg.buf
        d["active"] = 1
        wmb()
        assert cas(am.qd_addr(self.q), claiming, L.own_word(self.owner, L.Q_ACTIVE))
        if announce:                          # (without: the engines find it at their next scan)
            self.bump_table()

    # -- host-side writes ---------------------------------------------------------------------
    def bump_table(self):
        fetch_add(self.am.seg.addr + _QTABLE_GEN, 1)
        for e in range(self.pm.topo.n_engines + 1):
            notify(self.am.engine_wake_addr(e))

    def slot_off(self, idx: int) -> int:
        return self.am.ring_offset(self.q) + (idx & self.mask) * L.sdma_packet.itemsize

    def kernarg_slot(self, idx: int):
        """(offset in the agent segment, device address) of packet ``idx``'s kernarg slot."""
        s = (idx & self.mask) * L.KERNARG_SLOT_BYTES
        return self.am.kernarg_offset(self.q) + s, self.am.kernarg_address(self.q, 0) + s

    def reserve(self) -> int:
        """The next packet id, once its slot is free (like the host's wait_for_space; a queue in error
        frees nothing, and its later packets never run anyway)."""
        idx = self.next
        self.next += 1
        self.desc["write_dispatch_id"] = idx + 1
        wait_for(self.plat, lambda: idx - self.read <= self.mask or self.status, f"space on queue {self.q}",
                 agent=self.agent)
        return idx

    def ring_doorbell(self, idx: int) -> None:
        self.desc["doorbell"] = idx
        notify(self.wake)

    def publish(self, idx: int, header: int, ring: bool = True) -> int:
        wmb()
        self.am.seg.view(np.uint16, self.slot_off(idx), 1)[0] = header
        if ring:
            self.ring_doorbell(idx)
        return idx

    def dispatch(self, kobj: int, sig: Signature | None = None, args=(), *, signal: int = 0, grid=(1, 1, 1),
                 block=(1, 1, 1), setup: int = 1, karg: int | None = None, reserved2: int = 0, group: int = 0,
                 private: int = 0, header: int = DISPATCH, ring: bool = True) -> int:
        idx = self.reserve()
        koff, kaddr = self.kernarg_slot(idx)
        if sig is not None and sig.size:
            sig.pack_into(self.buf, koff, list(args))
        _DISPATCH_BODY.pack_into(self.buf, self.slot_off(idx) + _BODY_OFF, setup, block[0], block[1], block[2], 0,
                                 grid[0], grid[1], grid[2], private, group, kobj,
                                 kaddr if karg is None else karg, reserved2, signal)
        return self.publish(idx, header, ring)

    def barrier(self, deps, signal: int = 0, header: int = BARRIER_AND, ring: bool = True) -> int:
        idx = self.reserve()
        d = list(deps) + [0] * (5 - len(deps))
        _BARRIER_BODY.pack_into(self.buf, self.slot_off(idx) + _BODY_OFF, 0, 0, *d, 0, signal)
        return self.publish(idx, header, ring)

    def sdma(self, ptype: int, ring: bool = True, **fields) -> int:
        idx = self.reserve()
        slot = self.ring[idx & self.mask:(idx & self.mask) + 1]
        for k in ("fill_width", "dep_signal", "src", "dst", "size", "fill_value", "completion_signal"):
            slot[k] = fields.pop(k, 0)
        assert not fields, fields
        return self.publish(idx, ptype, ring)

    def raw(self, body: bytes, header: int, ring: bool = True) -> int:
        """A packet of 64 arbitrary bytes (its first two replaced by ``header``, written last)."""
        idx = self.reserve()
        off = self.slot_off(idx)
        self.am.seg.u8[off + 2:off + 64] = np.frombuffer(body[2:64], np.uint8)
        return self.publish(idx, header, ring)

    def destroy(self) -> None:
        """Ask the CP to drop the queue, wait for its acknowledgement (or error), free the slot."""
        self.desc["destroy_req"] = 1
        self.bump_table()
        wait_for(self.plat, lambda: not int(self.desc["active"][0]) or self.status, f"queue {self.q} destroy ack",
                 agent=self.agent)
        cas(self.am.qd_addr(self.q), int(self.desc["owner"][0]), 0)
        self.bump_table()

    # -- device-side results ------------------------------------------------------------------
    @property
    def status(self) -> int:
        return int(self.desc["status"][0])

    @property
    def error_msg(self) -> str:
        return self.desc["error_msg"][0].decode(errors="replace")

    @property
    def read(self) -> int:
        return int(self.desc["read_dispatch_id"][0])

    def wait_done(self, idx: int) -> None:
        wait_for(self.plat, lambda: self.read > idx or self.status, f"queue {self.q} packet {idx}", agent=self.agent)
        assert self.status == 0, (L.STATUS_NAMES.get(self.status, self.status), self.error_msg)

    def wait_error(self) -> int:
        """Wait until the queue is in error (its status); fails if it consumed every packet instead."""
        wait_for(self.plat, lambda: self.status or (self.next and self.read >= self.next), f"queue {self.q} to fail",
                 agent=self.agent)
        assert self.status, f"queue {self.q} ran its {self.next} packet(s) instead of failing"
        assert not int(self.desc["active"][0])
        return self.status


def new_signal(plat, value: int, owner: int | None = None) -> int:
    """Claim a signal slot (from the top of the table) for ``owner`` with ``value``; its handle."""
    pm = plat.pm
    word = L.own_word(os.getpid() if owner is None else owner, L.OWN_ALLOCATED)
    for s in range(pm.topo.n_signals - 1, 0, -1):
        if cas(pm.signal_addr(s) + _SIG_OWNER, 0, word):
            pm.signals[s]["value"] = value
            return L.SIGNAL_HANDLE_BASE + s * L.SIGNAL_SLOT_BYTES
    raise AssertionError("no free signal slot")


def signal_value(plat, handle: int) -> int:
    return int(plat.pm.signals[plat.pm.signal_slot(handle)]["value"])


def table(plat, region: int) -> AllocTable:
    """The allocation table of ``region`` (0 = host pool, 1 + a = agent a's memory)."""
    pm = plat.pm
    if region == 0:
        return AllocTable(pm.alloc_hdrs[0], pm.alloc_recs[0], L.HOST_POOL_BASE, pm.topo.host_pool_bytes, -1)
    a = region - 1
    return AllocTable(pm.alloc_hdrs[region], pm.alloc_recs[region], L.device_base(a), pm.topo.memory_bytes, a)


def alloc(plat, nbytes: int, region: int = 1, owner: int | None = None, kind: int | None = None):
    """(device address, u8 view) of a fresh allocation of ``region`` owned by ``owner``."""
    kind = (L.ALLOC_HOST if region == 0 else L.ALLOC_DEVICE) if kind is None else kind
    addr = table(plat, region).allocate(nbytes, kind, owner)
    seg = plat.pm.segs["hostpool" if region == 0 else f"mem{region - 1}"]
    base = L.HOST_POOL_BASE if region == 0 else L.device_base(region - 1)
    off = addr - base
    return addr, seg.u8[off:off + nbytes]


class CodeObject:
    def __init__(self, slot, gen, meta):
        self.slot, self.gen = slot, gen
        self.kernels = {m["name"]: (L.make_kernel_object(slot, gen, i), Signature(m["signature"]))
                        for i, m in enumerate(meta)}


def load_code(plat, source: str, name: str = "test", owner: int | None = None) -> CodeObject:
    """Load a code object the way the runtime does (no device globals); owned by ``owner``."""
    pm = plat.pm
    meta = read_metadata(source, name)
    blob, meta_len = encode_blob(source, meta)
    me = os.getpid() if owner is None else owner
    seg = pm.segs["codeobj"]
    slot = next((s for s in range(L.CODEOBJ_SLOTS)
                 if cas(seg.addr + s * L.codeobj_entry.itemsize, 0, L.own_word(me, L.CO_LOADING))), None)
    assert slot is not None, "no free code-object slot"
    e = pm.codeobj[slot:slot + 1]
    gen = (int(e["gen"][0]) + 1) & 0xFFFF
    pm.codeobj_blob(slot)[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    e["gen"] = gen
    e["src_len"] = len(blob) - meta_len
    e["meta_len"] = meta_len
    e["n_kernels"] = len(meta)
    e["name"] = name.encode()[:63]
    wmb()
    assert cas(seg.addr + slot * L.codeobj_entry.itemsize, L.own_word(me, L.CO_LOADING), L.own_word(me, L.CO_LOADED))
    return CodeObject(slot, gen, meta)


def unload_code(plat, co: CodeObject) -> None:
    pm = plat.pm
    seg = pm.segs["codeobj"]
    own = int(pm.codeobj[co.slot]["owner"])
    assert cas(seg.addr + co.slot * L.codeobj_entry.itemsize, own, 0)
