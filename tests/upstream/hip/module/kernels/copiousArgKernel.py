"""copiousArgKernel.cc as a code object: kernelMultipleArgsSaxpy, six (coefficient, coefficient,
buffer) triples, each buffer x becomes c1 * x + c2 for every work-item."""
from shm_layout.kernels import kernel


@kernel("i32 a1, i32 a2, i32* x1, i32 b1, i32 b2, i32* x2, i32 c1, i32 c2, i32* x3, "
        "i32 d1, i32 d2, i32* x4, i32 e1, i32 e2, i32* x5, i32 f1, i32 f2, i32* x6")
def kernelMultipleArgsSaxpy(ctx, a1, a2, x1, b1, b2, x2, c1, c2, x3, d1, d2, x4, e1, e2, x5, f1, f2, x6):
    i = ctx.global_id(0)
    for x, k1, k2 in ((x1, a1, a2), (x2, b1, b2), (x3, c1, c2), (x4, d1, d2), (x5, e1, e2), (x6, f1, f2)):
        x[i] = k1 * x[i] + k2
