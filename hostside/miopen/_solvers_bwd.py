"""Backward pooling solvers, in MIOpen's container order: PoolingBackward2d, PoolingBackwardNd,
TransposedPoolingBwd2d, TransposedPoolingBwdNd (src/solver/pooling/backward*.cpp: the same
applicability rules, build parameters, work sizes and kernel arguments)."""
from __future__ import annotations

from ._problem import BACKWARD, ConvSolution, KernelInfo
from ._solver import MAX_LOCAL_MEMORY, PoolingSolver, TransposingSolver, round_up
from ._types import (DATA_SIZE, INDEX_MAX_NAME, INDEX_SIZE, INDEX_TYPE_NAME, POOLING_TYPES, data_type_kbp,
                     generate_defines, pooling_op_id)

_MAX, _MASK, _IMAGE = 0, 0, 1


class _Bwd2dParams:
    def __init__(self, problem):
        pd = problem.pooling
        self.kw, self.kh = pd.lens[1], pd.lens[0]
        self.sw, self.sh = pd.strides[1], pd.strides[0]
        self.batch, self.n_inputs, self.in_h, self.in_w = problem.x.lens
        w = self.in_w
        self.tile0 = self.tile1 = 1
        self.grp0 = self.grp1 = 8
        if pd.mode == _MAX:
            self.tile0 = 4 if 8 < w <= 24 else 1
            self.tile1 = 1 if w <= 24 else (4 if 64 < w <= 96 else 8)
            self.grp0 = (8 if w <= 8 else 4 if w <= 16 else 8 if w <= 24 else 32 if w <= 32 else 8 if w <= 64
                         else 16 if w <= 96 else 16 if w <= 128 else 32)
            self.grp1 = (8 if w <= 8 else 16 if w <= 16 else 8 if w <= 24 else 4 if w <= 32 else 8 if w <= 64
                         else 4 if w <= 96 else 16 if w <= 128 else 4)


def _bwd2d_local_memory(problem) -> int:
    kp = _Bwd2dParams(problem)
    width = (kp.grp0 * kp.tile0 + kp.kw + kp.sw - 2) // kp.sw
    height = (kp.grp1 * kp.tile1 + kp.kh + kp.sh - 2) // kp.sh
    n = width * height
    top = round_up(DATA_SIZE[problem.x.type] * n, 16)
    if problem.pooling.mode == _MAX:
        return top + round_up(INDEX_SIZE[problem.pooling.index_type] * n, 16)
    return top


def _max_ws(problem) -> int:
    return problem.y.element_size * INDEX_SIZE[problem.pooling.index_type] if problem.pooling.mode == _MAX else 0


class PoolingBackward2d(PoolingSolver):
    def is_applicable(self, h, problem) -> bool:
        return (problem.direction == BACKWARD and problem.x.num_dims == 4 and problem.x.is_possible_layout("NCHW")
                and problem.y.is_possible_layout("NCHW") and problem.x.type in POOLING_TYPES
                and _bwd2d_local_memory(problem) <= MAX_LOCAL_MEMORY)

    def get_workspace_size(self, h, problem) -> int:
        return _max_ws(problem)

    def get_solution(self, h, problem) -> ConvSolution:
        kp = _Bwd2dParams(problem)
        pd = problem.pooling
        is_max = pd.mode == _MAX
        name = "mloPoolingMaxBwd" if is_max else "mloPoolingAveBwd"
        gw = (kp.in_w + kp.grp0 * kp.tile0 - 1) // (kp.grp0 * kp.tile0)
        gh = (kp.in_h + kp.grp1 * kp.tile1 - 1) // (kp.grp1 * kp.tile1)
        params = [("MLO_POOLING_OP_ID", pooling_op_id(pd.mode)), ("MLO_POOLING_KERNEL_SZ1", kp.kh),
                  ("MLO_POOLING_STRIDE1", kp.sh), ("MLO_POOLING_KERNEL_SZ0", kp.kw), ("MLO_POOLING_STRIDE0", kp.sw),
                  ("MLO_POOLBWD_N_HORIZ_OUT_PIX", kp.tile0), ("MLO_POOLBWD_N_VERT_OUT_PIX", kp.tile1),
                  ("MLO_POOLBWD_GROUP_SZ0", kp.grp0), ("MLO_POOLBWD_GROUP_SZ1", kp.grp1),
                  ("MLO_POOLING_INDEX_TYPE", INDEX_TYPE_NAME[pd.index_type]),
                  ("MLO_POOLING_INDEX_MAX", INDEX_MAX_NAME[pd.index_type]),
                  ("USE_IMG_INDEX", int(pd.ws_index_mode == _IMAGE))]
        params = [(n, str(v)) for n, v in params] + data_type_kbp(problem.x.type)
        k = KernelInfo("MIOpenPoolingBwd.py", name, generate_defines(params), (kp.grp0, kp.grp1, 1),
                       (gw * kp.grp0, gh * kp.grp1, kp.n_inputs * kp.batch))

        def factory(kernels):
            kern = kernels[0]

            def invoker(hh, p):
                dxd, dyd, pads = p.dx_desc, p.dy_desc, p.pooling.pads
                shape = (pads[0], pads[1], dyd.lens[1], dxd.lens[2], dxd.lens[3], dyd.lens[2], dyd.lens[3],
                         dxd.strides[0], dxd.strides[1], dxd.strides[2], dyd.strides[0], dyd.strides[1],
                         dyd.strides[2])
                if p.pooling.mode == _MAX:
                    kern.launch(hh.stream, p.dy, p.dx, p.workspace, *shape)
                else:
                    kern.launch(hh.stream, p.dy, p.dx, *shape)
            return invoker
        return ConvSolution(self.solver_id, [k], factory)


class PoolingBackwardNd(PoolingSolver):
    def is_applicable(self, h, problem) -> bool:
        x, y, pd = problem.x, problem.y, problem.pooling
        return (problem.direction == BACKWARD and x.type == y.type and x.type in POOLING_TYPES
                and ((x.num_dims == 5 and x.is_possible_layout("NCDHW") and y.is_possible_layout("NCDHW"))
                     or (x.num_dims == 4 and x.is_possible_layout("NCHW") and y.is_possible_layout("NCHW")))
                # "This solver does not support workspace index mask mode yet."
                and not (pd.mode == _MAX and pd.ws_index_mode == _MASK))

    def get_workspace_size(self, h, problem) -> int:
        return _max_ws(problem)

    def get_solution(self, h, problem) -> ConvSolution:
        x, y, pd = problem.x, problem.y, problem.pooling
        is_max = pd.mode == _MAX
        is2d = x.num_dims == 4
        batch, chal = y.lens[0], y.lens[1]
        bot_d = 1 if is2d else x.lens[-3]
        bot_h, bot_w = x.lens[-2], x.lens[-1]
        pw_, ph_, pdw = 1, 4, 2
        total = (batch * chal * max((bot_w + pw_ - 1) // pw_, 1) * max((bot_h + ph_ - 1) // ph_, 1)
                 * max((bot_d + pdw - 1) // pdw, 1))
        max_activ, wave = 65536, 64
        groups = (min(total, max_activ) + wave - 1) // wave
        strides, lens, pads = list(pd.strides), list(pd.lens), list(pd.pads)
        if is2d:
            strides, lens, pads = [strides[0]] + strides, [1] + lens, [0] + pads
        overlap = any(s < k for s, k in zip(strides, lens))
        params = [("MLO_POOLING_OP_ID", pooling_op_id(pd.mode)), ("MAX_ACTIV_WORKITEM", max_activ),
                  ("MLO_POOLING_GROUP_SZ0", wave), ("MLO_POOLING_GROUP_SZ1", 1), ("MLO_POOLING_GROUP_SZ2", 1),
                  ("PIX_W_PER_WORK", pw_), ("PIX_H_PER_WORK", ph_), ("PIX_D_PER_WORK", pdw),
                  ("KERNEL_SZ_D", lens[0]), ("KERNEL_SZ_H", lens[1]), ("KERNEL_SZ_W", lens[2]),
                  ("STRIDE_D", strides[0]), ("STRIDE_H", strides[1]), ("STRIDE_W", strides[2]),
                  ("TERRITORY_OVERLAP", int(overlap)), ("MLO_POOLING_INDEX_TYPE", INDEX_TYPE_NAME[pd.index_type]),
                  ("MLO_POOLING_INDEX_MAX", INDEX_MAX_NAME[pd.index_type])]
        params = [(n, str(v)) for n, v in params] + data_type_kbp(problem.dy.type)
        k = KernelInfo("MIOpenPoolingBwdND.py", "mloPoolingND" + ("MaxBwd" if is_max else "AveBwd"),
                       generate_defines(params), (wave, 1, 1), (wave * groups, 1, 1))
        top_d = 1 if is2d else y.lens[-3]
        top_h, top_w = y.lens[-2], y.lens[-1]

        def unpack(s):          # N, C, D (H again for 2-D: its D length is 1) and H strides
            return (s[0], s[1], s[2], s[2] if is2d else s[3])
        shape = (pads[0], pads[1], pads[2], batch, chal, bot_d, bot_h, bot_w, top_d, top_h, top_w,
                 *unpack(x.strides), *unpack(y.strides), total)

        def factory(kernels):
            kern = kernels[0]

            def invoker(hh, p):
                if p.pooling.mode == _MAX:
                    kern.launch(hh.stream, p.dy, p.dx, p.workspace, *shape)
                else:
                    kern.launch(hh.stream, p.dy, p.dx, *shape)
            return invoker
        return ConvSolution(self.solver_id, [k], factory)


class TransposedPoolingBwd2d(TransposingSolver):
    inner = PoolingBackward2d()
    forward = False


class TransposedPoolingBwdNd(TransposingSolver):
    inner = PoolingBackwardNd()
    forward = False


BACKWARD_SOLVERS = (PoolingBackward2d(), PoolingBackwardNd(), TransposedPoolingBwd2d(), TransposedPoolingBwdNd())
