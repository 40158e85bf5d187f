"""A seeded fuzzer of a live command processor, played from the test process through raw queues.

Each case creates one raw queue (AQL on a random engine, or SDMA), writes 1-4 packets drawn from a
menu of good, adversarial (one field of a good packet made bad) and random-byte packets, and maybe
corrupts a shared field: the queue's descriptor or indices, a sacrificial allocation record or
code-object entry of ours, a signal slot of ours, device counters. Adversarial packets also name
what belongs to another process (``victim``): its allocations, signals, kernarg slots and kernels.
Then the case waits (bounded) for the queue to settle and checks:

* the CP process is alive and every engine's state is ENGINE_RUNNING;
* a queue with a deterministically bad packet or descriptor ends in error (status != 0, inactive)
  no later than that packet; a queue of good packets runs them all (status 0);
* every good packet before the failing one ran exactly once (its completion signal 1 -> 0, its
  ``inc`` applied once), the failing one and those after it did not (signal still 1).

``Fuzzer.run`` returns counts (packets, bad queues, statuses seen).
"""
from __future__ import annotations

import random
from collections import Counter

import numpy as np

from shm_layout import aql as A
from shm_layout import layouts as L
from tests.paths import kernel_file
from tests.unit.deviceside.cp.rawcp import (BARRIER_AND, BARRIER_OR, U64_MAX, RawQueue, alloc, cp_alive, engine_states,
                                            load_code, new_signal, table, unload_code, wait_for)

SETTLE_S = 20.0
EXTRA = '''

class _Nasty(Exception):
    def __str__(self):
        raise SystemExit("unprintable")


@kernel("")
def exits(ctx):
    raise SystemExit(2)


@kernel("")
def nasty(ctx):
    raise _Nasty()
'''
SOURCE = open(kernel_file("basic.py")).read() + EXTRA
OK, BAD, ANY = "ok", "bad", "any"


class Fuzzer:
    def __init__(self, plat, seed: int, victim_pid: int):
        self.plat, self.pm = plat, plat.pm
        self.rng = random.Random(seed)
        self.victim = victim_pid
        self.n_engines = self.pm.topo.n_engines
        self.co = load_code(plat, SOURCE, "fuzz")
        self.stale = load_code(plat, SOURCE, "stale")
        unload_code(plat, self.stale)                       # its kernel objects are stale from now on
        self.sacrificial_co = load_code(plat, SOURCE, "sacrificial")
        self.incs = [alloc(plat, 16) for _ in range(8)]     # (addr, view): good inc targets
        for _a, v in self.incs:
            v[:] = 0
        self.expected = [0] * len(self.incs)
        self.bufs = [alloc(plat, 256) for _ in range(4)]    # SDMA sources and destinations
        self.pinned = alloc(plat, 256, region=0)
        self.sacrificial = [alloc(plat, 256) for _ in range(4)]
        t = table(plat, 1)
        self.table = t
        self.sac_recs = [int(np.flatnonzero(t.recs["base"] == a)[0]) for a, _v in self.sacrificial]
        self.sac_saved = [t.recs[i].copy() for i in self.sac_recs]
        self.zero = [new_signal(plat, 0) for _ in range(4)]              # dependencies that are met
        self.signals = [new_signal(plat, 1) for _ in range(32)]          # completion signals
        self.spare = RawQueue(plat)                                      # a queue of ours, not the case's
        self.counts = Counter()
        self.refresh_victim()

    # -- what the victim owns ------------------------------------------------------------------
    def refresh_victim(self) -> None:
        pm, v = self.pm, self.victim
        owners = pm.signals["owner"]
        self.v_signals = [L.SIGNAL_HANDLE_BASE + int(s) * L.SIGNAL_SLOT_BYTES
                          for s in np.flatnonzero(L.owner_pid(owners) == v)]
        self.v_allocs = []
        for region in range(2):
            recs = pm.alloc_recs[region]
            live = np.flatnonzero((recs["kind"] != 0) & (recs["owner_pid"] == v))
            self.v_allocs += [int(recs["base"][i]) for i in live]
        am = pm.agents[0]
        self.v_kargs = [am.kernarg_address(q, 0) for q in range(pm.topo.max_queues)
                        if L.owner_pid(int(am.qdesc[q]["owner"])) == v]
        co = pm.codeobj
        self.v_kobjs = [L.make_kernel_object(int(s), int(co[s]["gen"]), 0)
                        for s in np.flatnonzero(L.owner_pid(co["owner"]) == v)]
        assert self.v_signals and self.v_allocs and self.v_kargs and self.v_kobjs, "the victim owns nothing yet"

    # -- helpers -------------------------------------------------------------------------------
    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def garbage(self) -> int:
        r = self.rng
        return self.pick([0x1234, U64_MAX, r.getrandbits(64), r.getrandbits(48), L.DEVICE_BASE - 64,
                          L.SIGNAL_HANDLE_BASE + 8, L.SIGNAL_HANDLE_BASE + (1 << 40), L.KOBJ_BASE | 0x8,
                          L.kernarg_base(0) + (1 << 35), L.KOBJ_BASE + (1 << 40)])

    def fresh_signal(self) -> int:
        """The next completion signal of the pool (round robin: never two in one case), set to 1."""
        self.sig_i = (getattr(self, "sig_i", 0) + 1) % len(self.signals)
        s = self.signals[self.sig_i]
        self.pm.signals[self.pm.signal_slot(s)]["value"] = 1
        return s

    # -- AQL packets: each returns (expect, inc index or None, completion signal or 0) -----------------
    def aql_packet(self, q: RawQueue):
        r = self.rng
        k_inc, s_inc = self.co.kernels["inc"]
        roll = r.random()
        if roll < 0.5:                                     # good: inc or barrier, with a completion signal
            sig = self.fresh_signal()
            if r.random() < 0.7:
                i = r.randrange(len(self.incs))
                q.dispatch(k_inc, s_inc, (self.incs[i][0], 4), signal=sig, grid=(r.randint(1, 64), 1, 1))
                return OK, i, sig
            deps = [self.pick(self.zero) for _ in range(r.randint(0, 5))]
            q.barrier(deps, signal=sig, header=self.pick([BARRIER_AND, BARRIER_OR]))
            return OK, None, sig
        if roll < 0.85:
            return self.bad_aql(q)
        body = r.randbytes(64)
        ptype = self.pick([A.HSA_PACKET_TYPE_KERNEL_DISPATCH, A.HSA_PACKET_TYPE_BARRIER_AND,
                           A.HSA_PACKET_TYPE_BARRIER_OR, r.randrange(256)])
        if ptype == A.HSA_PACKET_TYPE_INVALID:
            ptype = A.HSA_PACKET_TYPE_AGENT_DISPATCH
        q.raw(body, ptype | (r.getrandbits(8) << 8))
        return ANY, None, 0

    def bad_aql(self, q: RawQueue):
        r = self.rng
        k_inc, s_inc = self.co.kernels["inc"]
        sig = self.fresh_signal()
        args = (self.incs[0][0], 4)
        how = r.randrange(18)
        kw = dict(signal=sig)
        kobj, sgn = k_inc, s_inc
        if how == 0:
            kw["setup"] = self.pick([0, 4, 0xFFFC])
        elif how == 1:
            kw["block"] = self.pick([(0, 1, 1), (1, 0, 1), (2048, 1, 1), (64, 64, 1)])
        elif how == 2:
            kw["grid"] = self.pick([(0, 1, 1), (1 << 31, 4, 1), (65535, 65535, 65535)])
        elif how == 3:
            kobj = self.pick([0, self.garbage(), self.stale.kernels["inc"][0], self.pick(self.v_kobjs),
                              L.make_kernel_object(self.co.slot, self.co.gen, 200),
                              L.make_kernel_object(self.co.slot, self.co.gen + 1, 0)])
        elif how == 4:
            kw["karg"] = self.pick([self.garbage(), self.pick(self.v_kargs), self.spare.kernarg_slot(0)[1],
                                    self.pick(self.v_allocs)])
        elif how == 5:
            args = (self.pick([self.garbage() & ~3, self.pick(self.v_allocs), self.incs[0][0] + 1, 0]), 4)
        elif how == 6:
            kw["signal"] = self.pick([self.garbage(), self.pick(self.v_signals), L.SIGNAL_HANDLE_BASE + 4])
        elif how == 7:
            kw["reserved2"] = self.pick([self.garbage() | 1, self.pick(self.v_allocs), self.incs[0][0]])
        elif how in (8, 9, 10, 11):
            name = ["boom", "overrun", "exits", "nasty"][how - 8]
            kobj, sgn = self.co.kernels[name]
            args = (self.incs[0][0],) if name in ("boom", "nasty") else ()
            if name == "overrun":
                args = (self.incs[0][0], 4)
            if name in ("exits", "nasty"):
                args = ()
        elif how == 12:
            deps = [self.pick(self.zero)] * r.randint(0, 3) + [self.pick([self.garbage(), self.pick(self.v_signals)])]
            q.barrier(deps, signal=sig, header=self.pick([BARRIER_AND, BARRIER_OR]))
            return BAD, None, sig
        elif how == 13:
            q.barrier([self.pick(self.zero)], signal=self.pick([self.garbage(), self.pick(self.v_signals)]))
            return BAD, None, 0
        elif how == 14:
            q.raw(r.randbytes(64), self.pick([0, 4, 6, 7, 100, 255]) | (r.getrandbits(8) << 8))   # no AQL type
            return BAD, None, 0
        elif how == 17:                                    # a vendor value packet with one bad field
            return self.bad_value_packet(q, sig)
        elif how == 15:                                    # the victim's pinned / device memory as a pointer
            args = (self.pick(self.v_allocs), 4)
        else:                                              # a kernel object of the victim's code object
            kobj = self.pick(self.v_kobjs)
        q.dispatch(kobj, sgn, args, **kw)
        return BAD, None, kw.get("signal", 0) if how != 6 else 0

    def bad_value_packet(self, q: RawQueue, sig: int):
        """A barrier-value or write-value packet (``amd_barrier_value_packet``) that must fail: the
        victim's memory, a garbage or misaligned address, a bad width, condition or format."""
        r = self.rng
        own = self.incs[0][0]
        f = dict(amd_format=self.pick([A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE, A.HDEMU_PACKET_TYPE_WRITE_VALUE]),
                 reserved0=4, signal=own, value=1, mask=0xFFFFFFFF, cond=A.HSA_SIGNAL_CONDITION_GTE,
                 completion_signal=sig)
        how = r.randrange(6)
        if how == 0:
            f["signal"] = self.pick(self.v_allocs)          # never read nor written: not the owner's
        elif how == 1:
            f["signal"] = self.garbage() & ~7
        elif how == 2:
            f["signal"] = own + self.pick([1, 2, 3])
        elif how == 3:
            f["reserved0"] = self.pick([1, 2, 3, 16, 1 << 31])
        elif how == 4:
            f["amd_format"] = self.pick([0, 1, 3, 0x7F, 0x81, 0xFF])
        else:
            f["amd_format"], f["cond"] = A.HSA_AMD_PACKET_TYPE_BARRIER_VALUE, self.pick([4, 7, 1 << 31])
        q.raw(A.encode("amd_barrier_value_packet", **f), A.make_header(A.HSA_PACKET_TYPE_VENDOR_SPECIFIC, barrier=True))
        return BAD, None, sig

    # -- SDMA packets --------------------------------------------------------------------------
    def sdma_packet(self, q: RawQueue):
        r = self.rng
        (src, sv), (dst, dv) = r.sample(self.bufs, 2)
        roll = r.random()
        if roll < 0.5:
            sig = self.fresh_signal()
            dep = self.pick(self.zero) if r.random() < 0.5 else 0
            if r.random() < 0.5:
                q.sdma(L.SDMA_TYPE_COPY, src=src, dst=dst, size=r.randint(0, 256), dep_signal=dep,
                       completion_signal=sig)
            else:
                w = self.pick([1, 2, 4])
                q.sdma(L.SDMA_TYPE_FILL, fill_width=w, fill_value=r.getrandbits(8 * w), dst=dst,
                       size=w * r.randint(0, 256 // w), dep_signal=dep, completion_signal=sig)
            return OK, None, sig
        if roll < 0.85:
            sig = self.fresh_signal()
            f = dict(fill_width=1, fill_value=7, src=src, dst=dst, size=64, completion_signal=sig)
            ptype = self.pick([L.SDMA_TYPE_COPY, L.SDMA_TYPE_FILL])
            how = r.randrange(8)
            if how == 0:
                ptype, f["fill_width"] = L.SDMA_TYPE_FILL, self.pick([0, 3, 8, 1 << 31])
            elif how == 1:
                ptype, f["fill_width"], f["fill_value"] = L.SDMA_TYPE_FILL, 1, self.pick([256, U64_MAX])
            elif how == 2:
                ptype = self.pick([0, 2, 0x14, 0x33, 0xFF])          # no SDMA type (0x12, 0x13: the rect ones)
            elif how == 3:
                f[self.pick(["src", "dst"])] = self.pick([self.garbage(), self.pick(self.v_allocs),
                                                          self.spare.kernarg_slot(0)[1]])
                ptype = L.SDMA_TYPE_COPY
            elif how == 4:
                f["size"] = self.pick([257, 1 << 40, U64_MAX])
            elif how == 5:
                f["dep_signal"] = self.pick([self.garbage(), self.pick(self.v_signals)])
            elif how == 6:
                f["completion_signal"] = self.pick([self.garbage(), self.pick(self.v_signals)])
                sig = 0
            else:
                f["dst"] = self.pick(self.v_allocs)
                ptype = L.SDMA_TYPE_FILL
            q.sdma(ptype, **f)
            return BAD, None, sig
        ptype = self.pick([L.SDMA_TYPE_COPY, L.SDMA_TYPE_FILL, L.SDMA_TYPE_COPY_RECT, L.SDMA_TYPE_FILL_RECT,
                           r.randrange(256)])
        q.raw(r.randbytes(64), ptype if ptype != L.SDMA_TYPE_INVALID else 0)
        return ANY, None, 0

    # -- corruptions ---------------------------------------------------------------------------
    def corrupt_descriptor(self, q: RawQueue) -> None:
        """After a good packet ran: a descriptor change that must fail the queue."""
        r = self.rng
        d = q.desc
        how = r.randrange(7)
        if how == 6:
            d["size"] = self.pick([q.size * 2, q.size // 2, 0, 3, 1 << 31])
            q.bump_table()
        elif how == 0:
            d["engine"] = self.pick([e for e in (int(d["engine"][0]) + 1, 99, self.n_engines, 0)
                                     if e != int(d["engine"][0])])
            q.bump_table()
        elif how == 1:
            d["kind"] = self.pick([L.QKIND_SDMA if q.kind == L.QKIND_AQL else L.QKIND_AQL, 5])
            q.bump_table()
        elif how == 2:
            d["read_dispatch_id"] = self.pick([0, q.read + 1000, U64_MAX, (q.read - 1) & U64_MAX])
            q.dispatch(*self.co.kernels["empty"]) if q.kind == L.QKIND_AQL else \
                q.sdma(L.SDMA_TYPE_FILL, fill_width=1, dst=self.bufs[0][0], size=1)
        elif how == 3:
            q.ring_doorbell(q.next + self.pick([0, 5, 1 << 40]))       # packets never reserved
        elif how == 4:
            d["write_dispatch_id"] = (q.read - 1) & U64_MAX      # behind the read index (or far ahead at 0)
            q.ring_doorbell(q.read)
        else:
            d["read_dispatch_id"] = d["write_dispatch_id"] = self.pick([U64_MAX, 1 << 63])
            d["generation"] += 1
            q.bump_table()

    def corrupt_shared(self) -> None:
        """A shared field of ours or a device counter: the CP must survive it (outcome free)."""
        r, pm = self.rng, self.pm
        how = r.randrange(5)
        if how == 0:                                   # a sacrificial allocation record leaves its region
            i = self.pick(self.sac_recs)
            end = L.device_base(0) + pm.topo.memory_bytes
            base, size = self.pick([(end - 256, 1 << 20), (int(self.table.recs["base"][i]), U64_MAX),
                                    (L.device_base(0) - 4096, 8192), (U64_MAX - 255, 4096), (end, 256)])
            self.table.recs[i:i + 1]["base"], self.table.recs[i:i + 1]["size"] = base, size
            self.table.hdr["gen"] += 1
        elif how == 1:                                 # the sacrificial code object's entry or metadata
            e = pm.codeobj[self.sacrificial_co.slot:self.sacrificial_co.slot + 1]
            field = self.pick(["meta_len", "src_len", "n_kernels", "gen", "blob"])
            if field == "blob":
                n = int(e["meta_len"][0])
                pm.codeobj_blob(self.sacrificial_co.slot)[r.randrange(max(n, 1))] = r.getrandbits(8)
            else:
                e[field] = r.getrandbits(32)
        elif how == 2:                                 # one of our signal slots (values, wake word, stamps)
            s = pm.signal_slot(self.pick(self.signals))
            pm.signals[s:s + 1][self.pick(["seq", "waiters", "start_ts", "end_ts", "kind"])] = r.getrandbits(32)
        elif how == 3:                                 # device counters at their limit
            self.pm.agents[0].engine_stats[r.randrange(self.n_engines + 1):][:1][
                self.pick(["busy_ns", "packets", "sleeps", "wakeups"])] = U64_MAX
        else:
            self.pm.agents[0].hdr[self.pick(["copies", "reclaimed_queues", "queue_table_gen"])] = U64_MAX

    def use_sacrificial(self, q: RawQueue) -> None:
        """A packet that touches the (maybe corrupted) sacrificial record or code object."""
        k, s = self.sacrificial_co.kernels["inc"]
        addr = self.pick(self.sacrificial)[0]
        if q.kind == L.QKIND_AQL:
            q.dispatch(self.pick([k, self.co.kernels["inc"][0]]), s, (addr, 4))
        else:
            q.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=3, dst=addr, size=64)

    def restore_shared(self) -> None:
        for i, saved in zip(self.sac_recs, self.sac_saved):
            self.table.recs[i] = saved
        self.table.hdr["gen"] += 1
        unload_code(self.plat, self.sacrificial_co)
        self.sacrificial_co = load_code(self.plat, SOURCE, "sacrificial")

    # -- one case ------------------------------------------------------------------------------
    def case(self) -> None:
        r = self.rng
        sdma = r.random() < 0.3
        kind = L.QKIND_SDMA if sdma else L.QKIND_AQL
        q = RawQueue(self.plat, kind=kind, engine=None if sdma else r.randrange(self.n_engines),
                     size=self.pick([4, 8, 16]))
        plan = []                                      # (idx, expect, inc, signal)
        descriptor = shared = False
        if r.random() < 0.12:                          # a good packet, then a descriptor that must fail
            expect, inc, sig = self.sdma_packet_good(q) if sdma else self.aql_good(q)
            plan.append((q.next - 1, expect, inc, sig))
            wait_for(self.plat, lambda: q.read >= q.next or q.status, "the first packet", SETTLE_S)
            self.corrupt_descriptor(q)
            descriptor = True
        else:
            if r.random() < 0.1:
                self.corrupt_shared()
                self.use_sacrificial(q)
                plan.append((q.next - 1, ANY, None, 0))
                shared = True
            for _ in range(r.randint(1, 4)):
                expect, inc, sig = self.sdma_packet(q) if sdma else self.aql_packet(q)
                plan.append((q.next - 1, expect, inc, sig))
        self.counts["packets"] += q.next
        bad_at = next((i for i, e, _n, _s in plan if e == BAD), None)
        if descriptor or bad_at is not None:
            wait_for(self.plat, lambda: q.status, f"queue {q.q} to fail ({plan})", SETTLE_S)
        else:
            wait_for(self.plat, lambda: q.status or q.read >= q.next, f"queue {q.q} to settle ({plan})", SETTLE_S)
        status = q.status
        self.counts[L.STATUS_NAMES.get(status, status)] += 1
        failed_at = int(q.desc["error_packet_id"][0]) if status else q.next
        if bad_at is not None:
            assert status and failed_at <= bad_at, (plan, status, failed_at, q.error_msg)
        if status:
            assert not int(q.desc["active"][0])
            assert q.error_msg, f"queue {q.q} failed with {status:#x} and no message"
        elif not any(e == ANY for _i, e, _n, _s in plan):
            assert q.read == q.next, (plan, q.read)
        for idx, expect, inc, sig in plan:
            ran = idx < failed_at and not descriptor or descriptor and idx == plan[0][0]
            if inc is not None and ran:
                self.expected[inc] += 1
            if sig and expect == OK and not (descriptor and idx != plan[0][0]):
                v = int(self.pm.signals[self.pm.signal_slot(sig)]["value"])
                assert v == (0 if ran else 1), (plan, idx, ran, v, status, failed_at, q.error_msg)
        for (_a, view), n in zip(self.incs, self.expected):
            assert list(view.view(np.int32)) == [n] * 4, (plan, self.expected)
        q.destroy()
        if shared:
            self.restore_shared()
        assert cp_alive(self.plat), f"the command processor died (exit {self.plat.procs[0].poll()})"
        assert engine_states(self.plat) == [L.ENGINE_RUNNING] * (self.n_engines + 1)
        self.counts["cases"] += 1
        self.counts["bad queues"] += bool(status)

    def aql_good(self, q):
        k, s = self.co.kernels["inc"]
        sig = self.fresh_signal()
        i = self.rng.randrange(len(self.incs))
        q.dispatch(k, s, (self.incs[i][0], 4), signal=sig)
        return OK, i, sig

    def sdma_packet_good(self, q):
        sig = self.fresh_signal()
        q.sdma(L.SDMA_TYPE_FILL, fill_width=1, fill_value=1, dst=self.bufs[0][0], size=16, completion_signal=sig)
        return OK, None, sig

    def run(self, cases: int) -> Counter:
        for c in range(cases):
            if c % 100 == 0:
                self.refresh_victim()
            self.case()
        return self.counts
