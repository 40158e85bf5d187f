"""Tensor descriptors: MIOpen's TensorDescriptor (type, lengths, strides) and its C API.

Facts kept from MIOpen (src/tensor.cpp): lengths and strides must be > 0 (miopenStatusBadParm); no
lengths, or strides missing where the call needs them, is miopenStatusInvalidValue; a descriptor set
without strides is packed in its default layout (NCHW, NCDHW); the layout string (``GetLayout_str``)
is the dimension letters ordered by decreasing stride (ties by decreasing length, stable), and
``IsPossibleLayout4D5D(layout)`` asks only that the strides read in ``layout``'s order do not increase.
"""
from __future__ import annotations

from ._errors import MiopenError, live_descriptor, miopenStatus_t, set_descriptor
from ._types import DATA_SIZE, miopenDataType_t, miopenTensorLayout_t, enum_value

__all__ = ["miopenTensorDescriptor_t", "miopenCreateTensorDescriptor", "miopenSet4dTensorDescriptor",
           "miopenSetNdTensorDescriptorWithLayout", "miopenSet4dTensorDescriptorEx", "miopenSetTensorDescriptor",
           "miopenSetTensorDescriptorV2", "miopenGetTensorDescriptor",
           "miopenGet4dTensorDescriptor", "miopenGetTensorDescriptorSize", "miopenDestroyTensorDescriptor"]

_BAD = miopenStatus_t.miopenStatusBadParm
_INVALID = miopenStatus_t.miopenStatusInvalidValue


def _default_labels(n: int) -> str:
    return {4: "NCHW", 5: "NCDHW"}.get(n, "")


def packed_strides(lens, order: str | None = None, labels: str | None = None) -> tuple[int, ...]:
    """Packed strides of ``lens`` (in ``labels`` order) stored in ``order`` (tensor_layout_to_strides)."""
    n = len(lens)
    if order is None or labels is None or order == labels:
        out, s = [0] * n, 1
        for i in range(n - 1, -1, -1):
            out[i] = s
            s *= lens[i]
        return tuple(out)
    out, s = [0] * n, 1
    for ch in reversed(order):
        i = labels.index(ch)
        out[i] = s
        s *= lens[i]
    return tuple(out)


class miopenTensorDescriptor_t:
    """A tensor descriptor (``miopenCreateTensorDescriptor``); set it before use."""

    __slots__ = ("type", "lens", "strides", "destroyed", "_layout", "_key", "ver", "vec")

    def __init__(self):
        self.type = None
        self.lens = ()
        self.strides = ()
        self.destroyed = False
        self._layout = None
        self._key = None
        self.ver = 0            # bumped by every set: what callers that memoise checks compare
        self.vec = 1            # vector length of an NCHWc / CHWNc layout (elements per innermost position)

    def _set(self, dt: int, lens, strides, vec: int = 1) -> None:
        self.type, self.lens, self.strides, self.vec = dt, tuple(lens), tuple(strides), vec
        self._layout = None
        self._key = None
        self.ver += 1

    # -- what the solvers ask ---------------------------------------------------------------------------
    @property
    def num_dims(self) -> int:
        return len(self.lens)

    @property
    def element_size(self) -> int:
        n = self.vec
        for v in self.lens:
            n *= v
        return n

    @property
    def element_space(self) -> int:
        return sum((l - 1) * s for l, s in zip(self.lens, self.strides)) + self.vec

    @property
    def num_bytes(self) -> int:
        return self.element_space * DATA_SIZE[self.type]

    @property
    def packed(self) -> bool:
        return self.element_size == self.element_space

    def layout_str(self) -> str:
        """GetLayout_str: e.g. "NCHW", "NHWC", "NCDHW", "NDHWC" ("UNKNOWN" outside 4-D/5-D)."""
        if self._layout is None:
            labels = _default_labels(self.num_dims)
            if not labels:
                self._layout = "UNKNOWN"
            else:
                self._layout = "".join(labels[i] for i in _stable_desc(self.strides, self.lens))
        return self._layout

    def is_possible_layout(self, layout: str) -> bool:
        """IsPossibleLayout4D5D: strides read in ``layout``'s letter order never increase."""
        labels = _default_labels(self.num_dims)
        if not labels or len(layout) != self.num_dims:
            return False
        s = [self.strides[labels.index(ch)] for ch in layout]
        return all(s[i] >= s[i + 1] for i in range(len(s) - 1))

    def key(self) -> tuple:
        if self._key is None:
            self._key = (self.type, self.lens, self.strides)
        return self._key

    def __repr__(self):
        if self.type is None:
            return "<miopenTensorDescriptor_t (not set)>"
        return f"<miopenTensorDescriptor_t {miopenDataType_t(self.type).name} {self.lens} strides {self.strides}>"


def _stable_desc(strides, lens) -> list[int]:
    idx = list(range(len(strides)))
    # a stable sort by descending (stride, length): sort ascending on the negated key keeps ties in order
    idx.sort(key=lambda i: (-strides[i], -lens[i]))
    return idx


def tensor(desc, what: str = "tensorDesc") -> miopenTensorDescriptor_t:
    """``desc`` as a set, live tensor descriptor, or miopenStatusBadParm naming ``what``."""
    return set_descriptor(desc, miopenTensorDescriptor_t, what, "type",
                          "miopenSet4dTensorDescriptor / miopenSetTensorDescriptor")


def _live(desc, what: str = "tensorDesc") -> miopenTensorDescriptor_t:
    return live_descriptor(desc, miopenTensorDescriptor_t, what)


def _int_list(values, what: str, status=_BAD) -> list[int]:
    try:
        out = [v for v in values]
    except TypeError:
        raise MiopenError(_INVALID, f"{what} must be a sequence of ints, not {values!r}") from None
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise MiopenError(status, f"{what} must hold ints, not {v!r}")
    return [int(v) for v in out]


def _check_positive(values, what: str) -> None:
    if not values or any(v <= 0 for v in values):
        raise MiopenError(_BAD, f"{what} must be > 0, not {list(values)}")


def miopenCreateTensorDescriptor() -> miopenTensorDescriptor_t:
    return miopenTensorDescriptor_t()


def miopenSet4dTensorDescriptor(tensorDesc, dataType, n: int, c: int, h: int, w: int) -> None:
    d = _live(tensorDesc)
    dt = enum_value(miopenDataType_t, dataType, "dataType")
    lens = _int_list((n, c, h, w), "n, c, h, w")
    _check_positive(lens, "Lengths (n, c, h, w)")
    d._set(dt, lens, packed_strides(lens))


_LAYOUT_STR = {0: "NCHW", 1: "NHWC", 2: "CHWN", 3: "NCHWc", 4: "NCHWc", 5: "CHWNc", 6: "CHWNc", 7: "NCDHW",
               8: "NDHWC"}
_VECTOR_LENGTH = {3: 4, 4: 8, 5: 4, 6: 8}


def miopenSetNdTensorDescriptorWithLayout(tensorDesc, dataType, tensorLayout, lens, num_lens: int) -> None:
    """Lengths ``lens`` (``num_lens`` of them, in NCHW / NCDHW order) stored packed in ``tensorLayout``
    (TensorDescriptor::MakeDescriptor with a layout): a layout of the other rank is miopenStatusBadParm;
    NCHWc4/c8 and CHWNc4/c8 divide C by the vector length (which must divide it) and keep it innermost,
    CHWNc reorders the lengths to C, H, W, N as MIOpen does."""
    d = _live(tensorDesc)
    if lens is None or isinstance(num_lens, bool) or not isinstance(num_lens, int) or num_lens <= 0:
        raise MiopenError(_INVALID, f"lens must be given and num_lens must be > 0, not num_lens={num_lens!r}, "
                                    f"lens={lens!r}")
    dt = enum_value(miopenDataType_t, dataType, "dataType")
    layout = enum_value(miopenTensorLayout_t, tensorLayout, "tensorLayout")
    dims = _int_list(lens, "lens", _INVALID)
    if len(dims) < num_lens:
        raise MiopenError(_INVALID, f"lens has {len(dims)} lengths, num_lens says {num_lens}")
    dims = dims[:num_lens]
    want = 5 if layout in (7, 8) else 4
    if num_lens != want:
        raise MiopenError(_BAD, f"Unsupported layout: {miopenTensorLayout_t(layout).name} needs {want} lengths, "
                                f"not {num_lens}")
    _check_positive(dims, "Lengths (lens)")
    vec = _VECTOR_LENGTH.get(int(layout), 1)
    if vec > 1:
        if layout in (5, 6):                    # CHWNc: lengths stored C, H, W, N
            dims = [dims[1], dims[2], dims[3], dims[0]]
        c_pos = 0 if layout in (5, 6) else 1
        if dims[c_pos] % vec:
            raise MiopenError(_BAD, f"Wrong C, C % Vect != 0: C={dims[c_pos]}, vector length {vec}")
        dims[c_pos] //= vec
        strides = [s * vec for s in packed_strides(dims)]
    else:
        strides = packed_strides(dims, _LAYOUT_STR[int(layout)], _default_labels(num_lens))
    d._set(dt, dims, strides, vec)


def miopenSet4dTensorDescriptorEx(tensorDesc, dataType, n: int, c: int, h: int, w: int,
                                  nStride: int, cStride: int, hStride: int, wStride: int) -> None:
    d = _live(tensorDesc)
    dt = enum_value(miopenDataType_t, dataType, "dataType")
    lens = _int_list((n, c, h, w), "n, c, h, w")
    strides = _int_list((nStride, cStride, hStride, wStride), "nStride, cStride, hStride, wStride")
    _check_positive(lens, "Lengths (n, c, h, w)")
    _check_positive(strides, "Strides (nStride, cStride, hStride, wStride)")
    d._set(dt, lens, strides)


def miopenSetTensorDescriptor(tensorDesc, dataType, nbDims: int, dimsA, stridesA=None) -> None:
    """Lengths ``dimsA`` (``nbDims`` of them) and strides ``stridesA`` (None: packed, as MIOpen's nullptr)."""
    d = _live(tensorDesc)
    dt = enum_value(miopenDataType_t, dataType, "dataType")
    if dimsA is None or isinstance(nbDims, bool) or not isinstance(nbDims, int) or nbDims <= 0:
        raise MiopenError(_INVALID, f"dimsA must be given and nbDims must be > 0, not nbDims={nbDims!r}, "
                                    f"dimsA={dimsA!r}")
    lens = _int_list(dimsA, "dimsA", _INVALID)
    if len(lens) < nbDims:
        raise MiopenError(_INVALID, f"dimsA has {len(lens)} lengths, nbDims says {nbDims}")
    lens = lens[:nbDims]
    _check_positive(lens, "Lengths (dimsA)")
    if stridesA is None:
        d._set(dt, lens, packed_strides(lens))
        return
    strides = _int_list(stridesA, "stridesA", _INVALID)
    if len(strides) < nbDims:
        raise MiopenError(_BAD, f"Lengths and strides dimensions must be equal: {nbDims} lengths, "
                                f"{len(strides)} strides")
    strides = strides[:nbDims]
    _check_positive(strides, "Strides (stridesA)")
    d._set(dt, lens, strides)


def miopenSetTensorDescriptorV2(tensorDesc, dataType, nbDims: int, dimsA, stridesA=None) -> None:
    """miopenSetTensorDescriptor with size_t lengths and strides (the same checks here: Python ints)."""
    miopenSetTensorDescriptor(tensorDesc, dataType, nbDims, dimsA, stridesA)


def miopenGetTensorDescriptor(tensorDesc) -> tuple:
    """(dataType, dimsA, stridesA)."""
    d = tensor(tensorDesc)
    return miopenDataType_t(d.type), list(d.lens), list(d.strides)


def miopenGet4dTensorDescriptor(tensorDesc) -> tuple:
    """(dataType, n, c, h, w, nStride, cStride, hStride, wStride) of a 4-D descriptor."""
    d = tensor(tensorDesc)
    if d.num_dims != 4:
        raise MiopenError(_BAD, f"miopenGet4dTensorDescriptor needs a 4-D descriptor, this one has {d.num_dims} "
                                f"dimensions {d.lens}")
    return (miopenDataType_t(d.type), *d.lens, *d.strides)


def miopenGetTensorDescriptorSize(tensorDesc) -> int:
    """The number of dimensions."""
    return tensor(tensorDesc).num_dims


def miopenDestroyTensorDescriptor(tensorDesc) -> None:
    d = _live(tensorDesc)
    d.destroyed = True
