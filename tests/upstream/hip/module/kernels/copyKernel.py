"""copyKernel.cc as a code object: copy_ker copies Ad[i] to Bd[i] for every work-item i < size."""
from shm_layout.kernels import kernel


@kernel("i32* Ad, i32* Bd, u64 size")
def copy_ker(ctx, Ad, Bd, size):
    i = ctx.global_id(0)
    i = i[i < size]
    Bd[i] = Ad[i]
