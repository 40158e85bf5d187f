"""The kernels of hipFuncSetAttribute.cc (fn) and hipFuncSetSharedMemConfig.cc (ReverseSeq) as a code
object (upstream compiles them into the test binary and passes their host stubs)."""
from shm_layout.kernels import kernel


@kernel("f32* px, f32* py")
def fn(ctx, px, py):
    px[0] = px[0] + 1.0
    py[0] = py[0] + px[0]


@kernel("i32* A, i32* B, i32 N")
def ReverseSeq(ctx, A, B, N):
    """B[i] = A[N - 1 - i] for each work-item i of the one block (upstream stages A in dynamic
    shared memory; a vectorised kernel reads it directly)."""
    i = ctx.global_id(0)
    i = i[i < N]
    B[i] = A[N - 1 - i]
