"""Shared translation of rocprofiler-sdk's local-context test vocabulary onto hostside.replay:
``status(fn)`` turns a toggle into upstream's status name, ``loop(*active)`` is
``scoped_local_context_control`` over contexts globally active before the loop, ``armed()`` the
PASS ENTER arm window, and ``override(ctx)`` is ``local_context_override``."""
import contextlib

from hostside import replay
from hostside.replay import _context

SUCCESS = "SUCCESS"


def status(fn) -> str:
    try:
        fn()
    except replay.ReplayError as exc:
        return exc.status or "ERROR"
    return SUCCESS


def contexts(*names):
    return [replay.Context(str(n)) for n in names]


@contextlib.contextmanager
def loop(*active):
    """A replay loop on this thread whose contexts ``active`` were globally active at its start; the
    contexts are stopped and destroyed afterwards."""
    for c in active:
        c.start()
    try:
        with _context.localized():
            yield
    finally:
        _context.set_toggles_armed(False)
        for c in active:
            c.destroy()


def set_armed(on: bool) -> None:
    _context.set_toggles_armed(on)


override = _context.local_override
has_overrides = _context.has_overrides
