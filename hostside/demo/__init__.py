"""``./scripts/demo`` (``python -m hostside.demo``): start an embedded platform, run a small
workload, print what happened. A room above ``hip``: it uses the HIP face like any user program,
plus the platform's status and trace readers and the DFX output reader. The demo's platforms are
embedded ones it starts and tears down itself: a ``HDEMU_PLATFORM`` of the caller's is ignored
(``HDEMU_CONFIG`` shapes the first one). An expected error or a Ctrl-C is one line on stderr."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time

import numpy as np

from hostside import dfx, hip, hsa
from hostside.platform import format_status, status, write_trace
from shm_layout.errors import HdemuError

__all__ = ["main", "profiling_demo"]

KERNELS = '''
from shm_layout.kernels import kernel

@kernel("f32* a, f32* b, f32* c, u32 n")
def vadd(ctx, a, b, c, n):
    c[:n] = a[:n] + b[:n]

@kernel("f32* y, f32* x, f32 alpha, u32 n")
def axpy_inplace(ctx, y, x, alpha, n):
    y[:n] += alpha * x[:n]

@kernel("")
def empty(ctx):
    pass
'''


def main(argv=None) -> int:
    """The demo; 0 when every result checks, 1 when one does not or on an error (one line on
    stderr), 130 on Ctrl-C (every platform it started is torn down at exit)."""
    os.environ.pop("HDEMU_PLATFORM", None)     # attached to it, the demo would not run on its own platform
    try:
        return _demo()
    except (HdemuError, hip.HipError) as exc:
        print(f"hdemu demo: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hdemu demo: interrupted", file=sys.stderr)
        return 130


def _demo() -> int:
    t0 = time.monotonic()
    n_dev = hip.hipGetDeviceCount()
    t_up = time.monotonic() - t0
    print(f"embedded platform up in {t_up * 1e3:.0f} ms: {n_dev} emulated GPU(s)")
    for d in range(n_dev):
        p = hip.hipGetDeviceProperties(d)
        print(f"  device {d}: {p.name} ({p.gcnArchName}), {p.totalGlobalMem >> 20} MiB, "
              f"{p.multiProcessorCount} execution engines")
    mod = hip.hipModuleLoadData(KERNELS, "demo_kernels.py")
    n = 1 << 16
    rng = np.random.default_rng(0)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    for d in range(n_dev):
        hip.hipSetDevice(d)
        vadd = hip.hipModuleGetFunction(mod, "vadd")
        axpy = hip.hipModuleGetFunction(mod, "axpy_inplace")
        s1, s2 = hip.hipStreamCreate(), hip.hipStreamCreate()
        da, db, dc = (hip.hipMalloc(4 * n) for _ in range(3))
        hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyHostToDevice)
        hip.hipMemcpyAsync(db, b, 4 * n, hip.hipMemcpyHostToDevice, s2)
        hip.hipStreamSynchronize(s2)
        start, stop = hip.hipEventCreate(), hip.hipEventCreate()
        hip.hipEventRecord(start, s1)
        hip.hipModuleLaunchKernel(vadd, n // 256, 1, 1, 256, 1, 1, 0, s1, [da, db, dc, n])
        for _ in range(10):
            hip.hipModuleLaunchKernel(axpy, n // 256, 1, 1, 256, 1, 1, 0, s1, [dc, da, 0.5, n])
        hip.hipEventRecord(stop, s1)
        hip.hipEventSynchronize(stop)
        c = np.empty(n, dtype=np.float32)
        hip.hipMemcpy(c, dc, 4 * n, hip.hipMemcpyDeviceToHost)
        ref = a + b
        for _ in range(10):
            ref += np.float32(0.5) * a
        ok = np.allclose(c, ref, rtol=1e-5)
        ms = hip.hipEventElapsedTime(start, stop)
        print(f"device {d}: vadd + 10 in-place axpy over {n} floats on stream {s1.vgpu.queue.slot}: "
              f"{'matches numpy' if ok else 'MISMATCH'}, {ms:.3f} ms between events")
        for p in (da, db, dc):
            hip.hipFree(p)
        hip.hipStreamDestroy(s1)
        hip.hipStreamDestroy(s2)
        if not ok:
            return 1
    hip.hipSetDevice(0)
    empty = hip.hipModuleGetFunction(mod, "empty")
    s = hip.hipStreamCreate()
    N = 5000
    t = time.perf_counter()
    for _ in range(N):
        hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, s, [])
    hip.hipStreamSynchronize(s)
    dt = time.perf_counter() - t
    print(f"{N} empty kernels launched and completed in {dt * 1e3:.1f} ms ({N / dt:,.0f} launches/s)")
    rt = hsa.runtime()
    print(format_status(status(rt.boot_name)))
    out = os.path.join(tempfile.gettempdir(), f"hdemu-demo-{os.getpid()}.trace.json")
    nev = write_trace(rt.pm, out)
    print(f"trace: {nev} events written to {out} (open in https://ui.perfetto.dev)")
    hip.hipStreamDestroy(s)
    hip.hipDeviceReset()
    print("platform torn down; no segment left behind")
    return profiling_demo()


def profiling_demo() -> int:
    """A second embedded platform with the DFX pipeline on: 2 AICPU lanes profile real dispatches."""
    out = os.path.join(tempfile.gettempdir(), f"hdemu-demo-dfx-{os.getpid()}")
    hsa.configure({"agents": 1, "engines": 2, "memory_mib": 16, "host_pool_mib": 16,
                   "profiling": {"enabled": True, "lanes": 2, "output_dir": out}})
    try:
        mod = hip.hipModuleLoadData(KERNELS, "demo_kernels.py")
        axpy = hip.hipModuleGetFunction(mod, "axpy_inplace")
        n = 4096
        streams = [hip.hipStreamCreate(), hip.hipStreamCreate()]
        bufs = [hip.hipMalloc(4 * n) for _ in streams]
        for s, b in zip(streams, bufs):
            hip.hipMemsetAsync(b, 0, 4 * n, s)
            for _ in range(50):
                hip.hipModuleLaunchKernel(axpy, n // 256, 1, 1, 256, 1, 1, 0, s, [b, b, 1.0, n])
        hip.hipDeviceSynchronize()
        for b in bufs:
            hip.hipFree(b)
        for s in streams:
            hip.hipStreamDestroy(s)
    finally:
        hip.hipDeviceReset()
        hsa.configure(None)
    with open(os.path.join(out, "accounting.json")) as f:
        acc = json.load(f)
    recs = dfx.load_output(out)
    total = sum(p["total"] for p in acc["pools"])
    collected = sum(p["collected"] for p in acc["pools"])
    dropped = sum(p["dropped"] for p in acc["pools"])
    print(f"profiling run: 100 dispatches profiled by 2 AICPU lanes -> {collected} of {total} records "
          f"collected, {dropped} dropped")
    print("  " + ", ".join(f"{k} {len(v)}" for k, v in recs.items()))
    for ln in acc["lanes"]:
        print(f"  lane {ln['lane']}: {ln['records']} records, {ln['stalls']} stalls, {ln['drops']} drops")
    print(f"  outputs (swimlane.csv, swimlane.trace.json, stalls.json, ...) in {out}")
    return 0 if collected + dropped == total and dropped == 0 else 1

