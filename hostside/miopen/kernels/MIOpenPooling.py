"""MIOpenPooling: 2-D pooling forward, kernel ``mloPoolingG`` (MIOpen's MIOpenPooling.cl, arguments in
its order; the W stride of x and y is 1, as that kernel assumes). One launch pools the whole batch."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MLO_POOLING_OP_ID = None            # required
MLO_POOLING_KERNEL_SZ0 = None       # required
MLO_POOLING_KERNEL_SZ1 = None       # required
MLO_POOLING_STRIDE0 = None          # required
MLO_POOLING_STRIDE1 = None          # required
MLO_POOLING_N_HORIZ_OUT_PIX = None
MLO_POOLING_N_VERT_OUT_PIX = None
MLO_POOLING_GROUP_SZ0 = None
MLO_POOLING_GROUP_SZ1 = None
MLO_POOLING_INDEX_TYPE = None       # required
MLO_POOLING_INDEX_MAX = None
MLO_POOLING_SAVE_INDEX = None
USE_IMG_INDEX = None
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821
INDEX = index_dtype(MLO_POOLING_INDEX_TYPE)                                     # noqa: F821
USE_MASK = MLO_POOLING_SAVE_INDEX is not None and MLO_POOLING_OP_ID == OP_MAX   # noqa: F821
IMG_INDEX = USE_IMG_INDEX is None or USE_IMG_INDEX == 1
KERS = (1, MLO_POOLING_KERNEL_SZ1, MLO_POOLING_KERNEL_SZ0)
STRS = (1, MLO_POOLING_STRIDE1, MLO_POOLING_STRIDE0)


@kernel("u8* bot, u8* top, u8* mask, i32 mlo_pad1, i32 mlo_pad0, i32 mlo_n_outputs, i32 mlo_bot_height, "
        "i32 mlo_bot_width, i32 mlo_top_height, i32 mlo_top_width, i32 mlo_bot_batch_str, "
        "i32 mlo_bot_channel_str, i32 mlo_bot_str, i32 mlo_top_batch_str, i32 mlo_top_channel_str, "
        "i32 mlo_top_str")
def mloPoolingG(ctx, bot, top, mask, mlo_pad1, mlo_pad0, mlo_n_outputs, mlo_bot_height, mlo_bot_width,
                mlo_top_height, mlo_top_width, mlo_bot_batch_str, mlo_bot_channel_str, mlo_bot_str,
                mlo_top_batch_str, mlo_top_channel_str, mlo_top_str):
    batch = ctx.grid[2] // mlo_n_outputs            # the z range is n_outputs * batch
    x = view(bot, FLOAT, (batch, mlo_n_outputs, 1, mlo_bot_height, mlo_bot_width),                # noqa: F821
             (mlo_bot_batch_str, mlo_bot_channel_str, 0, mlo_bot_str, 1), "bot")
    y = view(top, FLOAT, (batch, mlo_n_outputs, 1, mlo_top_height, mlo_top_width),                # noqa: F821
             (mlo_top_batch_str, mlo_top_channel_str, 0, mlo_top_str, 1), "top")
    m = packed(mask, INDEX, y.shape, "mask") if USE_MASK else None                               # noqa: F821
    forward(x, y, m, MLO_POOLING_OP_ID, KERS, STRS, (0, mlo_pad1, mlo_pad0), IMG_INDEX)          # noqa: F821
