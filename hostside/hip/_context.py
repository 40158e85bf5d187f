"""Per-process HIP state: the HSA runtime, each device's null stream and the streams created, the
current device (per thread), ``hipStream_t`` and the stream lookup every stream argument goes through.

**The legacy null stream.** ``None``, 0 and ``hipStreamLegacy`` name the current device's null stream,
which is ordered with every *blocking* stream of its device (created without ``hipStreamNonBlocking``;
``hipStreamPerThread`` is one): a command on the null stream waits for all work submitted before it
to the device's blocking streams, and the next command on a blocking stream waits for the work
submitted before it to the null stream. The lookup of a stream that is about to take a command
(``_get_stream``) adds the waits, through order points (``_order.OrderPoint``), and only when needed:
a stream whose work is done is not waited for, and a blocking stream checks one counter (the null
stream's ``commands``) against the value it saw last, so a launch on a created stream costs one
comparison more when the null stream is not in use. Non-blocking streams are never ordered with it.
Queries and synchronisations look streams up with ``_peek_stream`` (no waits added).
"""
from __future__ import annotations

import threading

from .. import hsa as _hsa
from .. import platform as _platform  # noqa: F401  (registers the embedded-platform factory with hsa)
from ..clr import VirtualGPU
from ..hsa import HostWaitTimeout, HsaError
from ._capture_rules import implicit_capture_check
from ._errors import _from_hsa, _raise, hipError_t
from ._order import OrderPoint

__all__ = ["hipStream_t", "hipStreamDefault", "hipStreamNonBlocking", "hipStreamLegacy", "hipStreamPerThread"]

hipStreamDefault = 0
hipStreamNonBlocking = 1


class _StreamHandle:
    """A special stream handle of HIP (``hipStreamLegacy``, ``hipStreamPerThread``)."""

    def __init__(self, name: str, value: int):
        self.name, self.value = name, value

    def __repr__(self):
        return self.name

    def __int__(self):
        return self.value


#: The legacy null stream of the current device, by name (HIP's ``(hipStream_t)1``)
hipStreamLegacy = _StreamHandle("hipStreamLegacy", 1)
#: This thread's default stream of the current device (HIP's ``(hipStream_t)2``): a blocking stream
#: created on first use, one per thread and device
hipStreamPerThread = _StreamHandle("hipStreamPerThread", 2)


class _State:
    """Per-process HIP state: the runtime and each device's null stream."""

    def __init__(self):
        self.rt = _hsa.runtime()
        self.null_streams: dict[int, hipStream_t] = {}
        self.streams: dict = {}                 # the live created streams, in creation order (values None)
        self.blocking: dict[int, list] = {}     # device -> its live blocking streams (null excluded)
        self.null_holders: dict[int, _NullHolder] = {}
        self.peer_access: set = set()           # (device, peer) pairs enabled by hipDeviceEnablePeerAccess
        self.lock = threading.Lock()


_state: _State | None = None
_state_lock = threading.Lock()
_tls = threading.local()        # .device: this thread's current device


def _st() -> _State:
    """The process's HIP state, (re)created on first use and after the runtime was shut down."""
    global _state
    s = _state
    if s is None or s.rt.closed:
        with _state_lock:
            if _state is None or _state.rt.closed:
                try:
                    _state = _State()
                except HsaError as exc:
                    raise _from_hsa(exc) from exc
            s = _state
    return s


def _reset() -> None:
    """Forget the state and shut the runtime down (hipDeviceReset)."""
    global _state
    with _state_lock:
        old, _state = _state, None
    if old is not None:
        # every stream goes with the device (CLR destroys them): a handle kept past the reset is an
        # error naming that (hipErrorContextIsDestroyed), not a "command processor gone" at its use
        with old.lock:
            every = list(old.streams) + list(old.null_streams.values())
        for s in every:
            s.destroyed = True
        old = every = s = None  # nothing here may hold the runtime while it is collected (hsa.shutdown)
    _hsa.shutdown()


def _current_device() -> int:
    return getattr(_tls, "device", 0)


def _set_current_device(device: int) -> None:
    _tls.device = device


class _Never:
    """Stands in for a null stream's command layer that does not exist (yet): its ``commands`` never
    change, so the launch path's comparison never sends a stream to ``_order_after_null`` for it."""
    commands = 0


_NEVER = _Never()


class _NullHolder:
    """Where a device's blocking streams find its null stream's command layer: ``v`` is ``_NEVER``
    until the null stream is first used (it is created lazily, so it takes no queue, and no engine
    placement, from programs that never use it), then its VirtualGPU."""
    __slots__ = ("v",)

    def __init__(self, v=_NEVER):
        self.v = v


_NO_NULL = _NullHolder()        # a non-blocking stream's (and the null stream's own): never changes


class hipStream_t:
    """A stream: an in-order virtual GPU on one device. ``flags`` (hipStreamDefault or
    hipStreamNonBlocking) and ``priority`` are what it was created with."""

    def __init__(self, device: int, vgpu: VirtualGPU, null: bool = False, flags: int = 0, priority: int = 0,
                 order=None):
        self.device = device
        self.vgpu = vgpu
        self.null = null
        self.flags = flags
        self.priority = priority
        self.destroyed = False
        self.capture = None     # set while capturing (graphs)
        self.point = OrderPoint(vgpu)   # where other streams wait for this one (legacy ordering)
        # legacy ordering: the holder of the null stream's command layer (``order.v``) and its
        # ``commands`` when this stream last waited for it (non-blocking and null streams: _NO_NULL)
        self.order = order if order is not None else _NO_NULL
        self.seen = -1 if null else 0       # the null stream never takes the launch fast path

    @property
    def blocking(self) -> bool:
        return not self.null and not self.flags & hipStreamNonBlocking

    def __repr__(self):
        return f"<hipStream_t device={self.device} queue={self.vgpu.queue.slot}{' null' if self.null else ''}>"


def _null_stream(st: _State, dev: int) -> hipStream_t:
    s = st.null_streams.get(dev)
    if s is None:
        with st.lock:
            s = st.null_streams.get(dev)
            if s is None:
                s = hipStream_t(dev, VirtualGPU(st.rt, dev), null=True)
                st.null_streams[dev] = s
                _holder(st, dev).v = s.vgpu
    return s


def _holder(st: _State, dev: int) -> _NullHolder:
    h = st.null_holders.get(dev)
    if h is None:
        h = st.null_holders.setdefault(dev, _NullHolder())
    return h


def _new_stream(dev: int, flags: int, priority: int) -> hipStream_t:
    """A created stream (hipStreamCreate*), registered; blocking unless ``flags`` say non-blocking."""
    st = _st()
    blocking = not flags & hipStreamNonBlocking
    s = hipStream_t(dev, VirtualGPU(st.rt, dev), flags=flags, priority=priority,
                    order=_holder(st, dev) if blocking else None)
    if blocking:
        s.seen = -1         # its first command waits for the null stream's work still in flight
    with st.lock:
        st.streams[s] = None
        if blocking:
            st.blocking.setdefault(dev, []).append(s)
    return s


def _forget_stream(s: hipStream_t) -> None:
    """Unregister a destroyed stream (under the state lock, by hipStreamDestroy)."""
    st = _st()
    st.streams.pop(s, None)
    lst = st.blocking.get(s.device)
    if lst is not None and s in lst:
        lst.remove(s)


def _per_thread_stream(dev: int) -> hipStream_t:
    st = _st()
    mine = getattr(_tls, "per_thread", None)
    if mine is None or mine[0] is not st:
        mine = (st, {})
        _tls.per_thread = mine
    s = mine[1].get(dev)
    if s is None or s.destroyed:
        s = mine[1][dev] = _new_stream(dev, hipStreamDefault, 0)
    return s


def _order_after_null(s: hipStream_t) -> None:
    """Blocking stream ``s`` is about to take a command: it waits for the null stream's work."""
    st = _st()
    null = st.null_streams.get(s.device)
    if null is not None and not null.destroyed:
        try:
            null.point.wait_from(s.vgpu)
        except HsaError:            # the null stream failed: its error is reported at its own sync
            pass
    s.seen = s.order.v.commands


def _order_null(s: hipStream_t) -> None:
    """The null stream is about to take a command: it waits for every blocking stream's work."""
    st = _st()
    for b in list(st.blocking.get(s.device, ())):
        if not b.destroyed and b.capture is None:
            try:
                b.point.wait_from(s.vgpu)
            except HsaError:        # that stream failed: its error is reported at its own sync
                pass


def _resolve(stream, submit: bool = True) -> hipStream_t:
    """The hipStream_t a stream argument names (no ordering): None, 0 and hipStreamLegacy are the
    current device's null stream, hipStreamPerThread this thread's stream of it. ``submit``: the call
    would put work on it (the implicit-capture check then invalidates the captures it fails for)."""
    if type(stream) is hipStream_t:
        if stream.destroyed:
            _raise(hipError_t.hipErrorContextIsDestroyed, f"stream {stream!r} was destroyed")
        return stream
    if stream is None or stream is hipStreamLegacy or (type(stream) is int and stream == 0):
        implicit_capture_check(submit)
        return _null_stream(_st(), _current_device())
    if stream is hipStreamPerThread:
        return _per_thread_stream(_current_device())
    if type(stream) is int and not isinstance(stream, bool):     # a raw handle no stream has (HIP: not valid)
        _raise(hipError_t.hipErrorContextIsDestroyed, f"{stream:#x} is not the handle of a live stream")
    _raise(hipError_t.hipErrorInvalidHandle,
           f"stream must be a hipStream_t, None, 0, hipStreamLegacy or hipStreamPerThread, not {stream!r}")


def _get_stream(stream) -> hipStream_t:
    """The live hipStream_t of a stream argument that is about to take a command, with the legacy
    null stream's ordering applied (see the module docstring)."""
    s = _resolve(stream)
    _apply_order(s)
    return s


def _apply_order(s: hipStream_t) -> None:
    """The ordering part of ``_get_stream`` for a stream resolved earlier (the launch path validates
    its arguments between the two, so a rejected launch adds nothing to any stream)."""
    if s.capture is None:
        if s.null:
            _order_null(s)
        elif s.order.v.commands != s.seen:
            _order_after_null(s)


def _peek_stream(stream) -> hipStream_t:
    """The live hipStream_t of a stream argument for a query or a synchronisation (no waits added)."""
    return _resolve(stream, False)


def _blocking_streams(device: int) -> list:
    st = _st()
    with st.lock:
        return [b for b in st.blocking.get(device, ()) if not b.destroyed]


def _live_streams(device: int | None = None) -> list:
    """The live streams of ``device`` (every device: None), null streams included: a snapshot."""
    st = _st()
    with st.lock:
        every = list(st.streams) + list(st.null_streams.values())
    return [s for s in every if not s.destroyed and (device is None or s.device == device)]


def _synchronize_all(streams) -> None:
    """Wait for the work of every stream of ``streams`` (VirtualGPUs), then raise the first failure
    met: a failed stream does not cut the wait for the others short (after a device-wide sync that
    raised, no stream still runs work). A wait that ran out its bound is raised at once."""
    first = None
    for v in streams:
        try:
            v.synchronize()
        except HostWaitTimeout:
            raise
        except HsaError as exc:
            if first is None:
                first = exc
    if first is not None:
        raise first


def _synchronize_device(device: int) -> None:
    """Wait for every live stream of ``device`` (its null stream included)."""
    _synchronize_all([s.vgpu for s in _live_streams(device)])
