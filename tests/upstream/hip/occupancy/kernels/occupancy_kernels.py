"""The __global__ functions the hipOccupancy* tests compile into their binaries, as one code object
(hdemu has no host symbols: the tests pass these kernels' hipFunction_t). f2 is the template
``f2<int>`` the TemplateInvocation cases instantiate."""
from shm_layout.kernels import kernel


@kernel("f32* a")
def f1(ctx, a):
    a[0] = 1.0


@kernel("i32* a")
def f2(ctx, a):
    a[0] = 1


@kernel("i32* t")
def kern1(ctx, t):
    t[0] = 1


@kernel("i32* out, i32* inp")
def copyKer(ctx, out, inp):
    tid = ctx.global_id(0)
    out[tid] = inp[tid]


@kernel("i32* out, i32* inp")
def copyKerDyn(ctx, out, inp):
    """Upstream stages ``inp`` in dynamic shared memory; a vectorised kernel copies it directly."""
    tid = ctx.global_id(0)
    out[tid] = inp[tid]
