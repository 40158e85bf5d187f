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


# -- stream suite, second round (tests/upstream/hip/stream) ----------------------------------------------
@kernel("f32* x, f32* y, i32 n")
def stream_pow_fill(ctx, x, y, n):
    """kernel of hipMultiStream.cc / hipAPIStreamDisable.cc: work-item 0 sets x[i] = sqrt(3.14159^i) for
    i < n, then y[0] += 1."""
    with np.errstate(over="ignore"):
        x[:n] = np.sqrt(np.power(np.float32(3.14159), np.arange(n, dtype=np.float32)))
    y[0] += np.float32(1.0)


@kernel("f32* y")
def stream_n_kernel(ctx, y):
    """nKernel of hipMultiStream.cc: y[tid] += 1 for every work-item."""
    y[:ctx.n] += np.float32(1.0)


@kernel("i32 a")
def stream_do_nothing(ctx, a):
    """kernel_do_nothing(int) of hipMultiStream.cc."""


def _tree_reduce(ctx, d_in, dtype):
    """The shared-memory tree reduction of hipLaunchHostFunc.cc's reduce kernels: per block, pairs at
    distance s = block/2, block/4, ... are added in ``dtype``; block b's total is what thread 0 holds."""
    bs, n = ctx.block[0], ctx.n
    v = np.array(d_in[:n], dtype=dtype).reshape(n // bs, bs)
    s = bs // 2
    while s > 0:
        v[:, :s] += v[:, s:2 * s]
        s //= 2
    d_in[:n] = v.reshape(n)
    return v[:, 0]


@kernel("f32* d_in, f64* d_out")
def stream_reduce(ctx, d_in, d_out):
    """reduce of hipLaunchHostFunc.cc: d_out[block] = the block's sum of d_in (float adds)."""
    sums = _tree_reduce(ctx, d_in, np.float32)
    d_out[:sums.size] = sums


@kernel("f64* d_in, f64* d_out")
def stream_reduce_final(ctx, d_in, d_out):
    """reduceFinal of hipLaunchHostFunc.cc: *d_out = the sum of d_in over the one block."""
    d_out[0] = _tree_reduce(ctx, d_in, np.float64)[0]


# -- graph suite, second pass (tests/upstream/hip/graph) -------------------------------------------------
@kernel("i32* c, i32* res, i32 val, i64 n")
def graph_update_result(ctx, c, res, val, n):
    """updateResult of graph_dependency_common.hh: Res = C + val."""
    res[:n] = c[:n] + val


@kernel("i32* a, i32* b, i32* c, i32* res, u64 n")
def graph_vector_sum(ctx, a, b, c, res, n):
    """vectorSum of graph_dependency_common.hh: Res = A + B + C."""
    res[:n] = a[:n] + b[:n] + c[:n]


@kernel("i32* a, u64 n")
def graph_square_inplace_i32(ctx, a, n):
    """The vector_square(int* A_d, size_t N) of hipGraphRemoveDependencies.cc: A = A * A in place."""
    a[:n] = a[:n] * a[:n]


@kernel("i32* a, i32* b, i32* c, u64 n")
def graph_vector_add_reverse_i32(ctx, a, b, c, n):
    """HipTest::vectorADDReverse<int>: c = a + b (upstream walks the elements backwards)."""
    c[:n] = a[:n] + b[:n]


@kernel("i32* a, i32* b")
def graph_mysub(ctx, a, b):
    """ker_vec_sub of hipGraphKernelNodeSetParams.cc: A[id] -= B[id] for every work-item."""
    a[:ctx.n] -= b[:ctx.n]


# -- memory suite, memset files (tests/upstream/hip/memory) ----------------------------------------------
@kernel("u8* a, u8* b, u8* c, u64 n")
def memset_vector_add_u8(ctx, a, b, c, n):
    """HipTest::vectorADD<uint8_t>: c = a + b (wrapping, as in C)."""
    c[:n] = a[:n] + b[:n]


@kernel("u16* a, u16* b, u16* c, u64 n")
def memset_vector_add_u16(ctx, a, b, c, n):
    """HipTest::vectorADD<uint16_t>."""
    c[:n] = a[:n] + b[:n]


@kernel("u32* a, u32* b, u32* c, u64 n")
def memset_vector_add_u32(ctx, a, b, c, n):
    """HipTest::vectorADD<uint32_t>."""
    c[:n] = a[:n] + b[:n]


@kernel("i8* a, i8* b, u64 n")
def memset_vector_square_i8(ctx, a, b, n):
    """HipTest::vector_square<char>: b = a * a (wrapping)."""
    b[:n] = a[:n] * a[:n]


@kernel("i16* a, i16* b, u64 n")
def memset_vector_square_i16(ctx, a, b, n):
    """HipTest::vector_square<int16_t>."""
    b[:n] = a[:n] * a[:n]


# -- memory suite, memcpy files (tests/upstream/hip/memory) ----------------------------------------------
@kernel("f64* a, f64* b, f64* c, u64 n")
def memcpy_vector_add_f64(ctx, a, b, c, n):
    """HipTest::vectorADD<double>: c = a + b."""
    c[:n] = a[:n] + b[:n]


# -- graph suite, third pass (tests/upstream/hip/graph) --------------------------------------------------
@kernel("i32* a, i32* b, u64 n")
def graph_vector_cubic_i32(ctx, a, b, n):
    """HipTest::vector_cubic<int>: b = a * a * a."""
    b[:n] = a[:n] * a[:n] * a[:n]


@kernel("i32* a, i32* b, i32* c")
def graph_ker_vec_mul(ctx, a, b, c):
    """ker_vec_mul of hipGraphAddChildGraphNode.cc: C[i] = A[i] * B[i] for every work-item."""
    c[:ctx.n] = a[:ctx.n] * b[:ctx.n]


@kernel("i32* a, i32* b")
def graph_ker_vec_add(ctx, a, b):
    """ker_vec_add: A[i] += B[i] for every work-item."""
    a[:ctx.n] += b[:ctx.n]


@kernel("i32* a, i32* b")
def graph_ker_vec_sub(ctx, a, b):
    """ker_vec_sub: A[i] -= B[i] for every work-item."""
    a[:ctx.n] -= b[:ctx.n]


@kernel("i32* a, i32* b")
def graph_ker_vec_sqr(ctx, a, b):
    """ker_vec_sqr: A[i] = B[i] * B[i] for every work-item."""
    a[:ctx.n] = b[:ctx.n] * b[:ctx.n]


# -- memory suite, malloc / free / memcpy files (tests/upstream/hip/memory) ------------------------------
@kernel("f64* a, f64* b, u64 n")
def memory_vector_square_f64(ctx, a, b, n):
    """HipTest::vector_square<double>: b = a * a."""
    b[:n] = a[:n] * a[:n]


@kernel("u8* buf, u8 value")
def memory_fill_u8(ctx, buf, value):
    """kerTestMemAccess of hipHostMalloc.cc: buf[id] = value for every work-item id."""
    buf[:ctx.n] = value


@kernel("f32* host_res, u32* flag, f64 limit_s")
def memory_coherent_write_wait(ctx, host_res, flag, limit_s):
    """Kernel of hipMemoryAllocateCoherent.cc: host_res[id] = id + 1, then keep running (upstream: a
    clock loop) until the host opens ``flag`` or ``limit_s`` passes."""
    ids = ctx.global_id(0)
    host_res[ids] = ids + 1
    deadline = time.monotonic() + limit_s
    while flag[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.0005)


# -- graph suite, third pass: hipMatMul.cc (the code object of hipStreamCaptureExtModuleLaunchKernel.cc) --
@kernel("i32* A, i32* B, i32* C, i32 N")
def graph_matmulK(ctx, A, B, C, N):
    """matmulK of graph/hipMatMul.cc: C = A x B (N x N ints) for the rows and columns the grid covers."""
    rows, cols = min(ctx.grid[1], N), min(ctx.grid[0], N)
    a, b = A[:N * N].reshape(N, N), B[:N * N].reshape(N, N)
    C[:N * N].reshape(N, N)[:rows, :cols] = a[:rows] @ b[:, :cols]


@kernel("f32* out_d, f32* in_d")
def graph_simple_kernel(ctx, out_d, in_d):
    """simpleKernel of hipSimpleGraphWithKernel.cc: out = 5.34 * in (a double product stored as float)."""
    out_d[:ctx.n] = (5.34 * in_d[:ctx.n].astype(np.float64)).astype(np.float32)
