"""``Dispatch``: one kernel dispatch as the command layer submits it, and ``check_dispatch``, which
tells whether it fits its packet before anything is reserved (the interceptor's path)."""
from __future__ import annotations

from dataclasses import dataclass

from shm_layout import aql as A
from shm_layout import layouts as L

__all__ = ["Dispatch", "check_dispatch"]

#: a dispatch packet's geometry fields (workgroup x, y, z, reserved0, grid x, y, z): checks a
#: ``Dispatch`` before the interceptor sees it
_GEOMETRY = L.struct_of(A.kernel_dispatch_packet, "workgroup_size_x", "grid_size_z")


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One kernel dispatch as the command layer submits it: the kernel object handle, its
    ``shm_layout.kernels.Signature``, the argument values, grid and block (work-items), group
    segment bytes and dimensions."""
    kobj: int
    sig: object
    args: tuple
    grid: tuple
    block: tuple
    group_segment: int = 0
    dims: int = 3


def check_dispatch(d: Dispatch) -> None:
    """Raise ``struct.error`` (or ``SignatureError``) if ``d``'s arguments or geometry do not fit
    its packet, as writing it would; nothing is written."""
    if d.sig.size:
        d.sig.pack_into(bytearray(d.sig.size), 0, d.args)
    b, g = d.block, d.grid
    _GEOMETRY.pack(b[0], b[1], b[2], 0, g[0], g[1], g[2])
