"""Forward pooling solvers, in MIOpen's container order: PoolingForward2d, PoolingForwardNd,
PoolingForwardNaive, TransposedPoolingFwd2d, TransposedPoolingFwdNd (src/solver/pooling/forward*.cpp:
the same applicability rules, build parameters, work sizes and kernel arguments)."""
from __future__ import annotations

from ._problem import FORWARD, ConvSolution, KernelInfo, ncdhw
from ._solver import MAX_WAVE_SCRATCH, PoolingSolver, TransposingSolver, round_up
from ._types import (DATA_SIZE, INDEX_MAX_NAME, INDEX_SIZE, INDEX_TYPE_NAME, POOLING_TYPES,
                     data_type_kbp, generate_defines, pooling_op_id)

_MAX = 0            # miopenPoolingMax
_MASK = 0           # miopenPoolingWorkspaceIndexMask


def _max_ws(problem) -> int:
    return problem.y.element_size * INDEX_SIZE[problem.pooling.index_type] if problem.pooling.mode == _MAX else 0


def _common(problem, layout: str, ndims: int) -> bool:
    x, y = problem.x, problem.y
    return (problem.direction == FORWARD and x.num_dims == ndims and x.type == y.type and x.type in POOLING_TYPES
            and x.is_possible_layout(layout) and y.is_possible_layout(layout))


def _pre_pow2(v: int) -> int:
    """prePow2: the largest power of two <= v."""
    p = 1
    while p * 2 <= v:
        p *= 2
    return p


class _Fwd2dParams:
    def __init__(self, problem):
        pd = problem.pooling
        self.kh, self.kw = pd.lens[0], pd.lens[1]
        self.sh, self.sw = pd.strides[0], pd.strides[1]
        self.out_h, self.out_w = problem.y.lens[2], problem.y.lens[3]
        self.tile0 = 1
        self.tile1 = 1 if self.out_h <= 8 else 4 if self.out_h <= 32 else 8
        if self.out_h > 16 and self.out_h % 32 > 16:
            self.tile1 = min(16, max(1, _pre_pow2(self.tile1 * self.sh)))


def _fwd2d_private_memory(problem) -> int:
    kp = _Fwd2dParams(problem)
    bot = ((kp.tile0 - 1) * kp.sw + kp.kw) * ((kp.tile1 - 1) * kp.sh + kp.kh) * DATA_SIZE[problem.x.type]
    res = kp.tile1 * kp.tile0 * 4       # float accumulators (half averages accumulate in float)
    return round_up(bot, 16) + round_up(res, 16)


class PoolingForward2d(PoolingSolver):
    def is_applicable(self, h, problem) -> bool:
        return _common(problem, "NCHW", 4) and _fwd2d_private_memory(problem) <= MAX_WAVE_SCRATCH // h.wavefront

    def get_workspace_size(self, h, problem) -> int:
        return _max_ws(problem)

    def get_solution(self, h, problem) -> ConvSolution:
        kp = _Fwd2dParams(problem)
        pd = problem.pooling
        batch, n_outputs = problem.y.lens[0], problem.y.lens[1]
        g0 = 8 if kp.out_w <= 8 else (16 if kp.out_w % 32 <= 16 else 32)
        g1 = 8 if kp.out_h <= 8 else 16 if kp.out_h < 16 else 32 if kp.out_h <= 32 else 64 if kp.out_h <= 64 else 128
        g1 //= kp.tile1
        while g0 * g1 > 256 and g0 > 1:
            g0 >>= 1
        params = [("MLO_POOLING_OP_ID", pooling_op_id(pd.mode)), ("MLO_POOLING_KERNEL_SZ1", kp.kh),
                  ("MLO_POOLING_STRIDE1", kp.sh), ("MLO_POOLING_KERNEL_SZ0", kp.kw), ("MLO_POOLING_STRIDE0", kp.sw),
                  ("MLO_POOLING_N_HORIZ_OUT_PIX", kp.tile0), ("MLO_POOLING_N_VERT_OUT_PIX", kp.tile1),
                  ("MLO_POOLING_GROUP_SZ0", g0), ("MLO_POOLING_GROUP_SZ1", g1),
                  ("MLO_POOLING_INDEX_TYPE", INDEX_TYPE_NAME[pd.index_type]),
                  ("MLO_POOLING_INDEX_MAX", INDEX_MAX_NAME[pd.index_type])]
        if problem.save_index:
            params += [("MLO_POOLING_SAVE_INDEX", ""), ("USE_IMG_INDEX", int(pd.ws_index_mode != _MASK))]
        params = [(n, str(v)) for n, v in params] + data_type_kbp(problem.x.type)
        gw = (kp.out_w + g0 * kp.tile0 - 1) // (g0 * kp.tile0)
        gh = (kp.out_h + g1 * kp.tile1 - 1) // (g1 * kp.tile1)
        k = KernelInfo("MIOpenPooling.py", "mloPoolingG", generate_defines(params), (g0, g1, 1),
                       (gw * g0, gh * g1, n_outputs * batch))

        def factory(kernels):
            kern = kernels[0]

            def invoker(hh, p):
                xd, yd, pads = p.x_desc, p.y_desc, p.pooling.pads
                kern.launch(hh.stream, p.x, p.y, p.workspace, pads[0], pads[1], xd.lens[1], xd.lens[2], xd.lens[3],
                            yd.lens[2], yd.lens[3], xd.strides[0], xd.strides[1], xd.strides[2], yd.strides[0],
                            yd.strides[1], yd.strides[2])
            return invoker
        return ConvSolution(self.solver_id, [k], factory)


_TOP_W, _TOP_H, _TOP_D = 1, 4, 2        # forwardNd's outputs per work-item


def _fwdnd_private_memory(problem) -> int:
    pd = problem.pooling
    sd, sh, sw = pd.strides
    kd, kh, kw = pd.lens
    tile = ((_TOP_W - 1) * sw + kw) * ((_TOP_H - 1) * sh + kh) * ((_TOP_D - 1) * sd + kd)
    return round_up(tile * DATA_SIZE[problem.x.type], 16)


def _nd_total_work(x, y) -> int:
    top_d, top_h, top_w = y.lens[-3], y.lens[-2], y.lens[-1]
    return (x.lens[0] * x.lens[1] * max((top_w + _TOP_W - 1) // _TOP_W, 1) * max((top_h + _TOP_H - 1) // _TOP_H, 1)
            * max((top_d + _TOP_D - 1) // _TOP_D, 1))


class PoolingForwardNd(PoolingSolver):
    def is_applicable(self, h, problem) -> bool:
        pd = problem.pooling
        return (_common(problem, "NCDHW", 5) and _fwdnd_private_memory(problem) <= MAX_WAVE_SCRATCH // h.wavefront
                # "This solver does not support workspace index mask mode yet."
                and not (pd.mode == _MAX and pd.ws_index_mode == _MASK and problem.save_index))

    def get_workspace_size(self, h, problem) -> int:
        return _max_ws(problem)

    def get_solution(self, h, problem) -> ConvSolution:
        pd = problem.pooling
        max_activ = 65536
        activ = min(_nd_total_work(problem.x, problem.y), max_activ)
        lcl = 64
        groups = (activ + lcl - 1) // lcl
        params = [("MLO_POOLING_OP_ID", pooling_op_id(pd.mode)), ("MAX_ACTIV_WORKITEM", max_activ),
                  ("MLO_POOLING_GROUP_SZ0", lcl), ("MLO_POOLING_GROUP_SZ1", 1), ("MLO_POOLING_GROUP_SZ2", 1),
                  ("TOP_W_PER_WORK", _TOP_W), ("TOP_H_PER_WORK", _TOP_H), ("TOP_D_PER_WORK", _TOP_D),
                  ("KERNEL_SZ_D", pd.lens[0]), ("KERNEL_SZ_H", pd.lens[1]), ("KERNEL_SZ_W", pd.lens[2]),
                  ("STRIDE_D", pd.strides[0]), ("STRIDE_H", pd.strides[1]), ("STRIDE_W", pd.strides[2]),
                  ("MLO_POOLING_INDEX_TYPE", INDEX_TYPE_NAME[pd.index_type]),
                  ("MLO_POOLING_INDEX_MAX", INDEX_MAX_NAME[pd.index_type])]
        if problem.save_index:
            params.append(("MLO_POOLING_SAVE_INDEX", ""))
        params = [(n, str(v)) for n, v in params] + data_type_kbp(problem.x.type)
        k = KernelInfo("MIOpenPoolingND.py", "mloPoolingNDFwd", generate_defines(params), (lcl, 1, 1),
                       (lcl * groups, 1, 1))

        def factory(kernels):
            kern = kernels[0]

            def invoker(hh, p):
                xd, yd, pads = p.x_desc, p.y_desc, p.pooling.pads
                xl, xs, yl, ys = xd.lens, xd.strides, yd.lens, yd.strides
                kern.launch(hh.stream, p.x, p.y, p.workspace, pads[0], pads[1], pads[2], xl[0], xl[1], xl[2], xl[3],
                            xl[4], yl[-3], yl[-2], yl[-1], xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2], ys[3],
                            _nd_total_work(xd, yd))
            return invoker
        return ConvSolution(self.solver_id, [k], factory)


def _pow2_up(v: int) -> int:
    p = 1
    while p < v:
        p *= 2
    return p


class PoolingForwardNaive(PoolingSolver):
    def is_applicable(self, h, problem) -> bool:
        x, y = problem.x, problem.y
        return (problem.direction == FORWARD and x.type == y.type and x.type in POOLING_TYPES
                and ((x.num_dims == 5 and x.is_possible_layout("NCDHW") and y.is_possible_layout("NCDHW"))
                     or (x.num_dims == 4 and x.is_possible_layout("NCHW") and y.is_possible_layout("NCHW"))))

    def get_workspace_size(self, h, problem) -> int:
        return _max_ws(problem) if problem.save_index else 0

    def get_solution(self, h, problem) -> ConvSolution:
        x, y, pd = problem.x, problem.y, problem.pooling
        is2d = x.num_dims == 4
        lens, strs, pads = pd.lens, pd.strides, pd.pads
        fw, fh, fd = (lens[1], lens[0], 1) if is2d else (lens[2], lens[1], lens[0])
        fws, fhs = (strs[1], strs[0]) if is2d else (strs[2], strs[1])
        fds = fhs * fd if is2d else strs[0]
        fwp, fhp, fdp = (pads[1], pads[0], 0) if is2d else (pads[2], pads[1], pads[0])
        n, c, bd, bh, bw = ncdhw(x.lens)
        bns, bcs, bds, bhs, bws = ncdhw(x.strides)
        _n, _c, td, th, tw = ncdhw(y.lens)
        tns, tcs, tds, ths, tws = ncdhw(y.strides)
        mws, mhs = 1, tw                # the mask is packed NCDHW
        mds = mhs * th
        mcs = mds * td
        mns = mcs * c
        is2d_kernel = td == 1
        g0, g1, g2 = _pow2_up(n), _pow2_up(c), _pow2_up(th if is2d_kernel else td)
        left = 64                       # WORKAROUND_ISSUE_MIFIN_80: a wave of 64
        w0 = min(g0, left)
        left //= w0
        w1 = min(g1, left)
        left //= w1
        w2 = min(g2, left)
        params = [("MLO_POOLING_OP_ID", str(pooling_op_id(pd.mode))),
                  ("MLO_POOLING_INDEX_TYPE", INDEX_TYPE_NAME[pd.index_type]),
                  ("MLO_POOLING_IS2D_KERNEL", str(int(is2d_kernel)))] + data_type_kbp(x.type)
        k = KernelInfo("MIOpenPoolingForwardNaive.py", "mloPoolingForwardNaive", generate_defines(params),
                       (w0, w1, w2), (g0, g1, g2))
        save, mode = int(problem.save_index), int(pd.ws_index_mode)
        args = (save, mode, fd, fh, fw, fds, fhs, fws, fdp, fhp, fwp, n, c, bd, bh, bw, bns, bcs, bds, bhs, bws, td, th,
                tw, tns, tcs, tds, ths, tws, mns, mcs, mds, mhs, mws)

        def factory(kernels):
            kern = kernels[0]

            def invoker(hh, p):
                kern.launch(hh.stream, p.x, p.y, p.workspace, *args)
            return invoker
        return ConvSolution(self.solver_id, [k], factory)


class TransposedPoolingFwd2d(TransposingSolver):
    inner = PoolingForward2d()
    forward = True


class TransposedPoolingFwdNd(TransposingSolver):
    inner = PoolingForwardNd()
    forward = True


FORWARD_SOLVERS = (PoolingForward2d(), PoolingForwardNd(), PoolingForwardNaive(), TransposedPoolingFwd2d(),
                   TransposedPoolingFwdNd())
