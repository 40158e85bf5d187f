"""simple_kernel.cc as a code object (upstream builds simple_kernel.code with --genco)."""
from shm_layout.kernels import kernel


@kernel("i32* a, i32* b")
def SimpleKernel(ctx, a, b):
    tx = ctx.global_id(0)
    b[tx] = a[tx]
