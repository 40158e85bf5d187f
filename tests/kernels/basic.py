"""Kernels used by the tests (a code object: loaded with hipModuleLoad, executed by the CP)."""
import time

import numpy as np

from shm_layout.kernels import kernel


@kernel("f32* a, f32* b, f32* c, u32 n")
def vadd(ctx, a, b, c, n):
    c[:n] = a[:n] + b[:n]


@kernel("i32* x, u32 n")
def inc(ctx, x, n):
    """Non-idempotent: every execution adds one."""
    x[:n] += 1


@kernel("")
def empty(ctx):
    pass


@kernel("f64 seconds")
def sleep(ctx, seconds):
    time.sleep(seconds)


@kernel("u64* out, u32 slot")
def stamp(ctx, out, slot):
    """Writes the current monotonic time into out[slot] (ordering tests)."""
    out[slot] = time.monotonic_ns()


@kernel("i32* x")
def boom(ctx, x):
    raise ValueError("kernel asked to fail")


@kernel("i32* x, u32 n")
def overrun(ctx, x, n):
    x[n + 1000000] = 1


@kernel("f32* y, f32* x, f32 a, u32 n")
def axpy(ctx, y, x, a, n):
    y[:n] += a * x[:n]


@kernel("i32* out")
def grid_ids(ctx, out):
    """Writes each work-item's global id (vectorised over the grid)."""
    i = ctx.global_id(0)
    out[i] = i.astype(np.int32)


@kernel("u64* out, u32 slot, f64 seconds")
def span(ctx, out, slot, seconds):
    """Writes its start time into out[2*slot], sleeps, then its end time into out[2*slot+1]
    (dependency tests: a node that starts before its predecessor ended shows up)."""
    out[2 * slot] = time.monotonic_ns()
    if seconds > 0:
        time.sleep(seconds)
    out[2 * slot + 1] = time.monotonic_ns()


@kernel("u32* flag, f64 limit_s")
def gate(ctx, flag, limit_s):
    """Runs until the host sets flag[0] non-zero (a hold the test opens: "still running" is a fact,
    not a race against a timer); polls with short sleeps (two cores: never a spin) and fails after
    limit_s seconds, so a test that never opens it still ends."""
    deadline = time.monotonic() + limit_s
    while flag[0] == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("gate kernel was never opened")
        time.sleep(0.0005)


@kernel("u64* out, u32 slot, u32* flags, u32 mine, u32 other, f64 limit_s")
def span_meet(ctx, out, slot, flags, mine, other, limit_s):
    """``span`` whose middle is a rendezvous: writes its start into out[2*slot], sets flags[mine], waits
    (short sleeps, failing after limit_s seconds) until flags[other] is non-zero, then writes its end
    into out[2*slot+1]. Two of them waiting for each other's flag ran at the same time; waiting for a
    flag only the host sets makes it a gate the test opens."""
    out[2 * slot] = time.monotonic_ns()
    flags[mine] = 1
    deadline = time.monotonic() + limit_s
    while flags[other] == 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"span_meet: flag {other} was never set")
        time.sleep(0.0005)
    out[2 * slot + 1] = time.monotonic_ns()
