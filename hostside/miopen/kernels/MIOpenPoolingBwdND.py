"""MIOpenPoolingBwdND: 3-D (and 2-D as D = 1) pooling backward, kernels ``mloPoolingNDAveBwd`` and
``mloPoolingNDMaxBwd`` (MIOpen's MIOpenPoolingBwdND.cl, arguments in its order; W strides 1; saved
indices are image indices)."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MLO_POOLING_OP_ID = None            # required
MAX_ACTIV_WORKITEM = None
MLO_POOLING_GROUP_SZ0 = None
MLO_POOLING_GROUP_SZ1 = None
MLO_POOLING_GROUP_SZ2 = None
PIX_W_PER_WORK = None
PIX_H_PER_WORK = None
PIX_D_PER_WORK = None
KERNEL_SZ_D = None                  # required
KERNEL_SZ_H = None                  # required
KERNEL_SZ_W = None                  # required
STRIDE_D = None                     # required
STRIDE_H = None                     # required
STRIDE_W = None                     # required
TERRITORY_OVERLAP = None
MLO_POOLING_INDEX_TYPE = None       # required
MLO_POOLING_INDEX_MAX = None
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821
INDEX = index_dtype(MLO_POOLING_INDEX_TYPE)                                     # noqa: F821
KERS = (KERNEL_SZ_D, KERNEL_SZ_H, KERNEL_SZ_W)
STRS = (STRIDE_D, STRIDE_H, STRIDE_W)


def _views(top_df, bot_df, batch, chal, bot_d, bot_h, bot_w, top_d, top_h, top_w, bs, ts):
    dx = view(bot_df, FLOAT, (batch, chal, bot_d, bot_h, bot_w), bs + (1,), "bot_df")            # noqa: F821
    dy = view(top_df, FLOAT, (batch, chal, top_d, top_h, top_w), ts + (1,), "top_df")            # noqa: F821
    return dy, dx


@kernel("u8* top_df, u8* bot_df, u32 pad_d, u32 pad_h, u32 pad_w, u32 batch, u32 chal, u32 bot_d, u32 bot_h, "
        "u32 bot_w, u32 top_d, u32 top_h, u32 top_w, u32 bot_str_b, u32 bot_str_c, u32 bot_str_d, u32 bot_str_h, "
        "u32 top_str_b, u32 top_str_c, u32 top_str_d, u32 top_str_h, u32 total_work")
def mloPoolingNDAveBwd(ctx, top_df, bot_df, pad_d, pad_h, pad_w, batch, chal, bot_d, bot_h, bot_w, top_d, top_h,
                       top_w, b0, b1, b2, b3, t0, t1, t2, t3, total_work):
    dy, dx = _views(top_df, bot_df, batch, chal, bot_d, bot_h, bot_w, top_d, top_h, top_w, (b0, b1, b2, b3),
                    (t0, t1, t2, t3))
    backward_avg(dy, dx, MLO_POOLING_OP_ID, KERS, STRS, (pad_d, pad_h, pad_w))                  # noqa: F821


@kernel("u8* top_df, u8* bot_df, u8* mask, u32 pad_d, u32 pad_h, u32 pad_w, u32 batch, u32 chal, u32 bot_d, "
        "u32 bot_h, u32 bot_w, u32 top_d, u32 top_h, u32 top_w, u32 bot_str_b, u32 bot_str_c, u32 bot_str_d, "
        "u32 bot_str_h, u32 top_str_b, u32 top_str_c, u32 top_str_d, u32 top_str_h, u32 total_work")
def mloPoolingNDMaxBwd(ctx, top_df, bot_df, mask, pad_d, pad_h, pad_w, batch, chal, bot_d, bot_h, bot_w, top_d,
                       top_h, top_w, b0, b1, b2, b3, t0, t1, t2, t3, total_work):
    dy, dx = _views(top_df, bot_df, batch, chal, bot_d, bot_h, bot_w, top_d, top_h, top_w, (b0, b1, b2, b3),
                    (t0, t1, t2, t3))
    m = packed(mask, INDEX, dy.shape, "mask")                                                    # noqa: F821
    backward_max(dy, dx, m, KERS, STRS, (pad_d, pad_h, pad_w), True)                            # noqa: F821
