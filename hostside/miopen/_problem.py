"""The pooling problem (MIOpen's pooling::ProblemDescription) with its network config, the invoke
parameters, and what a solver returns (ConvSolution of KernelInfo and an invoker factory)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ._tensor import miopenTensorDescriptor_t, packed_strides
from ._types import pooling_op_id

FORWARD, BACKWARD = "Forward", "Backward"
_configs: dict[tuple, str] = {}


def _vec(v) -> str:
    return "x".join(str(i) for i in v)


@dataclass
class Problem:
    direction: str
    pooling: object                 # miopenPoolingDescriptor_t (its fields are read, never changed)
    x: miopenTensorDescriptor_t
    y: miopenTensorDescriptor_t
    dx: miopenTensorDescriptor_t | None = None
    dy: miopenTensorDescriptor_t | None = None
    save_index: bool = False
    _config: str | None = field(default=None, init=False, repr=False, compare=False)

    def network_config(self) -> str:
        """MakeNetworkConfig: m<op>_dt<type>_ker<..>_str<..>_pad<..>_it<index type>_im<index mode>
        [_is<save index>]_xd<..>_xs<..>_yd<..>_ys<..>[_dxd.._dxs.._dyd.._dys..].

        Made once per problem and kept on it: the API keeps the problem per (descriptors, their
        versions), so a call with unchanged descriptors gets the same string MIOpen would rebuild."""
        s = self._config
        if s is not None:
            return s
        p = self.pooling
        if self.direction == FORWARD:
            key = (0, p.key(), self.x.key(), self.y.key(), self.save_index)
        else:
            key = (1, p.key(), self.x.key(), self.y.key(), self.dx.key(), self.dy.key())
        s = _configs.get(key)
        if s is None:
            s = (f"m{pooling_op_id(p.mode)}_dt{int(self.x.type)}_ker{_vec(p.lens)}_str{_vec(p.strides)}"
                 f"_pad{_vec(p.pads)}_it{int(p.index_type)}_im{int(p.ws_index_mode)}")
            if self.direction == FORWARD:
                s += f"_is{int(bool(self.save_index))}"
            s += f"_xd{_vec(self.x.lens)}_xs{_vec(self.x.strides)}_yd{_vec(self.y.lens)}_ys{_vec(self.y.strides)}"
            if self.direction == BACKWARD:
                s += (f"_dxd{_vec(self.dx.lens)}_dxs{_vec(self.dx.strides)}_dyd{_vec(self.dy.lens)}"
                      f"_dys{_vec(self.dy.strides)}")
            if len(_configs) > 4096:
                _configs.clear()
            _configs[key] = s
        self._config = s
        return s

    def with_descs(self, x, y) -> "Problem":
        return replace(self, x=x, y=y)


@dataclass
class FwdInvokeParams:
    x_desc: miopenTensorDescriptor_t
    x: int
    y_desc: miopenTensorDescriptor_t
    y: int
    pooling: object
    workspace: int | None
    workspace_size: int


@dataclass
class BwdInvokeParams:
    dx_desc: miopenTensorDescriptor_t
    dx: int
    dy_desc: miopenTensorDescriptor_t
    dy: int
    pooling: object
    workspace: int | None


@dataclass
class KernelInfo:
    """One kernel of a solution: source file, entry point, build options (-D defines), work sizes."""
    kernel_file: str
    kernel_name: str
    comp_options: str
    l_wk: tuple
    g_wk: tuple


@dataclass
class ConvSolution:
    solver_id: str
    construction_params: list = field(default_factory=list)
    invoker_factory: object = None
    workspace_size: int = 0


def default_layout(ndims: int) -> str:
    return "NCHW" if ndims == 4 else "NCDHW"


def transposed_desc(d: miopenTensorDescriptor_t) -> miopenTensorDescriptor_t:
    """``d`` with packed strides in its default layout (NCHW / NCDHW): what the transposing solvers
    hand to the inner solver."""
    t = miopenTensorDescriptor_t()
    t._set(d.type, d.lens, packed_strides(d.lens))
    return t


def ncdhw(values, fill=1) -> tuple:
    """GetNCDHW: (n, c, d, h, w) of 4-D or 5-D lengths/strides (d = ``fill`` for 4-D)."""
    v = tuple(values)
    return v if len(v) == 5 else (v[0], v[1], fill, v[2], v[3])
