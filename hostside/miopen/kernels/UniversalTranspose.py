"""UniversalTranspose: copy a 4-D/5-D tensor between two stride sets (MIOpen's UniversalTranspose.cl,
arguments in its order: lengths, input strides and output strides as NCDHW)."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821


@kernel("u8* input, u8* output, u64 n, u64 c, u64 d, u64 h, u64 w, u64 in_n, u64 in_c, u64 in_d, u64 in_h, "
        "u64 in_w, u64 out_n, u64 out_c, u64 out_d, u64 out_h, u64 out_w")
def UniversalTranspose(ctx, input, output, n, c, d, h, w, in_n, in_c, in_d, in_h, in_w, out_n, out_c, out_d, out_h,
                       out_w):
    lens = (n, c, d, h, w)
    src = view(input, FLOAT, lens, (in_n, in_c, in_d, in_h, in_w), "input")                     # noqa: F821
    dst = view(output, FLOAT, lens, (out_n, out_c, out_d, out_h, out_w), "output")              # noqa: F821
    dst[...] = src
