"""MIOpenPoolingBwd: 2-D pooling backward, kernels ``mloPoolingAveBwd`` and ``mloPoolingMaxBwd``
(MIOpen's MIOpenPoolingBwd.cl, arguments in its order; W strides 1)."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MLO_POOLING_OP_ID = None            # required
MLO_POOLING_KERNEL_SZ1 = None       # required
MLO_POOLING_STRIDE1 = None          # required
MLO_POOLING_KERNEL_SZ0 = None       # required
MLO_POOLING_STRIDE0 = None          # required
MLO_POOLBWD_N_HORIZ_OUT_PIX = None
MLO_POOLBWD_N_VERT_OUT_PIX = None
MLO_POOLBWD_GROUP_SZ0 = None
MLO_POOLBWD_GROUP_SZ1 = None
MLO_POOLING_INDEX_TYPE = None       # required
MLO_POOLING_INDEX_MAX = None
USE_IMG_INDEX = None
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821
INDEX = index_dtype(MLO_POOLING_INDEX_TYPE)                                     # noqa: F821
IMG_INDEX = USE_IMG_INDEX is None or USE_IMG_INDEX == 1
KERS = (1, MLO_POOLING_KERNEL_SZ1, MLO_POOLING_KERNEL_SZ0)
STRS = (1, MLO_POOLING_STRIDE1, MLO_POOLING_STRIDE0)
_SIG = ("i32 mlo_pad1, i32 mlo_pad0, i32 mlo_n_outputs, i32 mlo_bot_height, i32 mlo_bot_width, "
        "i32 mlo_top_height, i32 mlo_top_width, i32 mlo_botdf_batch_str, i32 mlo_botdf_channel_str, "
        "i32 mlo_botdf_str, i32 mlo_topdf_batch_str, i32 mlo_topdf_channel_str, i32 mlo_topdf_str")


def _views(ctx, top_df, bot_df, n_outputs, bot_h, bot_w, top_h, top_w, bb, bc, bs, tb, tc, ts):
    batch = ctx.grid[2] // n_outputs                # the z range is n_inputs * batch
    dx = view(bot_df, FLOAT, (batch, n_outputs, 1, bot_h, bot_w), (bb, bc, 0, bs, 1), "bot_df")  # noqa: F821
    dy = view(top_df, FLOAT, (batch, n_outputs, 1, top_h, top_w), (tb, tc, 0, ts, 1), "top_df")  # noqa: F821
    return dy, dx


@kernel("u8* top_diff, u8* bot_diff, " "i32 mlo_pad1, i32 mlo_pad0, i32 mlo_n_outputs, i32 mlo_bot_height, "
        "i32 mlo_bot_width, i32 mlo_top_height, i32 mlo_top_width, i32 mlo_botdf_batch_str, "
        "i32 mlo_botdf_channel_str, i32 mlo_botdf_str, i32 mlo_topdf_batch_str, i32 mlo_topdf_channel_str, "
        "i32 mlo_topdf_str")
def mloPoolingAveBwd(ctx, top_diff, bot_diff, mlo_pad1, mlo_pad0, mlo_n_outputs, mlo_bot_height, mlo_bot_width,
                     mlo_top_height, mlo_top_width, bb, bc, bs, tb, tc, ts):
    dy, dx = _views(ctx, top_diff, bot_diff, mlo_n_outputs, mlo_bot_height, mlo_bot_width, mlo_top_height,
                    mlo_top_width, bb, bc, bs, tb, tc, ts)
    backward_avg(dy, dx, MLO_POOLING_OP_ID, KERS, STRS, (0, mlo_pad1, mlo_pad0))                # noqa: F821


@kernel("u8* top_df, u8* bot_df, u8* mask, " "i32 mlo_pad1, i32 mlo_pad0, i32 mlo_n_outputs, i32 mlo_bot_height, "
        "i32 mlo_bot_width, i32 mlo_top_height, i32 mlo_top_width, i32 mlo_botdf_batch_str, "
        "i32 mlo_botdf_channel_str, i32 mlo_botdf_str, i32 mlo_topdf_batch_str, i32 mlo_topdf_channel_str, "
        "i32 mlo_topdf_str")
def mloPoolingMaxBwd(ctx, top_df, bot_df, mask, mlo_pad1, mlo_pad0, mlo_n_outputs, mlo_bot_height, mlo_bot_width,
                     mlo_top_height, mlo_top_width, bb, bc, bs, tb, tc, ts):
    dy, dx = _views(ctx, top_df, bot_df, mlo_n_outputs, mlo_bot_height, mlo_bot_width, mlo_top_height,
                    mlo_top_width, bb, bc, bs, tb, tc, ts)
    m = packed(mask, INDEX, dy.shape, "mask")                                                    # noqa: F821
    backward_max(dy, dx, m, KERS, STRS, (0, mlo_pad1, mlo_pad0), IMG_INDEX)                     # noqa: F821
