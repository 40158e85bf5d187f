"""miopenPoolingForward and miopenPoolingBackward: MIOpen's PoolingDescriptor::Forward / Backward
(src/ocl/pooling_ocl.cpp) on the solver containers.

Kept from MIOpen: alpha must be 1 and beta 0 ("Only alpha=1 and beta=0 is supported"); x must be
4-D or 5-D ("Unsupported pooling dimension"); max pooling that saves indices needs an index type wide
enough for the window (Mask mode) or the image (Image mode) ("Index range not enough for max pooling
bwd") and a workspace; algorithm names miopenPoolingForwardDirect / miopenPoolingBackwardDirect;
those failures carry MIOpen's status (miopenStatusUnknownError for its plain MIOPEN_THROW).
Checked here although MIOpen does not (it would read or write out of bounds): the pooling
descriptor's dimensions against x's, y's lengths against the output lengths, the workspace size,
the element counts of y/dy and x/dx, and that every pointer is a device pointer (an int).
"""
from __future__ import annotations

import numpy as np

from ._errors import MiopenError, miopenStatus_t
from ._handle import handle, miopenHandle_t as _Handle
from ._pooling_desc import miopenPoolingDescriptor_t as _PoolDesc, output_dims, pooling
from ._problem import BACKWARD, FORWARD, BwdInvokeParams, FwdInvokeParams, Problem
from ._solver import execute_primitive
from ._solvers_bwd import BACKWARD_SOLVERS
from ._solvers_fwd import FORWARD_SOLVERS
from ._tensor import miopenTensorDescriptor_t as _TensorDesc, tensor
from ._types import INDEX_MAX, INDEX_SIZE

__all__ = ["miopenPoolingForward", "miopenPoolingBackward"]

_BAD = miopenStatus_t.miopenStatusBadParm
_UNKNOWN = miopenStatus_t.miopenStatusUnknownError
_MAX = 0


def _scalar(v, what: str) -> float:
    if isinstance(v, (list, tuple)) and len(v) == 1:        # a "pointer" to one float
        v = v[0]
    try:
        return float(v)
    except (TypeError, ValueError):
        raise MiopenError(_BAD, f"{what} must be a number, not {v!r}") from None


def _as_float32(v: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(v))             # out of float's range: +-inf


def _alpha_beta(alpha, beta) -> None:
    """Only called when alpha != 1 or beta != 0 as compared directly (a list holding one float, or
    something that is not a number, lands here too). MIOpen reads *alpha and *beta as float and tests
    float_equal(alpha, 1.0), float_equal(beta, 0): a value that rounds to 1.0f / +-0.0f passes."""
    if _as_float32(_scalar(alpha, "alpha")) != 1.0 or _as_float32(_scalar(beta, "beta")) != 0.0:
        raise MiopenError(_UNKNOWN, f"Only alpha=1 and beta=0 is supported (alpha={alpha!r}, beta={beta!r})")


def _ptr(v, what: str, optional: bool = False):
    if type(v) is int and v > 0:
        return v
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise MiopenError(_BAD, f"{what} must be a device pointer (a non-zero int), not {v!r}")
    return v


def _dims(d, what: str) -> None:
    if d.num_dims not in (4, 5):
        raise MiopenError(_UNKNOWN, f"Unsupported pooling dimension: {what} has {d.num_dims} dimensions "
                                    f"{list(d.lens)} (4 or 5)")


def _check_shapes(pd, x, y, xn: str, yn: str) -> None:
    want = output_dims(pd, x)
    if list(y.lens) != want:
        raise MiopenError(_BAD, f"{yn} lengths {list(y.lens)} are not the pooling output of {xn} {list(x.lens)}: "
                                f"{want}")


def miopenPoolingForward(handle_, poolDesc, alpha, xDesc, x, beta, yDesc, y, do_backward: bool = False,
                         workSpace=None, workSpaceSize: int = 0) -> None:
    # a well-formed argument passes its check inline (an invoker hit costs little more than its launch);
    # any other goes to the function that says what is wrong with it
    h = handle_ if type(handle_) is _Handle and not handle_.destroyed else handle(handle_)
    pd = poolDesc if type(poolDesc) is _PoolDesc and poolDesc.mode is not None and not poolDesc.destroyed \
        else pooling(poolDesc)
    xd = xDesc if type(xDesc) is _TensorDesc and xDesc.type is not None and not xDesc.destroyed \
        else tensor(xDesc, "xDesc")
    yd = yDesc if type(yDesc) is _TensorDesc and yDesc.type is not None and not yDesc.destroyed \
        else tensor(yDesc, "yDesc")
    if alpha != 1.0 or beta != 0.0:
        _alpha_beta(alpha, beta)
    if type(x) is not int or x <= 0:
        _ptr(x, "x")
    if type(y) is not int or y <= 0:
        _ptr(y, "y")
    save = do_backward is True or bool(do_backward)
    ws = None if workSpace is None else _ptr(workSpace, "workSpace")
    if type(workSpaceSize) is not int or workSpaceSize < 0:
        raise MiopenError(_BAD, f"workSpaceSize must be an int >= 0, not {workSpaceSize!r}")
    # the checks below depend on the descriptors only: done once per (descriptors, their versions)
    memo_key = (pd, xd, yd, save, ws is None, workSpaceSize)
    m = h.memo.get(memo_key)
    if m is None or m[0] != (pd.ver, xd.ver, yd.ver):
        if len(h.memo) > 1024:
            h.memo.clear()
        m = h.memo[memo_key] = ((pd.ver, xd.ver, yd.ver), _forward_checks(pd, xd, yd, save, ws, workSpaceSize))
    params = FwdInvokeParams(xd, x, yd, y, pd, ws, workSpaceSize)
    execute_primitive(h, FORWARD_SOLVERS, m[1], "miopenPoolingForwardDirect", params, "miopenPoolingForward")


def _forward_checks(pd, xd, yd, save, ws, ws_size) -> Problem:
    _dims(xd, "xDesc")
    _check_shapes(pd, xd, yd, "xDesc", "yDesc")
    if pd.mode == _MAX and save:
        imax = INDEX_MAX[pd.index_type]
        if pd.ws_index_mode == 0:
            span, what = 1, "window"
            for v in pd.lens:
                span *= v
        else:
            span, what = 1, "image"
            for v in xd.lens[2:]:
                span *= v
        if imax <= span:
            raise MiopenError(_UNKNOWN, f"Index range not enough for max pooling bwd: the {what} has {span} "
                                        f"elements, the index type holds up to {imax}")
        if ws is None:
            raise MiopenError(_UNKNOWN, "workSpace cannot be NULL in Forward Pooling MAX mode when backward pass "
                                        "is requested")
        need = yd.element_size * INDEX_SIZE[pd.index_type]
        if ws_size < need:
            raise MiopenError(_BAD, f"workSpaceSize {ws_size} is smaller than the {need} bytes of indices "
                                    f"y needs (miopenPoolingGetWorkSpaceSizeV2)")
    return Problem(FORWARD, pd, xd, yd, save_index=save)


def miopenPoolingBackward(handle_, poolDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx,
                          workSpace=None) -> None:
    h = handle(handle_)
    pd = pooling(poolDesc)
    yd, dyd = tensor(yDesc, "yDesc"), tensor(dyDesc, "dyDesc")
    xd, dxd = tensor(xDesc, "xDesc"), tensor(dxDesc, "dxDesc")
    if alpha != 1.0 or beta != 0.0:
        _alpha_beta(alpha, beta)
    dy, dx = _ptr(dy, "dy"), _ptr(dx, "dx")
    _ptr(y, "y", optional=True)
    _ptr(x, "x", optional=True)
    ws = _ptr(workSpace, "workSpace", optional=True)
    if pd.mode == _MAX and ws is None:
        raise MiopenError(_BAD, "workSpace (the indices miopenPoolingForward saved with do_backward) is needed "
                                "for max pooling backward")
    memo_key = (pd, xd, yd, dxd, dyd)
    vers = (pd.ver, xd.ver, yd.ver, dxd.ver, dyd.ver)
    m = h.memo.get(memo_key)
    if m is None or m[0] != vers:
        _dims(dyd, "dyDesc")
        if yd.lens != dyd.lens or xd.lens != dxd.lens:
            raise MiopenError(_BAD, f"yDesc {list(yd.lens)} and dyDesc {list(dyd.lens)}, xDesc {list(xd.lens)} and "
                                    f"dxDesc {list(dxd.lens)} must have the same lengths")
        _check_shapes(pd, xd, yd, "xDesc", "yDesc")
        if len(h.memo) > 1024:
            h.memo.clear()
        m = h.memo[memo_key] = (vers, Problem(BACKWARD, pd, xd, yd, dxd, dyd))
    params = BwdInvokeParams(dxd, dx, dyd, dy, pd, ws)
    execute_primitive(h, BACKWARD_SOLVERS, m[1], "miopenPoolingBackwardDirect", params, "miopenPoolingBackward")
