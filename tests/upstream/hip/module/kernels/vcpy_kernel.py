"""vcpy_kernel.cpp as a code object: hello_world copies a[threadIdx.x] to b[threadIdx.x]."""
from shm_layout.kernels import kernel


@kernel("f32* a, f32* b")
def hello_world(ctx, a, b):
    tx = ctx.global_id(0)
    b[tx] = a[tx]
