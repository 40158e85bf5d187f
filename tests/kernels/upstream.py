"""Kernels of the ported upstream suites (tests/upstream): the hip-tests helper kernels as Python, and
the gate kernel that replaces upstream's timed delays (``HipTest::runKernelForDuration``, clock loops).

A gate kernel waits until the test opens it (a u32 in pinned host memory becomes non-zero): the test
decides when the device work ends, so "the stream is still busy" is a fact, not a race against a
timer. It polls with short sleeps (two cores: never a spin) and gives up after ``limit_s`` seconds so
a test that forgets to open it still ends (the stream then fails, visibly)."""
import time

import numpy as np

from shm_layout.kernels import kernel


@kernel("u32* flag, f64 limit_s")
def gate(ctx, flag, limit_s):
    deadline = time.monotonic() + limit_s
    while flag[0] == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("gate kernel was never opened")
        time.sleep(0.0005)


@kernel("f32* a, f32* b, f32* c, u64 n")
def vectorADD(ctx, a, b, c, n):
    """HipTest::vectorADD: c = a + b."""
    c[:n] = a[:n] + b[:n]


@kernel("i32* a, i32* b, i32* c, u64 n")
def vectorADD_i32(ctx, a, b, c, n):
    c[:n] = a[:n] + b[:n]


@kernel("f32* a, f32* b, u64 n")
def vector_square(ctx, a, b, n):
    """hip-tests vector_square / HipTest::vector_square: b = a * a."""
    b[:n] = a[:n] * a[:n]


@kernel("i32* a, i32 value, u64 n")
def set_value(ctx, a, value, n):
    a[:n] = value


@kernel("i32* a, u64 n")
def increment(ctx, a, n):
    """Non-idempotent: each run adds one (ordering checks)."""
    a[:n] += 1


@kernel("i32* a, u64 n, i32 count")
def add_count(ctx, a, n, count):
    """addCount-style kernels: a += count."""
    a[:n] += count


@kernel("")
def empty(ctx):
    pass


@kernel("u64* out, u32 slot")
def stamp(ctx, out, slot):
    out[slot] = time.monotonic_ns()


@kernel("i32* out")
def global_ids(ctx, out):
    i = ctx.global_id(0)
    out[i] = i.astype(np.int32)


# -- graph suite (tests/upstream/hip/graph) -------------------------------------------------------------
from shm_layout.sync import address_of, fetch_add32  # noqa: E402 - kept with the kernels that use it


@kernel("i32* data")
def graph_increment_atomic(ctx, data):
    """hip-tests incrementKernel: every work-item does atomicAdd(data, 1) (a real atomic: kernels on other
    engines may add at the same time)."""
    fetch_add32(address_of(data), ctx.n)


@kernel("i32* a, i32* b")
def graph_myadd(ctx, a, b):
    """hip-tests myadd: A[id] += B[id] for every work-item."""
    a[:ctx.n] += b[:ctx.n]


@kernel("i32* a, i32 value")
def graph_mymul(ctx, a, value):
    """hip-tests mymul: A[id] *= value for every work-item."""
    a[:ctx.n] *= value


@kernel("i32* a, i32* b, u64 n")
def graph_vector_square_i32(ctx, a, b, n):
    """HipTest::vector_square<int>: b = a * a."""
    b[:n] = a[:n] * a[:n]


@kernel("i32* a, i32* b, i32* c, u64 n")
def graph_vector_sub_i32(ctx, a, b, c, n):
    """HipTest::vectorSUB<int>: c = a - b."""
    c[:n] = a[:n] - b[:n]


@kernel("i32* a, i32* b, u64 n")
def stream_vector_square_i32(ctx, a, b, n):
    """HipTest::vector_square<int> (stream suites): b = a * a."""
    b[:n] = a[:n] * a[:n]


@kernel("i32* dst, i32* src, u64 n")
def stream_copy_i32(ctx, dst, src, n):
    """memcpy_kernel<int> of hipStreamCreateWithPriority.cc: dst = src."""
    dst[:n] = src[:n]


@kernel("i32* a, i32* c, i64 n, i32 count")
def event_add_count_reverse(ctx, a, c, n, count):
    """HipTest::addCountReverse<int>: c = a + count (upstream repeats it count times to run longer)."""
    c[:n] = a[:n] + count


@kernel("i32* a, i32* b, i32* c")
def graph_add(ctx, a, b, c):
    """The Add kernel of hip-tests' add_Kernel.code: C[id] = A[id] + B[id] for every work-item."""
    c[:ctx.n] = a[:ctx.n] + b[:ctx.n]


@kernel("f32* out, f32* inp, i32 width")
def event_matrix_transpose(ctx, out, inp, width):
    """matrixTranspose of Unit_hipEventMGpuMThreads.cc (2-D grid): out[y * width + x] = in[x * width + y]."""
    x, y = np.meshgrid(ctx.global_id(0), ctx.global_id(1))
    out[y * width + x] = inp[x * width + y]
