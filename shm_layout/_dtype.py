"""Layouts are declared once, with explicit offsets, and validated when they are defined.

Everything another module needs to read or write a shared structure by hand is *derived* from its
checked dtype here, once, at import: ``struct_of`` (a ``struct.Struct`` for a run of fields, gaps as
padding), ``offset_of`` (a field's byte offset) and ``word_of`` (its index in a u16/u32/u64 view).
No struct format string or byte offset of a shared layout is written anywhere else.
"""
from __future__ import annotations

import struct

import numpy as np

from .errors import LayoutError


def checked_dtype(name: str, fields, *, itemsize: int, align_hot: tuple[str, ...] = ()) -> np.dtype:
    """A numpy structured dtype from ``(field, type, offset)`` triples.

    Checks: fields do not overlap, every scalar field has its natural alignment (an index or flag
    straddling a cache line can tear, FACTS), the dtype's itemsize is exactly ``itemsize``, and each
    field named in ``align_hot`` starts its own 64-byte line.
    """
    names, formats, offsets = [], [], []
    spans = []
    for fname, ftype, off in fields:
        dt = np.dtype(ftype)
        base = dt.base if dt.subdtype else dt
        if off % base.itemsize and base.kind in "iuf":
            raise LayoutError(f"{name}.{fname} must be aligned to {base.itemsize} bytes, not at offset {off}")
        if off + dt.itemsize > itemsize:
            raise LayoutError(f"{name}.{fname} ends at {off + dt.itemsize}, past itemsize {itemsize}")
        spans.append((off, off + dt.itemsize, fname))
        names.append(fname)
        formats.append(dt)
        offsets.append(off)
    spans.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        if b0 < a1:
            raise LayoutError(f"{name}.{bn} at {b0} overlaps {name}.{an} ending at {a1}")
    for hot in align_hot:
        off = offsets[names.index(hot)]
        if off % 64:
            raise LayoutError(f"{name}.{hot} must start its own 64-byte line, not offset {off}")
    dt = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": itemsize})
    if dt.itemsize != itemsize:
        raise LayoutError(f"{name} must be {itemsize} bytes, not {dt.itemsize}")
    return dt


def offset_of(dt: np.dtype, field: str) -> int:
    """Byte offset of ``field`` in the structure ``dt``."""
    try:
        return dt.fields[field][1]
    except (KeyError, TypeError):
        raise LayoutError(f"layout has no field {field!r} (fields: {list(dt.names or ())})") from None


field_offset = offset_of


def word_of(dt: np.dtype, field: str, width: int = 8) -> int:
    """Index of ``field`` in a view of the structure as ``width``-byte words (the field must be
    aligned to ``width``)."""
    off = offset_of(dt, field)
    if off % width:
        raise LayoutError(f"field {field!r} at offset {off} is not aligned to {width} bytes")
    return off // width


_CODES = {("i", 1): "b", ("u", 1): "B", ("i", 2): "h", ("u", 2): "H", ("i", 4): "i", ("u", 4): "I",
          ("i", 8): "q", ("u", 8): "Q", ("f", 4): "f", ("f", 8): "d"}


def _code(ft: np.dtype) -> str:
    if ft.subdtype is not None:
        base, shape = ft.subdtype
        return f"{int(np.prod(shape))}{_code(base)}"
    if ft.kind in "SV":
        return f"{ft.itemsize}s"
    try:
        return _CODES[(ft.kind, ft.itemsize)]
    except KeyError:
        raise LayoutError(f"no struct code for a field of type {ft}") from None


def struct_of(dt: np.dtype, first: str | None = None, last: str | None = None) -> struct.Struct:
    """A little-endian ``struct.Struct`` for the fields of ``dt`` from ``first`` to ``last``
    (inclusive, in offset order; default: all of them). Offset 0 of the struct is the offset of
    ``first``; gaps between fields become padding bytes, so ``unpack`` yields exactly one value per
    scalar field (an array field of n scalars yields n values, a bytes field one ``bytes``)."""
    fields = sorted(((off, name, ft) for name, (ft, off, *_rest) in dt.fields.items()), key=lambda f: f[0])
    names = [f[1] for f in fields]
    i0 = names.index(first) if first is not None else 0
    i1 = names.index(last) if last is not None else len(fields) - 1
    if i1 < i0:
        raise LayoutError(f"struct_of: {last!r} comes before {first!r}")
    start = fields[i0][0]
    fmt, pos = "<", start
    for off, _name, ft in fields[i0:i1 + 1]:
        if off > pos:
            fmt += f"{off - pos}x"
        fmt += _code(ft)
        pos = off + ft.itemsize
    st = struct.Struct(fmt)
    assert st.size == pos - start, (fmt, st.size, pos - start)
    return st
