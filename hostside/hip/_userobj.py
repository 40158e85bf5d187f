"""User objects: reference-counted host resources whose destructor runs when the last reference goes,
held by the application and by graphs (and the execs instantiated from them), as in CLR.

* ``hipUserObjectCreate`` makes an object with ``initialRefcount`` references; ``hipUserObjectRetain`` /
  ``hipUserObjectRelease`` add and drop references. The release that drops the last one runs
  ``destroy(ptr)`` in the releasing thread (as CLR's ``~UserObject``), exactly once.
* A graph owns references: ``hipGraphRetainUserObject`` (``hipGraphUserObjectMove``: take over
  references the caller already holds instead of adding new ones), ``hipGraphReleaseUserObject``.
  ``hipGraphDestroy`` drops what the graph owns. A copy of a graph (``hipGraphClone``, a child graph
  node) owns one new reference per object of the original, and so does an exec of it
  (``hipGraphInstantiate``, dropped by ``hipGraphExecDestroy`` after its launches are done).
* CLR's quirks are kept: releasing more references than the object has, or using an object whose
  destructor already ran, is a successful no-op.

The graph model calls ``copy_refs`` through ``_graph_types._clone_hooks`` (it cannot import this module).
"""
from __future__ import annotations

import logging
import threading
import weakref

from ._errors import _api, _raise, hipError_t
from ._graph_types import _T, _clone_hooks, _graph

__all__ = ["hipUserObject_t", "hipUserObjectNoDestructorSync", "hipGraphUserObjectMove", "hipUserObjectCreate",
           "hipUserObjectRetain", "hipUserObjectRelease", "hipGraphRetainUserObject",
           "hipGraphReleaseUserObject"]

_log = logging.getLogger("hdemu.hip")

#: hipUserObjectFlags: the only flag, and the one hipUserObjectCreate requires (as CLR)
hipUserObjectNoDestructorSync = 0x1
#: hipUserObjectRetainFlags: the graph takes over the caller's references
hipGraphUserObjectMove = 0x1
_INT_MAX = 2 ** 31 - 1

_lock = threading.RLock()
#: graph (or exec) -> {user object: references it owns}
_owned: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class hipUserObject_t:
    """A user object: ``destroy(ptr)`` runs once, when its last reference is released."""

    def __init__(self, ptr, destroy, refs: int, flags: int):
        self.ptr, self.destroy, self.flags = ptr, destroy, flags
        self.refs = refs
        self.alive = True

    def __repr__(self):
        return f"<hipUserObject_t refs={self.refs}{'' if self.alive else ' destroyed'}>"


def _count(count, what="count") -> int:
    if type(count) is not int or not 0 < count <= _INT_MAX:
        _raise(hipError_t.hipErrorInvalidValue, f"{what} must be an int in 1..INT_MAX, not {count!r}")
    return count


def _obj(obj) -> hipUserObject_t:
    if not isinstance(obj, hipUserObject_t):
        _raise(hipError_t.hipErrorInvalidValue, f"object must be a hipUserObject_t, not {obj!r}")
    return obj


def _drop(u: hipUserObject_t, count: int) -> None:
    """Release ``count`` references (the lock held); the last one runs the destructor, after the lock
    is let go, through ``_run_destructors``."""
    u.refs -= count
    if u.refs == 0 and u.alive:
        u.alive = False
        for table in list(_owned.values()):     # no graph keeps a dead object (CLR removes it too)
            table.pop(u, None)
        _pending.append(u)


_pending: list = []


def _run_destructors() -> None:
    """Run the destructors of the objects whose last reference went, in this thread (as CLR)."""
    while True:
        with _lock:
            if not _pending:
                return
            u = _pending.pop(0)
        try:
            u.destroy(u.ptr)
        except Exception:           # noqa: BLE001 - a user callback must not break the release
            _log.exception("the destructor of %r raised", u)


@_api
def hipUserObjectCreate(ptr, destroy, initialRefcount: int, flags: int) -> hipUserObject_t:
    """A user object holding ``initialRefcount`` references; ``destroy(ptr)`` runs when the last one is
    released. ``flags`` must be ``hipUserObjectNoDestructorSync``; no callable ``destroy``, a count of 0
    or over INT_MAX, or another flag is hipErrorInvalidValue (as CLR). ``ptr`` may be None."""
    if flags != hipUserObjectNoDestructorSync or not callable(destroy):
        _raise(hipError_t.hipErrorInvalidValue,
               f"need a callable destroy and flags hipUserObjectNoDestructorSync, not {destroy!r}, {flags!r}")
    return hipUserObject_t(ptr, destroy, _count(initialRefcount, "initialRefcount"), flags)


@_api
def hipUserObjectRetain(object, count: int = 1) -> None:
    """Add ``count`` references (no-op on an object already destroyed, as CLR)."""
    u, n = _obj(object), _count(count)
    with _lock:
        if u.alive:
            u.refs += n


@_api
def hipUserObjectRelease(object, count: int = 1) -> None:
    """Drop ``count`` references; dropping the last runs the destructor in this thread. Releasing more
    references than the object has (or a destroyed object) is a successful no-op, as in CLR."""
    u, n = _obj(object), _count(count)
    with _lock:
        if u.alive and n <= u.refs:
            _drop(u, n)
    _run_destructors()


@_api
def hipGraphRetainUserObject(graph, object, count: int = 1, flags: int = 0) -> None:
    """The graph takes ``count`` references of ``object``: new ones (``flags`` 0) or, with
    ``hipGraphUserObjectMove``, references the caller already holds. Other flags, a count of 0 or
    over INT_MAX are hipErrorInvalidValue; a destroyed object is a successful no-op (as CLR)."""
    if object is None or graph is None:
        _raise(hipError_t.hipErrorInvalidValue, "graph and object must not be None")
    g, u, n = _graph(graph), _obj(object), _count(count)
    if flags not in (0, hipGraphUserObjectMove):
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0 or hipGraphUserObjectMove, not {flags!r}")
    with _lock:
        table = _owned.setdefault(g, {})
        if not u.alive and u not in table:
            return
        if flags != hipGraphUserObjectMove and u.alive:
            u.refs += n
        table[u] = table.get(u, 0) + n


@_api
def hipGraphReleaseUserObject(graph, object, count: int = 1) -> None:
    """Drop ``count`` of the references the graph holds; the last reference of the object runs its
    destructor. An object the graph does not hold, or a count over the object's references, is a
    successful no-op (as CLR)."""
    if object is None or graph is None:
        _raise(hipError_t.hipErrorInvalidValue, "graph and object must not be None")
    g, u, n = _graph(graph), _obj(object), _count(count)
    with _lock:
        table = _owned.get(g, {})
        if u not in table or u.refs < n:
            return
        table[u] -= n
        if table[u] <= 0 or u.refs == n:
            del table[u]
        _drop(u, n)
    _run_destructors()


# -- the graph model's hooks ----------------------------------------------------------------------
def copy_refs(src, dst) -> None:
    """``dst`` is a copy of graph ``src`` (a clone, a child graph node's graph, an exec): it owns one
    new reference to each live object ``src`` owns (CLR's Graph::clone)."""
    with _lock:
        table = _owned.get(src)
        if not table:
            return
        mine = _owned.setdefault(dst, {})
        for u in table:
            if u.alive:
                u.refs += 1
                mine[u] = mine.get(u, 0) + 1


def retain_tree(graph, holder) -> None:
    """``holder`` (an exec) owns one reference per object that ``graph`` or the graph of one of its
    child graph nodes (recursively) owns, as CLR's exec owns a clone of the graph."""
    todo, seen = [graph], set()
    while todo:
        g = todo.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        copy_refs(g, holder)
        todo.extend(n.spec.graph for n in list(g.nodes) if n.type == _T.hipGraphNodeTypeGraph)


def release_all(holder) -> None:
    """``holder`` (a destroyed graph or exec) drops every reference it owns; objects whose last
    reference that was have their destructors run in this thread. A graph's child graph nodes' graphs
    go with it."""
    todo = [holder]
    with _lock:
        while todo:
            h = todo.pop()
            table = _owned.pop(h, None)
            for u, n in (table or {}).items():
                if u.alive and n <= u.refs:     # CLR skips an object it owns more of than exist
                    _drop(u, n)
            todo.extend(n.spec.graph for n in list(getattr(h, "nodes", ())) if n.type == _T.hipGraphNodeTypeGraph)
    _run_destructors()


_clone_hooks.append(copy_refs)
