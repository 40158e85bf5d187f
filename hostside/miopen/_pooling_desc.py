"""Pooling descriptors (MIOpen's PoolingDescriptor) and their C API, the output dimensions and the
workspace sizes.

Facts kept from MIOpen (src/pooling.cpp, src/pooling_api.cpp): a descriptor set by
miopenSet2dPoolingDescriptor / miopenSetNdPoolingDescriptor has index type miopenIndexUint8 and
workspace index mode Mask, or Image when it has 3 spatial dimensions; an output length is
``max(1, (in + 2 * pad - window) // stride + 1)``; the max-pooling workspace is one index per
element of y, and a y that is not in its default layout (NCHW / NCDHW) adds MIOpen's transpose
allowance (x assumed twice the size of y: MIOpen's own "Todo", kept). Unlike MIOpen, which asserts,
a window or stride < 1 or a pad < 0 is refused at the set call with miopenStatusBadParm.
"""
from __future__ import annotations

from ._errors import MiopenError, live_descriptor, miopenStatus_t, set_descriptor
from ._tensor import tensor
from ._types import (DATA_SIZE, INDEX_SIZE, miopenIndexType_t, miopenPoolingMode_t,
                     miopenPoolingWorkspaceIndexMode_t, enum_value)

__all__ = ["miopenPoolingDescriptor_t", "miopenCreatePoolingDescriptor", "miopenSet2dPoolingDescriptor",
           "miopenGet2dPoolingDescriptor", "miopenSetNdPoolingDescriptor", "miopenGetNdPoolingDescriptor",
           "miopenSetPoolingIndexType", "miopenGetPoolingIndexType", "miopenSetPoolingWorkSpaceIndexMode",
           "miopenGetPoolingWorkSpaceIndexMode", "miopenGetPoolingForwardOutputDim",
           "miopenGetPoolingNdForwardOutputDim", "miopenPoolingGetWorkSpaceSize", "miopenPoolingGetWorkSpaceSizeV2",
           "miopenDestroyPoolingDescriptor"]

_BAD = miopenStatus_t.miopenStatusBadParm


class miopenPoolingDescriptor_t:
    """A pooling descriptor (``miopenCreatePoolingDescriptor``); set it before use."""

    __slots__ = ("mode", "lens", "strides", "pads", "index_type", "ws_index_mode", "destroyed", "_key", "ver")

    def __init__(self):
        self.mode = None
        self.lens = self.strides = self.pads = ()
        self.index_type = miopenIndexType_t.miopenIndexUint8
        self.ws_index_mode = miopenPoolingWorkspaceIndexMode_t.miopenPoolingWorkspaceIndexMask
        self.destroyed = False
        self._key = None
        self.ver = 0            # bumped by every set

    def key(self) -> tuple:
        if self._key is None:
            self._key = (self.mode, self.lens, self.strides, self.pads, self.index_type, self.ws_index_mode)
        return self._key

    def __repr__(self):
        if self.mode is None:
            return "<miopenPoolingDescriptor_t (not set)>"
        return (f"<miopenPoolingDescriptor_t {miopenPoolingMode_t(self.mode).name} window {self.lens} "
                f"pads {self.pads} strides {self.strides}>")


def pooling(desc, what: str = "poolDesc") -> miopenPoolingDescriptor_t:
    return set_descriptor(desc, miopenPoolingDescriptor_t, what, "mode",
                          "miopenSet2dPoolingDescriptor / miopenSetNdPoolingDescriptor")


def _live(desc, what: str = "poolDesc") -> miopenPoolingDescriptor_t:
    return live_descriptor(desc, miopenPoolingDescriptor_t, what)


def _ints(values, n: int, what: str) -> tuple[int, ...]:
    try:
        out = list(values)
    except TypeError:
        raise MiopenError(_BAD, f"{what} must be a sequence of {n} ints, not {values!r}") from None
    if len(out) < n or any(isinstance(v, bool) or not hasattr(v, "__index__") for v in out[:n]):
        raise MiopenError(_BAD, f"{what} must hold {n} ints, not {values!r}")
    return tuple(int(v) for v in out[:n])


def _set(d, mode, lens, pads, strides) -> None:
    m = enum_value(miopenPoolingMode_t, mode, "mode")
    for name, vals, lo in (("window", lens, 1), ("stride", strides, 1), ("pad", pads, 0)):
        if any(v < lo for v in vals):
            raise MiopenError(_BAD, f"every pooling {name} must be >= {lo}, not {list(vals)}")
    d.mode, d.lens, d.pads, d.strides = m, tuple(lens), tuple(pads), tuple(strides)
    d.index_type = miopenIndexType_t.miopenIndexUint8
    d.ws_index_mode = (miopenPoolingWorkspaceIndexMode_t.miopenPoolingWorkspaceIndexImage if len(lens) == 3
                       else miopenPoolingWorkspaceIndexMode_t.miopenPoolingWorkspaceIndexMask)
    d._key = None
    d.ver += 1


def miopenCreatePoolingDescriptor() -> miopenPoolingDescriptor_t:
    return miopenPoolingDescriptor_t()


def miopenSet2dPoolingDescriptor(poolDesc, mode, windowHeight: int, windowWidth: int, pad_h: int, pad_w: int,
                                 stride_h: int, stride_w: int) -> None:
    d = _live(poolDesc)
    lens = _ints((windowHeight, windowWidth), 2, "windowHeight, windowWidth")
    pads = _ints((pad_h, pad_w), 2, "pad_h, pad_w")
    strides = _ints((stride_h, stride_w), 2, "stride_h, stride_w")
    _set(d, mode, lens, pads, strides)


def miopenGet2dPoolingDescriptor(poolDesc) -> tuple:
    """(mode, windowHeight, windowWidth, pad_h, pad_w, stride_h, stride_w)."""
    d = pooling(poolDesc)
    if len(d.lens) != 2:
        raise MiopenError(_BAD, f"miopenGet2dPoolingDescriptor needs a 2-D descriptor, this one has "
                                f"{len(d.lens)} spatial dimensions")
    return (miopenPoolingMode_t(d.mode), *d.lens, *d.pads, *d.strides)


def miopenSetNdPoolingDescriptor(poolDesc, mode, nbDims: int, windowDimA, padA, stridesA) -> None:
    d = _live(poolDesc)
    if isinstance(nbDims, bool) or not isinstance(nbDims, int) or not 1 <= nbDims <= 3:
        raise MiopenError(_BAD, f"nbDims must be 1, 2 or 3 spatial dimensions, not {nbDims!r}")
    _set(d, mode, _ints(windowDimA, nbDims, "windowDimA"), _ints(padA, nbDims, "padA"),
         _ints(stridesA, nbDims, "stridesA"))


def miopenGetNdPoolingDescriptor(poolDesc, nbDimsRequested: int) -> tuple:
    """(mode, nbDims, windowDimA, padA, stridesA), the arrays cut to ``nbDimsRequested``."""
    d = pooling(poolDesc)
    if isinstance(nbDimsRequested, bool) or not isinstance(nbDimsRequested, int) or nbDimsRequested < 0:
        raise MiopenError(_BAD, f"nbDimsRequested must be an int >= 0, not {nbDimsRequested!r}")
    k = nbDimsRequested
    return miopenPoolingMode_t(d.mode), len(d.lens), list(d.lens[:k]), list(d.pads[:k]), list(d.strides[:k])


def miopenSetPoolingIndexType(poolDesc, index_type) -> None:
    d = _live(poolDesc)
    d.index_type = enum_value(miopenIndexType_t, index_type, "index_type")
    d._key = None
    d.ver += 1


def miopenGetPoolingIndexType(poolDesc) -> miopenIndexType_t:
    return miopenIndexType_t(_live(poolDesc).index_type)


def miopenSetPoolingWorkSpaceIndexMode(poolDesc, workspace_index) -> None:
    d = _live(poolDesc)
    d.ws_index_mode = enum_value(miopenPoolingWorkspaceIndexMode_t, workspace_index, "workspace_index")
    d._key = None
    d.ver += 1


def miopenGetPoolingWorkSpaceIndexMode(poolDesc) -> miopenPoolingWorkspaceIndexMode_t:
    return miopenPoolingWorkspaceIndexMode_t(_live(poolDesc).ws_index_mode)


def output_dims(d: miopenPoolingDescriptor_t, xd) -> list[int]:
    """GetForwardOutputDimNd: [n, c, *spatial] for x."""
    if xd.num_dims != len(d.lens) + 2:
        raise MiopenError(_BAD, f"a {len(d.lens)}-D pooling descriptor needs a {len(d.lens) + 2}-D tensor, "
                                f"x has {xd.num_dims} dimensions {list(xd.lens)}")
    out = list(xd.lens[:2])
    for n, k, p, s in zip(xd.lens[2:], d.lens, d.pads, d.strides):
        out.append(max(1, (n + 2 * p - k) // s + 1))
    return out


def miopenGetPoolingForwardOutputDim(poolDesc, tensorDesc) -> tuple[int, int, int, int]:
    """(n, c, h, w) of the output of a 2-D pooling of a 4-D x."""
    d, x = pooling(poolDesc), tensor(tensorDesc)
    if x.num_dims != 4:
        raise MiopenError(_BAD, f"miopenGetPoolingForwardOutputDim needs a 4-D tensor, not {list(x.lens)}")
    n, c, h, w = output_dims(d, x)
    return n, c, h, w


def miopenGetPoolingNdForwardOutputDim(poolDesc, tensorDesc, dims: int) -> list[int]:
    d, x = pooling(poolDesc), tensor(tensorDesc)
    if dims != x.num_dims or not 4 <= dims <= 5:
        raise MiopenError(_BAD, f"dims must be the tensor's number of dimensions (4 or 5), not {dims!r} for "
                                f"{list(x.lens)}")
    return output_dims(d, x)


def miopenPoolingGetWorkSpaceSize(yDesc) -> int:
    """The deprecated form: one uint8 index per element of y."""
    return tensor(yDesc, "yDesc").element_size


def workspace_size(d: miopenPoolingDescriptor_t, y) -> int:
    main = y.element_size * INDEX_SIZE[d.index_type] if d.mode == miopenPoolingMode_t.miopenPoolingMax else 0
    labels = "NCHW" if y.num_dims == 4 else "NCDHW" if y.num_dims == 5 else ""
    if labels and y.layout_str() != labels:
        ys = y.element_size * DATA_SIZE[y.type]     # y transposed into a packed default layout
        return main + 2 * ys + ys                   # MIOpen's allowance: x taken as twice y (subbuffer align 1)
    return main


def miopenPoolingGetWorkSpaceSizeV2(poolDesc, yDesc) -> int:
    return workspace_size(pooling(poolDesc), tensor(yDesc, "yDesc"))


def miopenDestroyPoolingDescriptor(poolDesc) -> None:
    _live(poolDesc).destroyed = True
