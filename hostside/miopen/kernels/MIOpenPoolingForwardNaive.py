"""MIOpenPoolingForwardNaive: 2-D and 3-D pooling forward with every stride given, kernel
``mloPoolingForwardNaive`` (MIOpen's MIOpenPoolingForwardNaive.cl, arguments in its order)."""
import numpy as np

from shm_layout.kernels import kernel

# @build-parameters (compilation replaces this block with the program's -D defines; None = not defined)
MLO_POOLING_OP_ID = None            # required
MLO_POOLING_INDEX_TYPE = None       # required
MLO_POOLING_IS2D_KERNEL = None      # required
MIOPEN_USE_FP16 = None              # required
MIOPEN_USE_FP32 = None
# @end-build-parameters

#include "pooling_functions.py"

FLOAT = data_dtype(MIOPEN_USE_FP16)                                             # noqa: F821
INDEX = index_dtype(MLO_POOLING_INDEX_TYPE)                                     # noqa: F821


@kernel("u8* bot_ptr, u8* top_ptr, u8* mask_ptr, i32 save_index, i32 index_mode, u32 filter_d, u32 filter_h, "
        "u32 filter_w, u32 filter_d_stride, u32 filter_h_stride, u32 filter_w_stride, u32 filter_d_pad, "
        "u32 filter_h_pad, u32 filter_w_pad, u32 all_n, u32 all_c, u32 bot_d, u32 bot_h, u32 bot_w, "
        "u64 bot_n_stride, u64 bot_c_stride, u32 bot_d_stride, u32 bot_h_stride, u32 bot_w_stride, u32 top_d, "
        "u32 top_h, u32 top_w, u64 top_n_stride, u64 top_c_stride, u32 top_d_stride, u32 top_h_stride, "
        "u32 top_w_stride, u64 mask_n_stride, u64 mask_c_stride, u32 mask_d_stride, u32 mask_h_stride, "
        "u32 mask_w_stride")
def mloPoolingForwardNaive(ctx, bot_ptr, top_ptr, mask_ptr, save_index, index_mode, filter_d, filter_h, filter_w,
                           filter_d_stride, filter_h_stride, filter_w_stride, filter_d_pad, filter_h_pad,
                           filter_w_pad, all_n, all_c, bot_d, bot_h, bot_w, bot_n_stride, bot_c_stride,
                           bot_d_stride, bot_h_stride, bot_w_stride, top_d, top_h, top_w, top_n_stride,
                           top_c_stride, top_d_stride, top_h_stride, top_w_stride, mask_n_stride, mask_c_stride,
                           mask_d_stride, mask_h_stride, mask_w_stride):
    # MLO_POOLING_IS2D_KERNEL (top_d == 1) only changes how MIOpen maps work-items to outputs; one launch
    # here computes every output either way
    x = view(bot_ptr, FLOAT, (all_n, all_c, bot_d, bot_h, bot_w),                                # noqa: F821
             (bot_n_stride, bot_c_stride, bot_d_stride, bot_h_stride, bot_w_stride), "bot")
    y = view(top_ptr, FLOAT, (all_n, all_c, top_d, top_h, top_w),                                # noqa: F821
             (top_n_stride, top_c_stride, top_d_stride, top_h_stride, top_w_stride), "top")
    m = None
    if save_index and MLO_POOLING_OP_ID == OP_MAX:                                              # noqa: F821
        m = view(mask_ptr, INDEX, y.shape,                                                       # noqa: F821
                 (mask_n_stride, mask_c_stride, mask_d_stride, mask_h_stride, mask_w_stride), "mask")
    forward(x, y, m, MLO_POOLING_OP_ID, (filter_d, filter_h, filter_w),                          # noqa: F821
            (filter_d_stride, filter_h_stride, filter_w_stride), (filter_d_pad, filter_h_pad, filter_w_pad),
            index_mode == 1)
