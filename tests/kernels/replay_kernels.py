"""Kernels of the kernel-replay tests (tests/test_replay.py): non-idempotent in-place updates, a
module-scope device global, timestamps and a long-running kernel."""
import time

import numpy as np

from shm_layout.kernels import kernel

__hdemu_globals__ = {"counter": "i32[16]"}


@kernel("f32* y, f32* x, f32 a, u32 n")
def axpy(ctx, y, x, a, n):
    """y += a * x, in place: replaying it without restoring y accumulates."""
    y[:n] += a * x[:n]


@kernel("f32* y, f32* z, f32* x, f32 a, u32 n")
def axpy2(ctx, y, z, x, a, n):
    """Two in-place buffers: y += a * x, then z += y."""
    y[:n] += a * x[:n]
    z[:n] += y[:n]


@kernel("u32 n")
def bump(ctx, n):
    """Adds one to the first n entries of the module's device global ``counter``."""
    counter[:n] += 1  # noqa: F821 - bound by the command processor (__hdemu_globals__)


@kernel("f32* y, f32 a, u32 n")
def scale(ctx, y, a, n):
    y[:n] *= a


@kernel("u64* out, u32 slot")
def stamp(ctx, out, slot):
    """out[slot] = the device's monotonic time when the kernel ran."""
    out[slot] = time.monotonic_ns()


@kernel("u64* out, u32 slot, f64 seconds")
def span(ctx, out, slot, seconds):
    """Start time into out[2*slot], sleep, end time into out[2*slot+1]."""
    out[2 * slot] = time.monotonic_ns()
    time.sleep(seconds)
    out[2 * slot + 1] = time.monotonic_ns()


@kernel("i32* x, u32 n")
def inc(ctx, x, n):
    x[:n] += 1


@kernel("")
def empty(ctx):
    pass


@kernel("i32* out")
def grid_ids(ctx, out):
    i = ctx.global_id(0)
    out[i] = i.astype(np.int32)


@kernel("i32* x, u32 n")
def overrun(ctx, x, n):
    """Faults: writes far past its allocation."""
    x[n + 1000000] = 1


# -- rocprofiler-sdk's snap_kernels (tests/upstream/replay/test_snap_*.py) --------------------------
@kernel("f32* d, f32 val, u32 n")
def fill(ctx, d, val, n):
    d[:n] = val


@kernel("f32* d, f32 base, u32 n")
def iota(ctx, d, base, n):
    d[:n] = base + np.arange(n, dtype=np.float32)


@kernel("f32* d, f32 delta, u32 n")
def add(ctx, d, delta, n):
    d[:n] += delta


@kernel("f32* y, f32* x, f32 a, u32 n")
def saxpy(ctx, y, x, a, n):
    """y += a * x in place, and the module global ``counter[0]`` bumped once per dispatch."""
    y[:n] += a * x[:n]
    counter[0] += 1  # noqa: F821 - bound by the command processor (__hdemu_globals__)
