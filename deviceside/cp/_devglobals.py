"""Device globals of a code object (``__hdemu_globals__``, see ``shm_layout.kernels``).

When the command processor loads a code object it binds each declared global, by name, in the
module's namespace to a numpy view of this agent's copy (allocated by the host at module load), so
kernels use module-scope device variables the way HIP kernels use ``__device__`` variables. The views
are also listed under ``__hdemu_device_globals__`` (the counter unit scans them).
"""
from __future__ import annotations

from shm_layout.kernels import NUMPY_TYPES

from ._memory import MemoryFault

__all__ = ["bind_globals"]


def bind_globals(mem, agent: int, ns: dict, meta: list, pid: int) -> None:
    """Bind the globals listed in the metadata (every kernel entry carries the module's table); each
    must be a live allocation of ``pid``, the code object's owner."""
    table = meta[0].get("globals") if meta else None
    views = []
    mem.refresh()
    for name, (ty, count, addrs) in (table or {}).items():
        if agent >= len(addrs):
            raise MemoryFault(f"device global {name!r} has no copy on agent {agent}")
        view = mem.array(addrs[agent], NUMPY_TYPES[ty], pid)
        if view is None or len(view) < count:
            raise MemoryFault(f"device global {name!r} at {addrs[agent]:#x} is not a live allocation")
        ns[name] = view[:count]
        views.append(ns[name])
    ns["__hdemu_device_globals__"] = tuple(views)
