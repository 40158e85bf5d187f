"""A float64 numpy reference of MIOpen's pooling (written independently of the library's kernels: one
output position at a time, vectorised over N and C only), and a runner that pools host arrays on the
device through hostside.miopen with any strides."""
import itertools

import numpy as np

from hostside import hip
from hostside import miopen as mi

DT = {np.float32: mi.miopenFloat, np.float16: mi.miopenHalf}


def ref_forward(x, mode, k, p, s):
    """(y, window index, image index) of pooling x (N, C, *spatial) in float64."""
    x = np.asarray(x, np.float64)
    sp = x.shape[2:]
    out = [max(1, (n + 2 * pp - kk) // ss + 1) for n, pp, kk, ss in zip(sp, p, k, s)]
    y = np.zeros(x.shape[:2] + tuple(out))
    widx = np.zeros(y.shape, np.int64)
    iidx = np.zeros(y.shape, np.int64)
    for o in itertools.product(*(range(v) for v in out)):
        start = [oo * ss - pp for oo, ss, pp in zip(o, s, p)]
        lo = [max(a, 0) for a in start]
        hi = [min(a + kk, n) for a, kk, n in zip(start, k, sp)]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        if mode == mi.miopenPoolingMax:
            flat = win.reshape(win.shape[:2] + (-1,))
            am = flat.argmax(axis=2)            # the first maximum in row-major window order
            y[(slice(None), slice(None)) + o] = flat.max(axis=2)
            pos = np.unravel_index(am, win.shape[2:])
            abs_pos = [pp + a for pp, a in zip(pos, lo)]
            widx[(slice(None), slice(None)) + o] = np.ravel_multi_index(
                tuple(ap - st for ap, st in zip(abs_pos, start)), tuple(k))
            iidx[(slice(None), slice(None)) + o] = np.ravel_multi_index(tuple(abs_pos), sp)
        else:
            cnt = np.prod([b - a for a, b in zip(lo, hi)]) if mode == mi.miopenPoolingAverage else np.prod(k)
            y[(slice(None), slice(None)) + o] = win.sum(axis=tuple(range(2, x.ndim))) / max(int(cnt), 1)
    return y, widx, iidx


def ref_backward(x_shape, dy, mode, k, p, s, iidx):
    dy = np.asarray(dy, np.float64)
    sp = x_shape[2:]
    dx = np.zeros(x_shape)
    n, c = x_shape[:2]
    for o in itertools.product(*(range(v) for v in dy.shape[2:])):
        g = dy[(slice(None), slice(None)) + o]
        if mode == mi.miopenPoolingMax:
            pos = np.unravel_index(iidx[(slice(None), slice(None)) + o], sp)
            for i in range(n):
                for j in range(c):
                    dx[(i, j) + tuple(q[i, j] for q in pos)] += g[i, j]
        else:
            start = [oo * ss - pp for oo, ss, pp in zip(o, s, p)]
            lo = [max(a, 0) for a in start]
            hi = [min(a + kk, nn) for a, kk, nn in zip(start, k, sp)]
            cnt = np.prod([b - a for a, b in zip(lo, hi)]) if mode == mi.miopenPoolingAverage else np.prod(k)
            region = (slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))
            dx[region] += (g / max(int(cnt), 1)).reshape(g.shape + (1,) * len(sp))
    return dx


def strides_for(shape, order):
    """Packed element strides (in NC<spatial> order) of a tensor stored in ``order`` ("NCHW", "NHWC",
    "NCDHW", "NDHWC") or padded: ``order`` may be an explicit tuple of strides."""
    if isinstance(order, tuple):
        return order
    labels = "NCHW" if len(shape) == 4 else "NCDHW"
    st, acc = [0] * len(shape), 1
    for ch in reversed(order):
        i = labels.index(ch)
        st[i] = acc
        acc *= shape[i]
    return tuple(st)


class Dev:
    """A tensor on the device: its descriptor and buffer; ``put``/``get`` move a logical array."""

    def __init__(self, shape, dtype, strides):
        self.shape, self.dtype, self.strides = tuple(shape), np.dtype(dtype), tuple(strides)
        self.space = sum((n - 1) * st for n, st in zip(shape, strides)) + 1
        self.nbytes = self.space * self.dtype.itemsize
        self.ptr = hip.hipMalloc(self.nbytes)
        self.desc = mi.miopenCreateTensorDescriptor()
        mi.miopenSetTensorDescriptor(self.desc, DT[self.dtype.type], len(shape), list(shape), list(strides))

    def _view(self, buf):
        return np.lib.stride_tricks.as_strided(buf, self.shape, tuple(v * self.dtype.itemsize for v in self.strides))

    def put(self, a):
        buf = np.full(self.space, np.nan, self.dtype)
        self._view(buf)[...] = a
        hip.hipMemcpy(self.ptr, buf, self.nbytes, hip.hipMemcpyHostToDevice)

    def fill_nan(self):
        self.put(np.full(self.shape, np.nan, self.dtype))

    def get(self):
        buf = np.empty(self.space, self.dtype)
        hip.hipMemcpy(buf, self.ptr, self.nbytes, hip.hipMemcpyDeviceToHost)
        return self._view(buf).copy()

    def free(self):
        mi.miopenDestroyTensorDescriptor(self.desc)
        hip.hipFree(self.ptr)


def pool_desc(mode, k, p, s, index_type=None, ws_mode=None):
    pd = mi.miopenCreatePoolingDescriptor()
    if len(k) == 2:
        mi.miopenSet2dPoolingDescriptor(pd, mode, k[0], k[1], p[0], p[1], s[0], s[1])
    else:
        mi.miopenSetNdPoolingDescriptor(pd, mode, len(k), list(k), list(p), list(s))
    if index_type is not None:
        mi.miopenSetPoolingIndexType(pd, index_type)
    if ws_mode is not None:
        mi.miopenSetPoolingWorkSpaceIndexMode(pd, ws_mode)
    return pd
