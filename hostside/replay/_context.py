"""Profiling contexts, localized context control and tool-callback calls (``Context`` is public as
``hostside.replay.Context``).

State shared between threads: each context's global state and services, and the registry of
contexts, all behind ``_lock``. Unreferenced contexts drop out of the registry by themselves (a
``WeakSet``); a context with ``DispatchCounting`` services attached is held until ``destroy()``, so
its counting never stops at the whim of the garbage collector. Per-thread state (``_tls``): the
depth of tool callbacks the thread is in, whether its toggles are armed (PASS ENTER only), and, inside
a replay loop, the loop's base state and local overrides.
"""
from __future__ import annotations

import contextlib
import itertools
import threading
import traceback
import warnings
import weakref

from ._types import CONTEXT_ERROR, CONTEXT_NOT_STARTED, ReplayError

__all__ = ["Context", "call_tool", "in_callback", "localized", "active_services", "local_override",
           "has_overrides", "set_toggles_armed", "live_contexts"]

_tls = threading.local()
_lock = threading.Lock()
_contexts: "weakref.WeakSet[Context]" = weakref.WeakSet()   # every live context
_observed: list["Context"] = []     # contexts with services, in creation order; held until destroy()
_seq = itertools.count()


class Context:
    """A profiling context (rocprofiler_context_id_t). Services attached to it observe dispatches
    while it is active. ``start``/``stop`` change the global state, except on a thread inside a
    replay loop, where they are local toggles: legal only during that thread's PASS ENTER callback,
    sticky for the rest of the loop, never visible to other threads, last write wins, and a context
    that was not active when the loop began can be neither started nor stopped (CONTEXT_NOT_STARTED)."""

    def __init__(self, name: str = ""):
        self.name = name
        self._active = False
        self._services: tuple = ()
        self._destroyed = False
        with _lock:
            self._seq = next(_seq)
            _contexts.add(self)

    def _toggle(self, on: bool) -> None:
        ov = getattr(_tls, "overrides", None)
        if ov is None:
            with _lock:
                if self._destroyed:
                    raise ReplayError(f"context {self.name!r} was destroyed")
                self._active = on
            return
        if not getattr(_tls, "armed", False):
            raise ReplayError(f"context {self.name!r}: start/stop inside a replay loop is legal only during "
                              f"the PASS ENTER callback", status=CONTEXT_ERROR)
        if not _tls.base.get(self, False):
            raise ReplayError(f"context {self.name!r} was not active when the replay loop began; a pass "
                              f"cannot {'start' if on else 'stop'} it", status=CONTEXT_NOT_STARTED)
        ov[self] = on                      # last write wins; sticky for the rest of the loop

    def start(self) -> None:
        self._toggle(True)

    def stop(self) -> None:
        self._toggle(False)

    def destroy(self) -> None:
        """Stop the context for good and detach its services; it leaves the registry (idempotent)."""
        with _lock:
            self._destroyed = True
            self._active = False
            self._services = ()
            _contexts.discard(self)
            if self in _observed:
                _observed.remove(self)

    def _attach(self, service) -> None:
        """Attach a DispatchCounting service (from then on the registry holds the context)."""
        with _lock:
            if self._destroyed:
                raise ReplayError(f"context {self.name!r} was destroyed")
            self._services = self._services + (service,)
            if self not in _observed:
                _observed.append(self)
                _observed.sort(key=lambda c: c._seq)

    @property
    def services(self) -> tuple:
        """The DispatchCounting services attached to this context, in attach order."""
        with _lock:
            return self._services

    @property
    def active(self) -> bool:
        """Active for dispatches submitted by this thread (the loop's override, else global)."""
        ov = getattr(_tls, "overrides", None)
        if ov and self in ov:
            return ov[self]
        with _lock:
            return self._active

    @property
    def globally_active(self) -> bool:
        with _lock:
            return self._active

    def __repr__(self):
        return f"<Context {self.name!r} {'active' if self.globally_active else 'inactive'}>"


def live_contexts() -> list[Context]:
    """The contexts that exist now (unreferenced ones have dropped out), in creation order."""
    with _lock:
        return sorted(_contexts, key=lambda c: c._seq)


def active_services() -> list:
    """The DispatchCounting services whose context is active for this thread's dispatches, in
    context creation order."""
    ov = getattr(_tls, "overrides", None)
    with _lock:
        if not _observed:
            return []
        if ov:
            return [s for c in _observed if ov.get(c, c._active) for s in c._services]
        return [s for c in _observed if c._active for s in c._services]


@contextlib.contextmanager
def localized():
    """Localized context control for one replay loop on this thread: start/stop become local
    toggles, based on the global state at entry; both are dropped on exit, whatever happens."""
    with _lock:
        base = {c: c._active for c in _contexts}
    _tls.base = base
    _tls.overrides = {}
    try:
        yield
    finally:
        _tls.overrides = None
        _tls.base = None


def local_override(ctx: Context):
    """This thread's loop override of ``ctx`` (True/False), or None (no loop, or not toggled)."""
    ov = getattr(_tls, "overrides", None)
    if ov is None:
        return None
    return ov.get(ctx)


def has_overrides() -> bool:
    """True inside a replay loop on this thread once a toggle has been recorded."""
    return bool(getattr(_tls, "overrides", None))


def set_toggles_armed(armed: bool) -> None:
    """Open or close the PASS ENTER arm window by hand (the loop does it through ``call_tool``)."""
    _tls.armed = bool(armed)


def in_callback() -> bool:
    """True on a thread that is inside a tool callback (its dispatches are reentrant)."""
    return bool(getattr(_tls, "in_callback", 0))


def call_tool(fn, *args, armed: bool = False):
    """Call a tool callback: marks the thread as inside a callback (its dispatches are reentrant),
    arms the toggles for PASS ENTER through a guard, and reports (does not propagate) exceptions as a
    RuntimeWarning with the traceback."""
    depth = getattr(_tls, "in_callback", 0)
    _tls.in_callback = depth + 1
    prev = getattr(_tls, "armed", False)
    _tls.armed = armed
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - a broken tool must not break the application's dispatch
        warnings.warn("kernel replay: a tool callback raised:\n" + traceback.format_exc(), RuntimeWarning,
                      stacklevel=2)
        return None
    finally:
        _tls.armed = prev
        _tls.in_callback = depth
