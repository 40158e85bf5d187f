"""What every solver shares: the pooling solver base, the NCHW-transposing wrapper around an inner
solver (MIOpen's TransposingSolver with the UniversalTranspose pseudo-solver), and the solver
container's ExecutePrimitive (GetInvoker, SearchForSolutions taking the first applicable solver,
PrepareInvoker, RegisterInvoker, run).

Deviation, said here once: the transposed copies of x and y go where MIOpen puts them, in the
caller's workspace after the inner solver's part, when the workspace is large enough; when it is not
(MIOpen's miopenPoolingGetWorkSpaceSizeV2 under-counts x), they go to a device buffer the handle owns
instead of past the end of the workspace.
"""
from __future__ import annotations

import dataclasses
import time

from hostside import hip

from . import _log
from ._errors import MiopenError, miopenStatus_t
from ._handle import _bump
from ._problem import KernelInfo, ConvSolution, ncdhw, transposed_desc
from ._types import DATA_SIZE, data_type_kbp, generate_defines

#: TargetProperties: the private memory a work-item may use and the local memory of a group
MAX_WAVE_SCRATCH = (256 * 4) * ((1 << 13) - 1)
MAX_LOCAL_MEMORY = 64 * 1024
_now = time.perf_counter             # CLOCK_MONOTONIC on Linux: the trace's clock (as ns)
#: every call into the platform trace, with the level that answered it (hip's hdemu hook)
_trace_call = hip.hdemuTraceLibraryCall


def round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


class PoolingSolver:
    """A non-tunable pooling solver: ``is_applicable``, ``get_solution``, ``get_workspace_size``."""

    @property
    def solver_id(self) -> str:
        return type(self).__name__

    def is_applicable(self, h, problem) -> bool:    # pragma: no cover - every solver overrides it
        raise NotImplementedError

    def get_workspace_size(self, h, problem) -> int:
        return 0


def sync_layout_dims(layout: str, to: str) -> str:
    """SyncLayoutDims: a 4-D layout is transposed to ``to`` without its D."""
    return to.replace("D", "") if len(layout) < 5 else to


def _transpose_kernel(h, desc) -> KernelInfo:
    """UniversalTransposeSolver::GetSolution for one tensor."""
    group = min(desc.element_size, h.num_cu)
    return KernelInfo("UniversalTranspose.py", "UniversalTranspose", generate_defines(data_type_kbp(desc.type)),
                      (group * 16, 1, 1), (group * 16, 1, 1))


def _transpose_args(src, dst, in_desc, out_desc):
    return (src, dst, *ncdhw(in_desc.lens), *ncdhw(in_desc.strides), *ncdhw(out_desc.strides))


class TransposingSolver(PoolingSolver):
    """Runs ``inner`` on x and y transposed to the default layout (NCHW / NCDHW); x (or dy) is copied in
    before and y (or dx) copied out after. Applicable when some tensor is not in the default layout
    and the inner solver takes the transposed problem."""

    inner: PoolingSolver
    forward = True

    def _transposed(self, problem):
        return problem.with_descs(transposed_desc(problem.x), transposed_desc(problem.y))

    def is_applicable(self, h, problem) -> bool:
        diff = False
        for d in (problem.x, problem.y):
            layout = d.layout_str()
            diff |= layout != sync_layout_dims(layout, "NCDHW")
        return diff and self.inner.is_applicable(h, self._transposed(problem))

    def get_workspace_size(self, h, problem) -> int:
        t = self._transposed(problem)
        return self.inner.get_workspace_size(h, t) + t.x.element_space + t.y.element_space

    def get_solution(self, h, problem) -> ConvSolution:
        t = self._transposed(problem)
        sln = self.inner.get_solution(h, t)
        inner_factory, n_inner = sln.invoker_factory, len(sln.construction_params)
        ws_inner = self.inner.get_workspace_size(h, t)
        # (tensor, is_input) in MIOpen's order of the transposes: x then y (forward), dx then dy (backward)
        moves = []
        for d, is_input in ((problem.x, self.forward), (problem.y, not self.forward)):
            layout = d.layout_str()
            if layout != sync_layout_dims(layout, "NCDHW"):
                sln.construction_params.append(_transpose_kernel(h, d))
                moves.append((len(sln.construction_params) - 1, is_input, d is problem.x))
        fwd = self.forward
        esize = DATA_SIZE[problem.x.type]

        def factory(kernels):
            inner = inner_factory(kernels[:n_inner])
            steps = [(kernels[i], is_input, is_x) for i, is_input, is_x in moves]

            def invoker(hh, params):
                if fwd:
                    descs = {True: (params.x_desc, "x_desc", "x"), False: (params.y_desc, "y_desc", "y")}
                    ws, ws_size = params.workspace, params.workspace_size
                else:
                    descs = {True: (params.dx_desc, "dx_desc", "dx"), False: (params.dy_desc, "dy_desc", "dy")}
                    ws, ws_size = params.workspace, None
                plan, need = [], 0
                for k, is_input, is_x in steps:
                    d = descs[is_x][0]
                    td = transposed_desc(d)
                    need = round_up(need, 256)
                    plan.append((k, is_input, is_x, d, td, need))
                    need += td.element_space * esize
                if ws is not None and ws_size is not None and ws_size >= ws_inner + need:
                    base = ws + ws_inner
                else:
                    base = hh.scratch(need)
                changes = {}
                for k, is_input, is_x, d, td, off in plan:
                    _d, dname, pname = descs[is_x]
                    changes[dname], changes[pname] = td, base + off
                tp = dataclasses.replace(params, **changes)
                for k, is_input, is_x, d, td, off in plan:
                    if is_input:
                        _log.log_i2("Invoker", "Executing the input transpose")
                        k.launch(hh.stream, *_transpose_args(getattr(params, descs[is_x][2]), base + off, d, td))
                _log.log_i2("Invoker", "Executing the inner solver invoker")
                inner(hh, tp)
                for k, is_input, is_x, d, td, off in plan:
                    if not is_input:
                        _log.log_i2("Invoker", "Executing the output transpose")
                        k.launch(hh.stream, *_transpose_args(base + off, getattr(params, descs[is_x][2]), td, d))
            return invoker
        sln.invoker_factory = factory
        sln.solver_id = self.solver_id
        return sln


def execute_primitive(h, solvers, problem, algorithm: str, params, api: str) -> None:
    """SolverContainer::ExecutePrimitive: the registered invoker of (config, algorithm), else the first
    applicable solver's solution made into an invoker (registered), then run it."""
    t0 = _now()
    config = problem.network_config()
    inv = h.invokers.get(config, algorithm)
    t1 = _now()
    counters = h.counters
    counters["calls"] += 1
    if inv is not None:
        counters["invoker_hits"] += 1
        inv(h, params)
        t2 = _now()
        # the hot path keeps a tuple; statistics() makes it the same record as the other levels'
        h.records.append((api, algorithm, config, t0, t1, t2))
        _trace_call("invoker_cache", int(t0 * 1e9), int(t2 * 1e9))
        return
    counters["solver_searches"] += 1
    sln = None
    for s in solvers:
        if not s.is_applicable(h, problem):
            _log.log_i2("SearchForSolutions", f"{s.solver_id}: Not applicable")
            continue
        _log.log_i("FindSolutionImpl", f"{s.solver_id} (not searchable)")
        sln = s.get_solution(h, problem)
        break
    t2 = _now()
    if sln is None:
        raise MiopenError(miopenStatus_t.miopenStatusNotImplemented,
                          f"No solver found. (network config {config})")
    call = {"api": api, "algorithm": algorithm, "network_config": config, "level": None, "solver": sln.solver_id,
            "kernels": [], "steps": {"network_config_s": t1 - t0, "search_s": t2 - t1}}
    try:
        inv = h.prepare_invoker(sln.invoker_factory, sln.construction_params, algorithm, config, call)
    finally:
        call["steps"]["prepare_invoker_s"] = _now() - t2
    h.invokers.register(inv, config, sln.solver_id, algorithm)
    t3 = _now()
    inv(h, params)
    t4 = _now()
    call["steps"]["run_s"] = t4 - t3
    call["steps"]["total_s"] = t4 - t0
    h.records.append(call)
    if call["level"] is not None:
        _trace_call(call["level"], int(t0 * 1e9), int(t4 * 1e9))
    _log.log_i("ExecutePrimitive", f"{api}: {sln.solver_id} answered at {call['level']} "
                                   f"({call['steps']['total_s'] * 1e3:.3f} ms) for {config}")
