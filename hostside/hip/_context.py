"""Per-process HIP state: the HSA runtime, each device's null stream and the streams created, the
current device (per thread), ``hipStream_t`` and the stream lookup every stream argument goes through.
"""
from __future__ import annotations

import threading

from .. import hsa as _hsa
from .. import platform as _platform  # noqa: F401  (registers the embedded-platform factory with hsa)
from ..clr import VirtualGPU
from ..hsa import HsaError
from ._errors import _from_hsa, _raise, hipError_t

__all__ = ["hipStream_t"]


class _State:
    """Per-process HIP state: the runtime and each device's null stream."""

    def __init__(self):
        self.rt = _hsa.runtime()
        self.null_streams: dict[int, hipStream_t] = {}
        self.streams: set = set()
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
        _state = None
    _hsa.shutdown()


def _current_device() -> int:
    return getattr(_tls, "device", 0)


def _set_current_device(device: int) -> None:
    _tls.device = device


class hipStream_t:
    """A stream: an in-order virtual GPU on one device."""

    def __init__(self, device: int, vgpu: VirtualGPU, null: bool = False):
        self.device = device
        self.vgpu = vgpu
        self.null = null
        self.destroyed = False
        self.capture = None     # set while capturing (graphs)

    def __repr__(self):
        return f"<hipStream_t device={self.device} queue={self.vgpu.queue.slot}{' null' if self.null else ''}>"


def _get_stream(stream) -> hipStream_t:
    """The live hipStream_t of a stream argument; ``None`` or 0 is the current device's null stream."""
    if type(stream) is hipStream_t and not stream.destroyed:
        return stream
    if stream is None or (isinstance(stream, int) and stream == 0):
        st = _st()
        dev = _current_device()
        s = st.null_streams.get(dev)
        if s is None:
            with st.lock:
                s = st.null_streams.get(dev)
                if s is None:
                    s = hipStream_t(dev, VirtualGPU(st.rt, dev), null=True)
                    st.null_streams[dev] = s
        return s
    if not isinstance(stream, hipStream_t) or stream.destroyed:
        _raise(hipError_t.hipErrorInvalidHandle, f"stream must be a live hipStream_t, None or 0, not {stream!r}")
    return stream


def _live_streams(device: int | None = None) -> list:
    """The live streams of ``device`` (every device: None), null streams included: a snapshot."""
    st = _st()
    with st.lock:
        every = list(st.streams) + list(st.null_streams.values())
    return [s for s in every if not s.destroyed and (device is None or s.device == device)]


def _synchronize_device(device: int) -> None:
    """Wait for every live stream of ``device`` (its null stream included)."""
    for s in _live_streams(device):
        s.vgpu.synchronize()
