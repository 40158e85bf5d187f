"""Layouts are declared once, with explicit offsets, and validated when they are defined."""
from __future__ import annotations

import numpy as np


class LayoutError(ValueError):
    """A shared layout is inconsistent (overlap, misalignment, wrong size)."""


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


def field_offset(dt: np.dtype, field: str) -> int:
    return dt.fields[field][1]
