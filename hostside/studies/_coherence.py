"""Study ``coherence``: SVM against non-SVM, the cost of the explicit write-backs per record and per
buffer.

The claim (docs/ARCHITECTURE.md, *Coherence model*; docs/profiling.md): under SVM (``arch = "a2a3"``)
host and device share the bytes and the collector's ``write_range_to_device`` /
``read_range_from_device`` are no-ops; under non-SVM (``arch = "a5"``) each is a copy of exactly the
byte range it names, so the collector pays a fixed cost per buffer (the entry, the header, the
ownership word, the free-queue slot and tail it writes back) and a cost per record (the buffer's
records read from the device) that SVM does not.

Two measurements. (1) The primitive, in this process: ``SharedRegion`` on two numpy arrays, the
time per call of a 4-byte and an 8-byte write-back and of a read of a buffer's records, for each
record count, SVM and non-SVM. (2) End to end: the synthetic DFX pipeline (as
``scripts/bench_dfx.py``: one lane, AicpuTask + AicoreTask, every record collected) on both arches
at several records per buffer; a least-squares fit, against records per buffer, of the collector
process's CPU time per buffer (psutil, from go to the last record collected: wall time is mostly the
writers' and the wake-ups' on 2 cores) gives each arch's per-buffer and per-record cost; their
difference is what non-SVM adds. The small run does one records-per-buffer point (no fit).
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import psutil

from hostside.platform import Platform
from shm_layout import dfx as D
from shm_layout.coherence import SharedRegion

from ._common import Progress, Study

__all__ = ["run"]

CLAIM = ("non-SVM pays per write-back and per record read from the device, SVM does not (judged on the "
         "SharedRegion primitive; the collector's CPU per buffer is the end-to-end view)")
KINDS = (D.K_AICPU_TASK, D.K_AICORE_TASK)


def _primitive(rpb_list, reps: int) -> list[dict]:
    rec = D.aicpu_task.itemsize
    rows = []
    for svm in (True, False):
        size = 64 + max(rpb_list) * rec + 4096
        dev = np.zeros(size, np.uint8)
        reg = SharedRegion(dev, None if svm else np.zeros(size, np.uint8), svm)
        for n in rpb_list:
            timings = {}
            for what, off, nbytes in (("write_u32", 128, 4), ("write_u64", 256, 8), ("read_records", 64, n * rec)):
                fn = reg.read_range_from_device if what.startswith("read") else reg.write_range_to_device
                best = []
                for _ in range(5):
                    t = time.perf_counter_ns()
                    for _ in range(reps):
                        fn(off, nbytes)
                    best.append((time.perf_counter_ns() - t) / reps)
                timings[what] = min(best)
            rows.append({"svm": svm, "records_per_buffer": n, "write_u32_ns": timings["write_u32"],
                         "write_u64_ns": timings["write_u64"], "read_records_ns": timings["read_records"],
                         "read_ns_per_record": timings["read_records"] / n})
    return rows


def _pipeline(arch: str, rpb: int, records: int, out_dir: str) -> dict:
    cfg = {"agents": 1, "engines": 1, "memory_mib": 4, "host_pool_mib": 4, "arch": arch,
           "profiling": {"enabled": True, "lanes": 1, "mode": "synthetic", "subsystems": ["chip_swimlane"],
                         "synthetic_records": records, "synthetic_wait_go": True,
                         "synthetic_batch": min(256, rpb),
                         "records_per_buffer": {"aicpu_task": rpb, "aicore_task": rpb},
                         "buffers_per_pool": 16, "drain_shards": 1, "output_dir": out_dir}}
    p = Platform(cfg, quiet_roles=True).start()
    try:
        g = p.topo.dfx
        ctl = p.pm.segs["dfxctl"].view(D.ctl_header, 0, 1)
        c64 = p.pm.segs["dfxctl"].u8.view(np.uint64)
        idx = [g.collected_off // 8 + t * D.N_KINDS + k for t in range(g.T) for k in KINDS]
        expected = records * len(KINDS)
        col = psutil.Process(p.procs[p.dfx_roles["collector"][0]].pid)
        c0 = col.cpu_times()
        t0 = time.perf_counter()
        ctl["go"] = 1
        while int(c64[idx].sum()) < expected:
            time.sleep(0.001)
            if time.perf_counter() - t0 > 120:
                raise RuntimeError(f"pipeline did not finish in 120 s ({int(c64[idx].sum())} of {expected})")
        dt = time.perf_counter() - t0
        c1 = col.cpu_times()
        cpu = (c1.user + c1.system) - (c0.user + c0.system)
    finally:
        p.stop()
    buffers = expected / rpb
    return {"arch": arch, "svm": arch == "a2a3", "records_per_buffer": rpb, "records": expected,
            "buffers": buffers, "wall_s": dt, "collector_cpu_s": cpu, "us_per_buffer": cpu / buffers * 1e6,
            "ns_per_record": cpu / expected * 1e9, "wall_us_per_buffer": dt / buffers * 1e6}


def _fit(rows):
    """(per-buffer us, per-record us) of wall per buffer = a + b * records_per_buffer."""
    x = np.array([r["records_per_buffer"] for r in rows], float)
    y = np.array([r["us_per_buffer"] for r in rows], float)
    if len(set(x.tolist())) < 2:
        return float(y.mean()), float("nan")
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b)


def run(st: Study) -> dict:
    prim_rpb = (16, 64, 256, 1024)
    rpb_list = (64,) if st.small else prim_rpb
    records = 16_000 if st.small else 150_000
    repeats = 1 if st.small else 2
    prog = Progress("coherence", 1 + 2 * len(rpb_list) * repeats)
    prim = _primitive(prim_rpb, 2000 if st.small else 20000)
    prog.step("SharedRegion primitive")
    rows = []
    try:
        for _ in range(repeats):
            for rpb in rpb_list:
                for arch in ("a2a3", "a5"):
                    r = _pipeline(arch, rpb, records, st.path(f"dfx-{arch}-{rpb}"))
                    rows.append(r)
                    prog.step(f"{arch} {rpb} records/buffer: {r['us_per_buffer']:.1f} us/buffer")
    finally:
        prog.close()
    med = []
    for arch in ("a2a3", "a5"):
        for rpb in rpb_list:
            sub = [r for r in rows if r["arch"] == arch and r["records_per_buffer"] == rpb]
            med.append(dict(sub[0], wall_s=statistics.median(r["wall_s"] for r in sub),
                            us_per_buffer=statistics.median(r["us_per_buffer"] for r in sub),
                            ns_per_record=statistics.median(r["ns_per_record"] for r in sub), runs=len(sub)))
    st.write_csv("coherence_pipeline.csv", med)
    st.write_csv("coherence_primitive.csv", prim)
    fits = {arch: _fit([r for r in med if r["arch"] == arch]) for arch in ("a2a3", "a5")}
    _plot(st, prim, med, fits, rpb_list)
    
    ns = {svm: {r["records_per_buffer"]: r for r in prim if r["svm"] == svm} for svm in (True, False)}
    big = max(prim_rpb)
    figures = {"svm_us_per_buffer": fits["a2a3"][0], "svm_us_per_record": fits["a2a3"][1],
               "nonsvm_us_per_buffer": fits["a5"][0], "nonsvm_us_per_record": fits["a5"][1],
               "nonsvm_extra_us_per_buffer": fits["a5"][0] - fits["a2a3"][0],
               "nonsvm_extra_ns_per_record": (fits["a5"][1] - fits["a2a3"][1]) * 1e3,
               "primitive_write_u32_ns_nonsvm": ns[False][big]["write_u32_ns"],
               "primitive_write_u32_ns_svm": ns[True][big]["write_u32_ns"],
               "primitive_read_ns_per_record_nonsvm": ns[False][big]["read_ns_per_record"],
               "primitive_read_ns_per_record_svm": ns[True][big]["read_ns_per_record"]}
    held = (ns[False][big]["write_u32_ns"] > ns[True][big]["write_u32_ns"]
            and ns[False][big]["read_records_ns"] > ns[True][big]["read_records_ns"])
    return st.finish(figures, CLAIM, held)


def _plot(st: Study, prim, med, fits, rpb_list) -> None:
    fig, ax = st.figure(2)
    a = ax[0][0]
    for svm, c in ((True, "C0"), (False, "C1")):
        sub = [r for r in prim if r["svm"] == svm]
        tag = "SVM" if svm else "non-SVM"
        a.loglog([r["records_per_buffer"] for r in sub], [r["read_records_ns"] for r in sub], "o-", color=c,
                 label=f"{tag}: read a buffer's records")
        a.loglog([r["records_per_buffer"] for r in sub], [r["write_u32_ns"] for r in sub], "s--", color=c,
                 label=f"{tag}: 4-byte write-back")
    a.set_xlabel("records per buffer")
    a.set_ylabel("ns per call (SharedRegion)")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=6)
    b = ax[0][1]
    xs = np.array(sorted(rpb_list), float)
    for arch, c in (("a2a3", "C0"), ("a5", "C1")):
        sub = [r for r in med if r["arch"] == arch]
        b.plot([r["records_per_buffer"] for r in sub], [r["us_per_buffer"] for r in sub], "o", color=c)
        a0, b0 = fits[arch]
        if np.isfinite(b0):
            b.plot(xs, a0 + b0 * xs, "-", color=c, lw=0.8, label=f"{arch} ({'SVM' if arch == 'a2a3' else 'non-SVM'}): "
                                                                f"{a0:.1f} us/buffer + {b0 * 1e3:.0f} ns/record")
    b.set_xscale("log", base=2)
    b.set_xlabel("records per buffer")
    b.set_ylabel("collector CPU time per buffer (us)")
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=6)
    st.save(fig, "coherence.png", "coherence: SVM (a2a3) vs non-SVM (a5) write-backs")
