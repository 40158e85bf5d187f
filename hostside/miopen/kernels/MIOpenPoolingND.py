"""MIOpenPoolingND: 3-D (NCDHW) pooling forward, kernel ``mloPoolingNDFwd`` (MIOpen's MIOpenPoolingND.cl,
arguments in its order; W strides 1; saved indices are image indices, USE_GLOBAL_INDEX)."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MLO_POOLING_OP_ID = None            # required
MAX_ACTIV_WORKITEM = None
MLO_POOLING_GROUP_SZ0 = None
MLO_POOLING_GROUP_SZ1 = None
MLO_POOLING_GROUP_SZ2 = None
TOP_W_PER_WORK = None
TOP_H_PER_WORK = None
TOP_D_PER_WORK = None
KERNEL_SZ_D = None                  # required
KERNEL_SZ_H = None                  # required
KERNEL_SZ_W = None                  # required
STRIDE_D = None                     # required
STRIDE_H = None                     # required
STRIDE_W = None                     # required
MLO_POOLING_INDEX_TYPE = None       # required
MLO_POOLING_INDEX_MAX = None
MLO_POOLING_SAVE_INDEX = None
USE_GLOBAL_INDEX = None
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821
INDEX = index_dtype(MLO_POOLING_INDEX_TYPE)                                     # noqa: F821
USE_MASK = MLO_POOLING_SAVE_INDEX is not None and MLO_POOLING_OP_ID == OP_MAX   # noqa: F821
GLOBAL_INDEX = USE_GLOBAL_INDEX is None or USE_GLOBAL_INDEX == 1
KERS = (KERNEL_SZ_D, KERNEL_SZ_H, KERNEL_SZ_W)
STRS = (STRIDE_D, STRIDE_H, STRIDE_W)


@kernel("u8* bot, u8* top, u8* mask, u32 pad_d, u32 pad_h, u32 pad_w, u32 batch, u32 chal, u32 bot_d, "
        "u32 bot_h, u32 bot_w, u32 top_d, u32 top_h, u32 top_w, u32 bot_str_b, u32 bot_str_c, u32 bot_str_d, "
        "u32 bot_str_h, u32 top_str_b, u32 top_str_c, u32 top_str_d, u32 top_str_h, u32 total_work")
def mloPoolingNDFwd(ctx, bot, top, mask, pad_d, pad_h, pad_w, batch, chal, bot_d, bot_h, bot_w, top_d, top_h,
                    top_w, bot_str_b, bot_str_c, bot_str_d, bot_str_h, top_str_b, top_str_c, top_str_d,
                    top_str_h, total_work):
    x = view(bot, FLOAT, (batch, chal, bot_d, bot_h, bot_w), (bot_str_b, bot_str_c, bot_str_d, bot_str_h, 1),  # noqa
             "bot")
    y = view(top, FLOAT, (batch, chal, top_d, top_h, top_w), (top_str_b, top_str_c, top_str_d, top_str_h, 1),  # noqa
             "top")
    m = packed(mask, INDEX, y.shape, "mask") if USE_MASK else None                               # noqa: F821
    forward(x, y, m, MLO_POOLING_OP_ID, KERS, STRS, (pad_d, pad_h, pad_w), GLOBAL_INDEX)        # noqa: F821
