"""MIOpen's pooling test driver (test/pooling_common.hpp, test/driver.hpp) translated: the configs a
``test_pooling2d`` / ``test_pooling3d`` command runs (its data arguments, ``--all``, ``--dataset``,
``--limit``, and the skips of ``pooling_driver::run``), the integer tensor generator, the CPU
reference of ``verify_forward_pooling`` / ``verify_backward_pooling`` (float64, vectorised with numpy),
the GPU side through ``hostside.miopen`` and ``verify``'s check (``rms_range <= eps(T) * tolerance``,
tolerance 80).

Port choices (NOT_PORTED.md says them too): a config whose x has more than ``MAX_ELEMS`` elements runs
on fewer batches and channels (pooling treats every (n, c) plane alike: the spatial problem is
unchanged); a plane larger than ``MAX_ELEMS`` is not run. Large ``--all`` grids are sampled with
``sample`` (deterministic: a fixed stride through the ordered list of configs upstream runs).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from hostside import hip
from hostside import miopen as mi

TOLERANCE = 80                  # test_driver::tolerance
MAX_ELEMS = 1 << 21             # elements of x the port runs at most (see the module doc)
DTYPES = {"--float": np.float32, "--half": np.float16}
INDEX_TYPES = {"miopenIndexUint8": (mi.miopenIndexUint8, np.uint8),
               "miopenIndexUint16": (mi.miopenIndexUint16, np.uint16),
               "miopenIndexUint32": (mi.miopenIndexUint32, np.uint32),
               "miopenIndexUint64": (mi.miopenIndexUint64, np.uint64)}
MODES = {"miopenPoolingMax": mi.miopenPoolingMax, "miopenPoolingAverage": mi.miopenPoolingAverage,
         "miopenPoolingAverageInclusive": mi.miopenPoolingAverageInclusive}

# pooling_driver's own data arguments, per dataset (generate_multi_data)
INDEX_TYPE_DATA = (("miopenIndexUint8", "miopenIndexUint16", "miopenIndexUint32", "miopenIndexUint64"),
                   ("miopenIndexUint8", "miopenIndexUint32"), ("miopenIndexUint32",))
MODE_DATA = ("miopenPoolingMax", "miopenPoolingAverage", "miopenPoolingAverageInclusive")


@dataclass(frozen=True)
class Config:
    """One run of ``pooling_driver::run``: the values of its data arguments and the command's flags."""
    dtype: str                  # "--float" / "--half"
    index_type: str
    mode: str
    in_shape: tuple
    lens: tuple
    strides: tuple
    pads: tuple
    wsidx: int
    full_set: bool = False
    dataset_id: int = 0
    verify_indices: int = 1

    @property
    def spt_dim(self) -> int:
        return len(self.in_shape) - 2

    def label(self) -> str:
        return (f"{self.dtype[2:]}-{self.mode[13:]}-{self.index_type[11:]}-wsidx{self.wsidx}"
                f"-x{'x'.join(map(str, self.in_shape))}-k{'x'.join(map(str, self.lens))}"
                f"-s{'x'.join(map(str, self.strides))}-p{'x'.join(map(str, self.pads))}")


def data(values, full_set: bool, limit: int = 0, multiplier: int = 0):
    """generate_data / generate_data_limited: every value with --all (the first limit * multiplier
    with --limit), else the first."""
    values = list(values)
    if not full_set:
        return values[:1]
    if limit > 0 and multiplier:
        return values[:min(len(values), limit * multiplier)]
    return values


def configs(dtype: str, full_set: bool, dataset_id: int, args: dict, limit: int = 0, limited=()) -> list[Config]:
    """Every Config ``run_data`` visits, in its order (the first data argument outermost: index_type,
    mode, verify_indices, then the driver's). ``args`` maps each further argument name to its per-dataset
    values (``generate_multi_data``) or to a fixed value (a command-line ``--name``, as a 1-tuple list);
    names in ``limited`` take ``(values, multiplier)`` (``generate_*_data_limited``)."""
    axes = [("index_type", data(INDEX_TYPE_DATA[dataset_id], full_set)), ("mode", data(MODE_DATA, full_set)),
            ("verify_indices", [1])]
    for name, vals in args.items():
        if name in limited:
            vals, mult = vals
            axes.append((name, data(vals, full_set, limit, mult)))
        else:
            axes.append((name, data(vals, full_set)))
    names = [n for n, _v in axes]
    out = []
    for combo in itertools.product(*(v for _n, v in axes)):
        kw = dict(zip(names, combo))
        out.append(Config(dtype=dtype, index_type=kw["index_type"], mode=kw["mode"], in_shape=tuple(kw["input"]),
                          lens=tuple(kw["lens"]), strides=tuple(kw["strides"]), pads=tuple(kw["pads"]),
                          wsidx=int(kw["wsidx"]), full_set=full_set, dataset_id=dataset_id,
                          verify_indices=kw["verify_indices"]))
    return out


def run_filter(cfgs: list[Config]) -> list[tuple[Config, str | None]]:
    """pooling_driver::run's skips, with its process-wide counters (num_uint16_case ...), over the
    configs of one command in order: (config, None) for a config that runs, (config, why) for a skip.
    The device-memory skip is left out: every config here fits a GPU's memory."""
    n16 = n32 = n32i = n64 = n64i = 0
    out = []
    for c in cfgs:
        full, mx = c.full_set, c.mode == "miopenPoolingMax"
        few = c.dataset_id == 0 and full
        wide = c.dataset_id == 2 and full
        why = None
        if c.wsidx == 0 and c.spt_dim == 3 and mx and full:
            why = "Workspace index mask mode is not implemented yet in 3D max pooling solvers"
        elif c.wsidx == 0 and c.spt_dim == 2 and mx and wide:
            why = "Workspace index mask mode is not implemented yet in 2D max backward solvers (wide window)"
        elif c.wsidx == 0 and not mx and full:
            why = "Workspace index modes are irrelevant for Average pooling"
        elif c.index_type in ("miopenIndexUint8", "miopenIndexUint16") and full and mx \
                and (c.spt_dim == 3 or (c.spt_dim == 2 and c.wsidx == 1)):
            why = "index is too small"
        elif c.index_type == "miopenIndexUint16" and few:
            if n16 > 5:
                why = "num_uint16_case > 5"
            n16 += why is None
        elif c.index_type == "miopenIndexUint32" and few:
            if c.wsidx == 0:
                why = "num_uint32_case > 5" if n32 > 5 else None
                n32 += why is None
            else:
                why = "num_uint32_case_imgidx > 5" if n32i > 5 else None
                n32i += why is None
        elif c.index_type == "miopenIndexUint64" and few:
            if c.wsidx == 0:
                why = "num_uint64_case > 5" if n64 > 5 else None
                n64 += why is None
            else:
                why = "num_uint64_case_imgidx > 5" if n64i > 5 and c.spt_dim == 2 else None
                n64i += why is None
        if why is None and c.spt_dim not in (2, 3):
            why = "spt_dim != 2 && spt_dim != 3"
        if why is None and any(k > n + 2 * p for k, n, p in zip(c.lens, c.in_shape[2:], c.pads)):
            why = "lens[i] > (input lengths[i + 2] + 2 * pads[i])"
        out.append((c, why))
    return out


def sample(items: list, n: int) -> list:
    """``n`` of ``items`` at a fixed stride (the first and the spread of the rest; all when fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def port_shape(shape: tuple) -> tuple | None:
    """The shape the port runs: ``shape``, or with fewer batches, then channels, to keep x within
    MAX_ELEMS; None when one plane alone is larger."""
    n, c, *sp = shape
    plane = int(np.prod(sp))
    if plane > MAX_ELEMS:
        return None
    while n * c * plane > MAX_ELEMS:
        if n > 1:
            n = max(1, MAX_ELEMS // (c * plane)) if c * plane <= MAX_ELEMS else 1
        else:
            c = max(1, MAX_ELEMS // plane)
    return (n, c, *sp)


def runnable(c: Config) -> Config | None:
    shape = port_shape(c.in_shape)
    return None if shape is None else replace(c, in_shape=shape)


# -- tensor_elem_gen_integer and the CPU reference ---------------------------------------------------------

def gen_integer(shape, max_value: int) -> np.ndarray:
    """tensor_elem_gen_integer: (173 + sum(index_i * {613, 547, 701, 877, 1049}_i)) % max_value."""
    dot = np.uint64(173)
    for i, (n, r) in enumerate(zip(shape, (613, 547, 701, 877, 1049))):
        ax = np.arange(n, dtype=np.uint64) * np.uint64(r)
        dot = dot + ax.reshape((1,) * i + (n,) + (1,) * (len(shape) - i - 1))
    return (dot % np.uint64(max_value)).astype(np.float64)


def _windows(c: Config, in_dims, out_dims):
    """Per spatial axis: (start, clipped lo, clipped hi, win_sz) arrays over the outputs."""
    out = []
    for n, o, k, s, p in zip(in_dims, out_dims, c.lens, c.strides, c.pads):
        start = np.arange(o, dtype=np.int64) * s - p
        end = np.minimum(start + k, n)
        lo = np.maximum(start, 0)
        win = np.maximum(end - lo, 1)
        out.append((start, lo, end, win))
    return out


def output_shape(c: Config) -> tuple:
    return c.in_shape[:2] + tuple(max(1, (n + 2 * p - k) // s + 1)
                                  for n, k, s, p in zip(c.in_shape[2:], c.lens, c.strides, c.pads))


def _axis_reduce(a, axis, lo, count, op, init):
    """Reduce ``a`` along ``axis`` over [lo_o, lo_o + count_o) for every output o (count may be 0)."""
    shape = list(a.shape)
    shape[axis] = len(lo)
    acc = np.full(shape, init, dtype=np.float64)
    bshape = [1] * a.ndim
    bshape[axis] = len(lo)
    for j in range(int(count.max(initial=0))):
        v = np.take(a, np.minimum(lo + j, a.shape[axis] - 1), axis=axis)
        v = np.where((j < count).reshape(bshape), v, init)
        acc = op(acc, v)
    return acc


def cpu_forward(c: Config, x: np.ndarray, dtype) -> np.ndarray:
    """verify_forward_pooling::cpu: each output over its window [max(start, 0), + win_sz) within the
    input, max or sum / pool_size (the whole window for inclusive average), stored as T."""
    lowest = float(np.finfo(dtype).min)
    mx = c.mode == "miopenPoolingMax"
    oshape = output_shape(c)
    acc = x.astype(np.float64)
    size = np.ones((), np.float64)
    for i, (start, lo, end, win) in enumerate(_windows(c, c.in_shape[2:], oshape[2:])):
        n = c.in_shape[2 + i]
        count = np.clip(np.minimum(lo + win, n) - lo, 0, None)      # in_cmp_idx: idx < in_dim
        if mx:
            acc = _axis_reduce(acc, 2 + i, lo, count, np.maximum, lowest)
        else:
            acc = _axis_reduce(acc, 2 + i, lo, count, np.add, 0.0)
        bshape = [1] * len(oshape)
        bshape[2 + i] = len(lo)
        size = size * win.reshape(bshape)
    if not mx:
        pool = np.prod(c.lens) if c.mode == "miopenPoolingAverageInclusive" else size
        acc = acc / pool
    return acc.astype(dtype)


def _spread(g, c: Config, oshape):
    """Sum over outputs of g[o] on the clipped window of o (separable: one 0/1 matrix per axis)."""
    out = g
    for i, (start, lo, end, win) in enumerate(_windows(c, c.in_shape[2:], oshape[2:])):
        n = c.in_shape[2 + i]
        pos = np.arange(n)
        m = ((pos[None, :] >= np.maximum(start, 0)[:, None]) & (pos[None, :] < end[:, None])).astype(np.float64)
        out = np.moveaxis(np.tensordot(out, m, axes=([2 + i], [0])), -1, 2 + i)
    return out


def cpu_backward(c: Config, x, dout, out_cpu, indices, use_global_index: bool, verify_index: bool, dtype):
    """verify_backward_pooling::cpu: max spreads each dout to the input its saved index names (and,
    with verify_indices, checks that input equals the forward output there); average spreads dout /
    pool_size over the clipped window. Returns (dinput as T, number of index mismatches)."""
    oshape = output_shape(c)
    in_dims = c.in_shape[2:]
    if c.mode != "miopenPoolingMax":
        size = np.ones((), np.float64)
        for i, (_s, _lo, _e, win) in enumerate(_windows(c, in_dims, oshape[2:])):
            b = [1] * len(oshape)
            b[2 + i] = len(win)
            size = size * win.reshape(b)
        pool = float(np.prod(c.lens)) if c.mode == "miopenPoolingAverageInclusive" else size
        return _spread(dout.astype(np.float64) / pool, c, oshape).astype(dtype), 0
    idx = indices.reshape(oshape).astype(np.int64)
    pos, ok = [], np.ones(oshape, bool)
    for i in range(len(in_dims)):
        if use_global_index:
            p = (idx // int(np.prod(in_dims[i + 1:], dtype=np.int64))) % in_dims[i]
        else:
            p = (idx // int(np.prod(c.lens[i + 1:], dtype=np.int64))) % c.lens[i]
            b = [1] * len(oshape)
            b[2 + i] = oshape[2 + i]
            p = p + (np.arange(oshape[2 + i]) * c.strides[i] - c.pads[i]).reshape(b)
            ok &= (p >= 0) & (p < in_dims[i])
        pos.append(np.clip(p, 0, in_dims[i] - 1))
    nn, cc = np.indices(oshape[:2])
    lead = tuple(v.reshape(v.shape + (1,) * len(in_dims)) for v in (nn, cc))
    full = tuple(np.broadcast_to(v, oshape) for v in lead + tuple(pos))
    bad = 0
    if verify_index:
        bad = int(np.count_nonzero(ok & (x[full] != out_cpu.astype(np.float64))))
    flat = np.ravel_multi_index(tuple(v[ok] for v in full), c.in_shape)
    din = np.bincount(flat, weights=dout.astype(np.float64)[ok], minlength=int(np.prod(c.in_shape)))
    return din.reshape(c.in_shape).astype(dtype), bad


def rms_range(cpu, gpu) -> float:
    """miopen::rms_range: sqrt(sum of squared differences) / (sqrt(n) * the larger magnitude)."""
    a, b = np.asarray(cpu, np.float64).ravel(), np.asarray(gpu, np.float64).ravel()
    if a.size == 0:
        return 0.0
    mag = max(float(np.abs(a).max()), float(np.abs(b).max()), np.finfo(np.float64).tiny)
    return float(np.sqrt(np.sum((a - b) ** 2)) / (np.sqrt(a.size) * mag))


def check(name: str, cpu, gpu, dtype) -> None:
    """verify's test: rms_range(cpu, gpu) <= eps(T) * tolerance (and the same element count)."""
    assert np.size(cpu) == np.size(gpu), f"{name}: {np.size(cpu)} elements on the CPU, {np.size(gpu)} on the GPU"
    err = rms_range(cpu, gpu)
    limit = float(np.finfo(dtype).eps) * TOLERANCE
    assert err <= limit, f"{name}: rms_range {err} over {limit} (max diff {np.nanmax(np.abs(cpu - gpu.astype(np.float64)))})"


# -- the GPU side -------------------------------------------------------------------------------------------

def _desc(dt, shape):
    d = mi.miopenCreateTensorDescriptor()
    mi.miopenSetTensorDescriptor(d, dt, len(shape), list(shape), None)
    return d


def _put(a):
    p = hip.hipMalloc(max(a.nbytes, 1))
    hip.hipMemcpy(p, np.ascontiguousarray(a), a.nbytes, hip.hipMemcpyHostToDevice)
    return p


def _get(p, shape, dtype):
    out = np.empty(shape, dtype)
    hip.hipMemcpy(out, p, out.nbytes, hip.hipMemcpyDeviceToHost)
    return out


def filter_of(c: Config):
    """The PoolingDescriptor of the config (mode, lens, strides, pads, index type, workspace index mode)."""
    pd = mi.miopenCreatePoolingDescriptor()
    mi.miopenSetNdPoolingDescriptor(pd, MODES[c.mode], c.spt_dim, list(c.lens), list(c.pads), list(c.strides))
    mi.miopenSetPoolingIndexType(pd, INDEX_TYPES[c.index_type][0])
    mi.miopenSetPoolingWorkSpaceIndexMode(pd, c.wsidx)
    return pd


def run_impl(handle, c: Config) -> None:
    """pooling_driver::run_impl: forward (CPU and GPU, the GPU saving indices), then backward with a
    generated dout and the GPU's indices, each checked with ``check``."""
    dtype = DTYPES[c.dtype]
    index_dtype = INDEX_TYPES[c.index_type][1]
    dt = mi.miopenHalf if dtype is np.float16 else mi.miopenFloat
    x = gen_integer(c.in_shape, 5 if dtype is np.float16 else 17).astype(dtype)
    oshape = output_shape(c)
    pd = filter_of(c)
    assert tuple(mi.miopenGetPoolingNdForwardOutputDim(pd, _desc(dt, c.in_shape), len(oshape))) == oshape
    xd, yd = _desc(dt, c.in_shape), _desc(dt, oshape)
    ws_size = int(np.prod(oshape)) * np.dtype(index_dtype).itemsize        # Workspace of out.data.size() indices
    ptrs = []
    try:
        px = _put(x)
        ptrs.append(px)
        py = hip.hipMalloc(int(np.prod(oshape)) * np.dtype(dtype).itemsize)
        ptrs.append(py)
        pws = _put(np.zeros(int(np.prod(oshape)), index_dtype))
        ptrs.append(pws)
        mi.miopenPoolingForward(handle, pd, 1.0, xd, px, 0.0, yd, py, True, pws, ws_size)
        y_gpu = _get(py, oshape, dtype)
        indices = _get(pws, (int(np.prod(oshape)),), index_dtype)
        y_cpu = cpu_forward(c, x.astype(np.float64), dtype)
        check("forward", y_cpu.astype(np.float64), y_gpu, dtype)
        dout = gen_integer(oshape, 2503).astype(dtype)
        din_cpu, bad = cpu_backward(c, x.astype(np.float64), dout, y_cpu, indices, c.wsidx != 0,
                                    bool(c.verify_indices), dtype)
        assert bad == 0, f"{bad} saved indices point at an input that is not the forward output"
        pdout = _put(dout)
        ptrs.append(pdout)
        pyc = _put(y_cpu)
        ptrs.append(pyc)
        pdin = hip.hipMalloc(x.nbytes)
        ptrs.append(pdin)
        dxd, dyd = _desc(dt, c.in_shape), _desc(dt, oshape)
        mi.miopenPoolingBackward(handle, pd, 1.0, yd, pyc, dyd, pdout, xd, px, 0.0, dxd, pdin, pws)
        din_gpu = _get(pdin, c.in_shape, dtype)
        check("backward", din_cpu.astype(np.float64), din_gpu, dtype)
    finally:
        hip.hipDeviceSynchronize()
        for p in ptrs:
            hip.hipFree(p)


def cases(command: str, cfgs: list[Config], n: int | None = None) -> list:
    """pytest params of the configs ``command`` runs (``run_filter``'s survivors the port can run),
    all of them or ``sample(.., n)``; the id is the command and the config (and the shape run, when
    ``runnable`` made it smaller)."""
    import pytest  # noqa: PLC0415 - only the test modules call this
    run = [(c, runnable(c)) for c, why in run_filter(cfgs) if why is None]
    run = [(c, r) for c, r in run if r is not None]
    out = []
    for c, r in (sample(run, n) if n else run):
        extra = "" if r.in_shape == c.in_shape else f"-run-as-{'x'.join(map(str, r.in_shape))}"
        out.append(pytest.param(r, id=f"{command} {c.label()}{extra}"))
    return out
