"""MIOpen's public enums (values as in include/miopen/miopen.h) and the facts derived from them:
element sizes, numpy dtypes, the kernels' ``MLO_POOLING_OP_*`` ids and the index types' names."""
from __future__ import annotations

import enum

import numpy as np

from ._errors import MiopenError, miopenStatus_t

__all__ = ["miopenDataType_t", "miopenHalf", "miopenFloat", "miopenInt32", "miopenInt8", "miopenBFloat16",
           "miopenDouble", "miopenFloat8", "miopenBFloat8", "miopenInt64", "miopenTensorLayout_t", "miopenTensorNCHW",
           "miopenTensorNHWC", "miopenTensorCHWN", "miopenTensorNCHWc4", "miopenTensorNCHWc8", "miopenTensorCHWNc4",
           "miopenTensorCHWNc8", "miopenTensorNCDHW", "miopenTensorNDHWC", "miopenPoolingMode_t", "miopenPoolingMax",
           "miopenPoolingAverage",
           "miopenPoolingAverageInclusive", "miopenIndexType_t", "miopenIndexUint8", "miopenIndexUint16",
           "miopenIndexUint32", "miopenIndexUint64", "miopenPoolingWorkspaceIndexMode_t",
           "miopenPoolingWorkspaceIndexMask", "miopenPoolingWorkspaceIndexImage", "miopenPaddingMode_t",
           "miopenPaddingDefault", "miopenPaddingSame", "miopenPaddingValid"]


class miopenDataType_t(enum.IntEnum):
    miopenHalf = 0
    miopenFloat = 1
    miopenInt32 = 2
    miopenInt8 = 3
    miopenBFloat16 = 5
    miopenDouble = 6
    miopenFloat8 = 7
    miopenBFloat8 = 8
    miopenInt64 = 9


class miopenTensorLayout_t(enum.IntEnum):
    miopenTensorNCHW = 0
    miopenTensorNHWC = 1
    miopenTensorCHWN = 2
    miopenTensorNCHWc4 = 3
    miopenTensorNCHWc8 = 4
    miopenTensorCHWNc4 = 5
    miopenTensorCHWNc8 = 6
    miopenTensorNCDHW = 7
    miopenTensorNDHWC = 8


class miopenPoolingMode_t(enum.IntEnum):
    miopenPoolingMax = 0
    miopenPoolingAverage = 1
    miopenPoolingAverageInclusive = 2


class miopenIndexType_t(enum.IntEnum):
    miopenIndexUint8 = 0
    miopenIndexUint16 = 1
    miopenIndexUint32 = 2
    miopenIndexUint64 = 3


class miopenPoolingWorkspaceIndexMode_t(enum.IntEnum):
    miopenPoolingWorkspaceIndexMask = 0     # index within the window (2-D pooling only, as MIOpen says)
    miopenPoolingWorkspaceIndexImage = 1    # index within the image (d * H * W + h * W + w)


class miopenPaddingMode_t(enum.IntEnum):
    miopenPaddingDefault = 0
    miopenPaddingSame = 1
    miopenPaddingValid = 2


globals().update({m.name: m for e in (miopenDataType_t, miopenTensorLayout_t, miopenPoolingMode_t, miopenIndexType_t,
                                      miopenPoolingWorkspaceIndexMode_t, miopenPaddingMode_t) for m in e})

#: element size in bytes and numpy dtype of each data type
DATA_SIZE = {0: 2, 1: 4, 2: 4, 3: 1, 5: 2, 6: 8, 7: 1, 8: 1, 9: 8}
NUMPY_DTYPE = {0: np.dtype("<f2"), 1: np.dtype("<f4"), 2: np.dtype("<i4"), 3: np.dtype("i1"), 6: np.dtype("<f8"),
               9: np.dtype("<i8")}
#: the data types this library pools (as MIOpen's pooling solvers: float and half)
POOLING_TYPES = (0, 1)

#: mlo_internal.hpp's pooling op ids (the kernels' MLO_POOLING_OP_ID)
MLO_POOLING_OP_AVE, MLO_POOLING_OP_MAX, MLO_POOLING_OP_STC, MLO_POOLING_OP_AVE_INCLUSIVE = 0, 1, 2, 3
_OP_ID = {0: MLO_POOLING_OP_MAX, 1: MLO_POOLING_OP_AVE, 2: MLO_POOLING_OP_AVE_INCLUSIVE}

INDEX_SIZE = {0: 1, 1: 2, 2: 4, 3: 8}
INDEX_MAX = {0: 0xFF, 1: 0xFFFF, 2: 0xFFFFFFFF, 3: 0xFFFFFFFFFFFFFFFF}
INDEX_TYPE_NAME = {0: "uchar", 1: "ushort", 2: "uint", 3: "ulong"}
INDEX_MAX_NAME = {0: "UCHAR_MAX", 1: "USHRT_MAX", 2: "UINT_MAX", 3: "ULONG_MAX"}


def pooling_op_id(mode: int) -> int:
    return _OP_ID[int(mode)]


def enum_value(enum_cls, value, what: str) -> int:
    """``value`` as a member of ``enum_cls`` or miopenStatusBadParm naming ``what``."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return enum_cls(value)
    except (ValueError, TypeError):
        names = ", ".join(f"{m.name} ({m.value})" for m in enum_cls)
        raise MiopenError(miopenStatus_t.miopenStatusBadParm,
                          f"{what} must be a {enum_cls.__name__} ({names}), not {value!r}") from None


def data_type_kbp(dt: int) -> list[tuple[str, str]]:
    """GetDataTypeKBP: the MIOPEN_USE_* defines every kernel gets for its data type."""
    flags = {"MIOPEN_USE_FP16": int(dt == 0), "MIOPEN_USE_FP16x4": 0, "MIOPEN_USE_FP16x8": 0,
             "MIOPEN_USE_FP32": int(dt == 1), "MIOPEN_USE_INT8": int(dt == 3), "MIOPEN_USE_BFP16": int(dt == 5),
             "MIOPEN_USE_INT32": int(dt == 2), "MIOPEN_USE_RNE_BFLOAT16": 1,
             "MIOPEN_FP8_IEEE_EXPONENT_BIAS": 0, "MIOPEN_FP8_CLIPPING": 1}
    out = [(k, str(v)) for k, v in flags.items()]
    if dt == 6:
        out.append(("MIOPEN_USE_FP64", "1"))
    return out


def generate_defines(params) -> str:
    """KernelBuildParameters::GenerateFor(kbp::OpenCL): ``-DNAME=VALUE`` (or ``-DNAME``) joined by spaces."""
    return " ".join(f"-D{n}={v}" if v != "" else f"-D{n}" for n, v in params)
