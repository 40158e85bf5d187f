"""Shared part of the pooling kernels (included into each program, as MIOpen's pooling_functions.h and
float_types.h are): typed views of device buffers, and the vectorised pooling over a whole launch.

A pointer argument arrives as a ``u8`` array from the pointer to the end of its allocation; ``view``
gives the (N, C, D, H, W) strided view of the tensor it holds, refusing one that would run past the
allocation. 2-D problems run as D = 1. The max index saved in the workspace is always packed NCDHW
in y's element order (as MIOpen's naive kernel writes it).
"""
import numpy as np

_INDEX_DTYPES = {"uchar": np.uint8, "ushort": np.uint16, "uint": np.uint32, "ulong": np.uint64}
OP_AVE, OP_MAX, OP_AVE_INCLUSIVE = 0, 1, 3


def data_dtype(use_fp16):
    return np.dtype(np.float16) if use_fp16 else np.dtype(np.float32)


def index_dtype(name):
    return np.dtype(_INDEX_DTYPES[name])


def view(buf, dtype, lens, strides, what):
    """The strided (lens) view of the tensor of ``dtype`` at the start of ``buf`` (a u8 device array)."""
    if buf is None:
        raise ValueError(f"{what} is a null pointer")
    dtype = np.dtype(dtype)
    lens = tuple(int(v) for v in lens)
    strides = tuple(int(v) for v in strides)
    space = sum((n - 1) * s for n, s in zip(lens, strides)) + 1
    if space * dtype.itemsize > buf.size:
        raise ValueError(f"{what}: a tensor of {lens} with strides {strides} needs {space * dtype.itemsize} "
                         f"bytes; its allocation has {buf.size} from the pointer")
    flat = buf[: space * dtype.itemsize].view(dtype)
    return np.lib.stride_tricks.as_strided(flat, shape=lens, strides=tuple(s * dtype.itemsize for s in strides))


def packed(buf, dtype, lens, what):
    st, s = [], 1
    for n in reversed(lens):
        st.append(s)
        s *= n
    return view(buf, dtype, lens, tuple(reversed(st)), what)


def _span(o, s, k):
    """The slice of the padded input that window offset o covers for k outputs of stride s."""
    return slice(o, o + s * (k - 1) + 1, s)


def _padded_shape(dims, pads, kers, strs, outs):
    return tuple(max(n + 2 * p, (o - 1) * s + k) for n, p, k, s, o in zip(dims, pads, kers, strs, outs))


def pool_size(dims, pads, kers, strs, outs, op):
    """Each output's divisor (N, C broadcast): the window clipped to the input (exclusive average) or
    the whole window (inclusive), never 0."""
    if op == OP_AVE_INCLUSIVE:
        return np.array(kers[0] * kers[1] * kers[2], dtype=np.int64)
    counts = []
    for n, p, k, s, o in zip(dims, pads, kers, strs, outs):
        start = np.arange(o, dtype=np.int64) * s - p
        counts.append(np.minimum(start + k, n) - np.maximum(start, 0))
    size = counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]
    return np.where(size <= 0, 1, size)


def forward(x, y, mask, op, kers, strs, pads, img_index):
    """Pool x (N, C, D, H, W view) into y (N, C, OD, OH, OW view); for max with ``mask`` (a packed
    index array of y's shape, or None) save each maximum's position: in the image
    (d * H * W + h * W + w) if ``img_index``, else in the window."""
    n, c = x.shape[:2]
    dims, outs = x.shape[2:], y.shape[2:]
    shape = _padded_shape(dims, pads, kers, strs, outs)
    inner = tuple(slice(p, p + d) for p, d in zip(pads, dims))
    if op == OP_MAX:
        work = x.dtype
        fill = -np.finfo(work).max          # MIOpen's -MAX_VAL: loses to every value of the input
    else:
        work = np.dtype(np.float32)         # FP16 averages accumulate in float (mixed precision)
        fill = 0
    xp = np.full((n, c) + shape, fill, dtype=work)
    xp[(slice(None), slice(None)) + inner] = x
    kd, kh, kw = kers
    if op == OP_MAX:
        best = np.full((n, c) + tuple(outs), fill, dtype=work)
        idx = np.zeros(best.shape, dtype=np.int64) if mask is not None else None
        if idx is not None and img_index:
            d, h, w = dims
            od, oh, ow = (np.arange(o, dtype=np.int64) * s - p for o, s, p in zip(outs, strs, pads))
            base = od[:, None, None] * (h * w) + oh[None, :, None] * w + ow[None, None, :]
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    v = xp[:, :, _span(a, strs[0], outs[0]), _span(b, strs[1], outs[1]), _span(e, strs[2], outs[2])]
                    upd = v > best          # strictly greater: the first maximum in window order wins
                    np.copyto(best, v, where=upd)
                    if idx is not None:
                        if img_index:
                            np.copyto(idx, base + (a * dims[1] * dims[2] + b * dims[2] + e), where=upd)
                        else:
                            idx[upd] = e + kw * (b + kh * a)
        y[...] = best
        if idx is not None:
            mask[...] = idx.astype(mask.dtype)
        return
    acc = np.zeros((n, c) + tuple(outs), dtype=work)
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                acc += xp[:, :, _span(a, strs[0], outs[0]), _span(b, strs[1], outs[1]), _span(e, strs[2], outs[2])]
    acc /= pool_size(dims, pads, kers, strs, outs, op)
    y[...] = acc


def backward_avg(dy, dx, op, kers, strs, pads):
    """dx (N, C, D, H, W view) from dy (N, C, OD, OH, OW view): each output's gradient over its divisor,
    spread over its window."""
    n, c = dx.shape[:2]
    dims, outs = dx.shape[2:], dy.shape[2:]
    shape = _padded_shape(dims, pads, kers, strs, outs)
    work = np.dtype(np.float32)
    share = dy.astype(work) / pool_size(dims, pads, kers, strs, outs, op)
    dxp = np.zeros((n, c) + shape, dtype=work)
    for a in range(kers[0]):
        for b in range(kers[1]):
            for e in range(kers[2]):
                dxp[:, :, _span(a, strs[0], outs[0]), _span(b, strs[1], outs[1]), _span(e, strs[2], outs[2])] += share
    dx[...] = dxp[(slice(None), slice(None)) + tuple(slice(p, p + d) for p, d in zip(pads, dims))]


def backward_max(dy, dx, mask, kers, strs, pads, img_index):
    """dx from dy and the saved indices: each output's gradient goes to the input its maximum came from
    (an index that points outside the image, or into the padding, adds nothing)."""
    n, c = dx.shape[:2]
    d, h, w = dims = dx.shape[2:]
    outs = dy.shape[2:]
    idx = mask.astype(np.int64)
    if img_index:
        lin = idx
        ok = (lin >= 0) & (lin < d * h * w)
    else:
        kd, kh, kw = kers
        pos = []
        for axis, off in enumerate((idx // (kh * kw), (idx // kw) % kh, idx % kw)):
            start = np.arange(outs[axis], dtype=np.int64) * strs[axis] - pads[axis]
            shape = [1, 1, 1, 1, 1]
            shape[2 + axis] = outs[axis]
            pos.append(start.reshape(shape) + off)
        ok = (idx < kd * kh * kw)
        for p, lim in zip(pos, dims):
            ok &= (p >= 0) & (p < lim)
        lin = pos[0] * (h * w) + pos[1] * w + pos[2]
    plane = np.arange(n * c, dtype=np.int64).reshape(n, c, 1, 1, 1) * (d * h * w)
    flat = (plane + lin)[ok]
    acc = np.bincount(flat, weights=dy.astype(np.float64)[ok], minlength=n * c * d * h * w)
    dx[...] = acc.reshape(n, c, d, h, w)
