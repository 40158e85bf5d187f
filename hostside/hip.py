"""HIP-named API over the command layer. Values are returned; failures raise ``HipError`` carrying the
``hipError_t`` name (and the error is also kept for ``hipGetLastError``).

Pointers are ints (device addresses). Host buffers are numpy arrays (pageable memory) or pointers
returned by ``hipHostMalloc`` (pinned, fine-grained: ``host_array(ptr, dtype, count)`` gives a numpy
view of them). Streams are ``hipStream_t`` objects; ``None`` or 0 is the device's null stream.
"""
from __future__ import annotations

import enum
import functools
import os
import threading

import numpy as np

from shm_layout import layouts as L
from shm_layout.kernels import SignatureError, kernel  # noqa: F401  (re-exported for kernel authors)

from . import hsa as _hsa
from .commands import VirtualGPU
from .hsa import DeviceLost, HostWaitTimeout, HsaError


class hipError_t(enum.IntEnum):
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorOutOfMemory = 2
    hipErrorNotInitialized = 3
    hipErrorInvalidConfiguration = 9
    hipErrorInvalidMemcpyDirection = 21
    hipErrorInvalidDeviceFunction = 98
    hipErrorNoDevice = 100
    hipErrorInvalidDevice = 101
    hipErrorInvalidImage = 200
    hipErrorFileNotFound = 301
    hipErrorInvalidHandle = 400
    hipErrorIllegalState = 401
    hipErrorNotFound = 500
    hipErrorNotReady = 600
    hipErrorIllegalAddress = 700
    hipErrorLaunchOutOfResources = 701
    hipErrorLaunchTimeOut = 702
    hipErrorLaunchFailure = 719
    hipErrorNotSupported = 801
    hipErrorStreamCaptureUnsupported = 900
    hipErrorStreamCaptureInvalidated = 901
    hipErrorStreamCaptureMerge = 902
    hipErrorStreamCaptureUnmatched = 903
    hipErrorStreamCaptureUnjoined = 904
    hipErrorStreamCaptureIsolation = 905
    hipErrorStreamCaptureImplicit = 906
    hipErrorCapturedEvent = 907
    hipErrorStreamCaptureWrongThread = 908
    hipErrorGraphExecUpdateFailure = 910
    hipErrorUnknown = 999


class HipError(RuntimeError):
    """A HIP call failed. ``error`` is the hipError_t, ``name`` its name."""

    def __init__(self, error: hipError_t, msg: str = ""):
        self.error = hipError_t(error)
        self.name = self.error.name
        super().__init__(f"{self.name}: {msg}" if msg else self.name)


_STATUS_TO_HIP = {
    L.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: hipError_t.hipErrorIllegalAddress,
    L.HSA_STATUS_ERROR_MEMORY_FAULT: hipError_t.hipErrorIllegalAddress,
    L.HSA_STATUS_ERROR_INVALID_CODE_OBJECT: hipError_t.hipErrorInvalidImage,
    L.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: hipError_t.hipErrorInvalidConfiguration,
    L.HSA_STATUS_ERROR_EXCEPTION: hipError_t.hipErrorLaunchFailure,
    L.HSA_STATUS_ERROR_INVALID_SIGNAL: hipError_t.hipErrorLaunchFailure,
    L.HSA_STATUS_ERROR_OUT_OF_RESOURCES: hipError_t.hipErrorOutOfMemory,
    L.HSA_STATUS_ERROR_INVALID_ARGUMENT: hipError_t.hipErrorInvalidValue,
    L.HSA_STATUS_ERROR_INVALID_ALLOCATION: hipError_t.hipErrorInvalidValue,
    L.HSA_STATUS_ERROR_INVALID_AGENT: hipError_t.hipErrorInvalidDevice,
    L.HSA_STATUS_ERROR_NOT_INITIALIZED: hipError_t.hipErrorNotInitialized,
}

_tls = threading.local()


def _set_last(err: hipError_t) -> None:
    _tls.last = err


def _raise(err: hipError_t, msg: str):
    _set_last(err)
    raise HipError(err, msg)


def _from_hsa(exc: HsaError) -> HipError:
    if isinstance(exc, DeviceLost):
        err = hipError_t.hipErrorLaunchFailure
    elif isinstance(exc, HostWaitTimeout):
        err = hipError_t.hipErrorLaunchTimeOut
    else:
        err = _STATUS_TO_HIP.get(exc.status, hipError_t.hipErrorUnknown)
    _set_last(err)
    return HipError(err, str(exc))


def _api(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HsaError as exc:
            raise _from_hsa(exc) from None
        except HipError as exc:
            _set_last(exc.error)
            raise
    return wrapper


# ------------------------------------------------------------------------------------------------
class _State:
    """Per-process HIP state: the runtime and each device's null stream."""

    def __init__(self):
        self.rt = _hsa.runtime()
        self.null_streams: dict[int, hipStream_t] = {}
        self.streams: set = set()
        self.lock = threading.Lock()


_state: _State | None = None
_state_lock = threading.Lock()


def _st() -> _State:
    global _state
    s = _state
    if s is None or s.rt.closed:
        with _state_lock:
            if _state is None or _state.rt.closed:
                try:
                    _state = _State()
                except HsaError as exc:
                    raise _from_hsa(exc) from None
            s = _state
    return s


def _device() -> int:
    return getattr(_tls, "device", 0)


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


def _stream(stream) -> hipStream_t:
    if stream is None or (isinstance(stream, int) and stream == 0):
        st = _st()
        dev = _device()
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


# -- devices ---------------------------------------------------------------------------------------
@_api
def hipGetDeviceCount() -> int:
    return len(_st().rt.agents)


@_api
def hipSetDevice(device: int) -> None:
    n = len(_st().rt.agents)
    if not isinstance(device, int) or not 0 <= device < n:
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {n}), not {device!r}")
    _tls.device = device


@_api
def hipGetDevice() -> int:
    _st()
    return _device()


class hipDeviceProp_t(dict):
    __getattr__ = dict.__getitem__


@_api
def hipGetDeviceProperties(device: int) -> hipDeviceProp_t:
    rt = _st().rt
    if not isinstance(device, int) or not 0 <= device < len(rt.agents):
        _raise(hipError_t.hipErrorInvalidDevice, f"device must be in [0, {len(rt.agents)}), not {device!r}")
    topo = rt.pm.topo
    return hipDeviceProp_t(
        name=rt.agents[device].name, gcnArchName=f"hdemu-{topo.cfg['arch']}",
        totalGlobalMem=topo.memory_bytes, multiProcessorCount=topo.n_engines,
        maxThreadsPerBlock=1024, warpSize=64, maxGridSize=(2**31 - 1, 65535, 65535),
        maxThreadsDim=(1024, 1024, 1024), sharedMemPerBlock=65536, pciBusID=device,
        asyncEngineCount=1, concurrentKernels=1, canMapHostMemory=1, isMultiGpuBoard=int(len(rt.agents) > 1),
        maxQueues=topo.max_queues, queueSizeMax=topo.qmax)


@_api
def hipDeviceSynchronize() -> None:
    _graph.check_unsafe("hipDeviceSynchronize")
    st = _st()
    dev = _device()
    for s in list(st.streams) + list(st.null_streams.values()):
        if s.device == dev and not s.destroyed:
            s.vgpu.synchronize()


# -- memory ----------------------------------------------------------------------------------------
@_api
def hipMalloc(size: int) -> int:
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a non-negative int, not {size!r}")
    _graph.check_unsafe("hipMalloc")
    if size == 0:
        return 0
    return _st().rt.allocate(_device(), int(size), L.ALLOC_DEVICE)


@_api
def hipFree(ptr: int) -> None:
    if not ptr:
        return
    _graph.check_unsafe("hipFree")
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipMalloc")
    hipDeviceSynchronize()
    rt.free(ptr)


@_api
def hipHostMalloc(size: int, flags: int = 0) -> int:
    if not isinstance(size, (int, np.integer)) or size <= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"size must be a positive int, not {size!r}")
    return _st().rt.allocate(None, int(size), L.ALLOC_HOST)


@_api
def hipHostFree(ptr: int) -> None:
    if not ptr:
        return
    rt = _st().rt
    a = rt.pointer_info(ptr)
    if a is None or a.base != ptr or a.agent >= 0:
        _raise(hipError_t.hipErrorInvalidValue, f"{ptr:#x} is not a pointer returned by hipHostMalloc")
    rt.free(ptr)


def host_array(ptr: int, dtype, count: int) -> np.ndarray:
    """A numpy view of ``count`` elements of pinned host memory at ``ptr`` (from hipHostMalloc)."""
    dt = np.dtype(dtype)
    try:
        return _st().rt.host_view(ptr, count * dt.itemsize).view(dt)
    except HsaError as exc:
        raise _from_hsa(exc) from None


class hipMemcpyKind(enum.IntEnum):
    hipMemcpyHostToHost = 0
    hipMemcpyHostToDevice = 1
    hipMemcpyDeviceToHost = 2
    hipMemcpyDeviceToDevice = 3
    hipMemcpyDefault = 4


hipMemcpyHostToHost = hipMemcpyKind.hipMemcpyHostToHost
hipMemcpyHostToDevice = hipMemcpyKind.hipMemcpyHostToDevice
hipMemcpyDeviceToHost = hipMemcpyKind.hipMemcpyDeviceToHost
hipMemcpyDeviceToDevice = hipMemcpyKind.hipMemcpyDeviceToDevice
hipMemcpyDefault = hipMemcpyKind.hipMemcpyDefault


def _classify(p, size: int, what: str):
    """('pageable', u8 array) | ('pinned', addr) | ('device', addr), with bounds checked."""
    if isinstance(p, (bytes, bytearray, memoryview, np.ndarray)):
        arr = np.frombuffer(p, dtype=np.uint8) if not isinstance(p, np.ndarray) else p
        if isinstance(p, np.ndarray) and not p.flags.c_contiguous:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} host array must be C-contiguous")
        arr = arr.reshape(-1).view(np.uint8)
        if size > arr.nbytes:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} host buffer has {arr.nbytes} bytes, copy needs {size}")
        return "pageable", arr
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        _raise(hipError_t.hipErrorInvalidValue,
               f"{what} must be a device pointer (int) or a host buffer, not {type(p).__name__}")
    p = int(p)
    rt = _st().rt
    topo = rt.pm.topo
    if L.HOST_POOL_BASE <= p < L.HOST_POOL_BASE + topo.host_pool_bytes:
        table, kind = rt.host_table, "pinned"
    else:
        for a in range(topo.n_agents):
            if L.device_base(a) <= p < L.device_base(a) + topo.memory_bytes:
                table, kind = rt.device_tables[a], "device"
                break
        else:
            _raise(hipError_t.hipErrorInvalidValue, f"{what} {p:#x} is not a device or pinned host pointer")
    hit = table.lookup(p)
    if hit is None or p + size > hit[0] + hit[1]:
        _raise(hipError_t.hipErrorInvalidValue,
               f"{what} [{p:#x}, +{size}) is not inside a live allocation")
    return kind, p


_KIND_OK = {
    hipMemcpyKind.hipMemcpyHostToHost: ({"pageable", "pinned"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyHostToDevice: ({"device"}, {"pageable", "pinned"}),
    hipMemcpyKind.hipMemcpyDeviceToHost: ({"pageable", "pinned"}, {"device"}),
    hipMemcpyKind.hipMemcpyDeviceToDevice: ({"device"}, {"device"}),
}


def _memcpy(dst, src, size: int, kind, stream, sync: bool):
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sizeBytes must be a non-negative int, not {size!r}")
    try:
        kind = hipMemcpyKind(kind)
    except ValueError:
        _raise(hipError_t.hipErrorInvalidMemcpyDirection, f"kind must be a hipMemcpyKind, not {kind!r}")
    s = _stream(stream)
    dk, d = _classify(dst, size, "dst")
    sk, sp = _classify(src, size, "src")
    if kind != hipMemcpyKind.hipMemcpyDefault:
        okd, oks = _KIND_OK[kind]
        if dk not in okd or sk not in oks:
            _raise(hipError_t.hipErrorInvalidMemcpyDirection,
                   f"{kind.name} cannot copy from {sk} memory to {dk} memory")
    if size == 0:
        return
    v = s.vgpu
    if s.capture is not None:
        return s.capture.add_memcpy(s, dst, src, size, dk, sk)
    rt = _st().rt
    if dk == "pageable" and sk == "pageable":
        v.synchronize()
        d[:size] = sp[:size]
    elif dk == "pageable":
        if sk == "pinned":
            v.synchronize()
            d[:size] = rt.host_view(sp, size)
        else:
            v.copy_to_host(d[:size], sp)
    elif sk == "pageable":
        if dk == "pinned":
            v.synchronize()
            rt.host_view(d, size)[:] = sp[:size]
        else:
            v.copy_from_host(d, sp[:size])
    else:
        sig = v.copy(d, sp, size)
        if sync:
            v.sync_signal(sig)
        else:
            v.flush()


@_api
def hipMemcpy(dst, src, sizeBytes: int, kind=hipMemcpyDefault) -> None:
    _graph.check_unsafe("hipMemcpy")
    _memcpy(dst, src, sizeBytes, kind, None, sync=True)


@_api
def hipMemcpyAsync(dst, src, sizeBytes: int, kind=hipMemcpyDefault, stream=None) -> None:
    _memcpy(dst, src, sizeBytes, kind, stream, sync=False)


def _memset(dst, value, size, stream, sync):
    if not isinstance(value, (int, np.integer)):
        _raise(hipError_t.hipErrorInvalidValue, f"value must be an int, not {value!r}")
    if not isinstance(size, (int, np.integer)) or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"sizeBytes must be a non-negative int, not {size!r}")
    dk, d = _classify(dst, size, "dst")
    if dk == "pageable":
        _raise(hipError_t.hipErrorInvalidValue, "hipMemset needs a device or pinned host pointer")
    if size == 0:
        return
    s = _stream(stream)
    if s.capture is not None:
        return s.capture.add_memset(s, d, int(value) & 0xFF, size)
    sig = s.vgpu.fill(d, int(value) & 0xFF, size, 1)
    if sync:
        s.vgpu.sync_signal(sig)
    else:
        s.vgpu.flush()


@_api
def hipMemset(dst: int, value: int, sizeBytes: int) -> None:
    _graph.check_unsafe("hipMemset")
    _memset(dst, value, sizeBytes, None, True)


@_api
def hipMemsetAsync(dst: int, value: int, sizeBytes: int, stream=None) -> None:
    _memset(dst, value, sizeBytes, stream, False)


# -- streams ---------------------------------------------------------------------------------------
@_api
def hipStreamCreate() -> hipStream_t:
    st = _st()
    dev = _device()
    s = hipStream_t(dev, VirtualGPU(st.rt, dev))
    with st.lock:
        st.streams.add(s)
    return s


@_api
def hipStreamDestroy(stream: hipStream_t) -> None:
    s = _stream(stream)
    if s.null:
        _raise(hipError_t.hipErrorInvalidHandle, "the null stream cannot be destroyed")
    if s.capture is not None:
        s.capture.stream_destroyed(s)
    s.destroyed = True
    st = _st()
    with st.lock:
        st.streams.discard(s)
    s.vgpu.destroy()


@_api
def hipStreamSynchronize(stream=None) -> None:
    s = _stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamSynchronize")
    s.vgpu.synchronize()


@_api
def hipStreamQuery(stream=None) -> hipError_t:
    s = _stream(stream)
    if s.capture is not None:
        s.capture.illegal("hipStreamQuery")
    return hipError_t.hipSuccess if s.vgpu.query() else hipError_t.hipErrorNotReady


hipEventWaitDefault, hipEventWaitExternal = 0, 1


@_api
def hipStreamWaitEvent(stream, event, flags: int = 0) -> None:
    """Later work on ``stream`` waits for the event's last record (a BARRIER_AND on the event's
    signal). During capture: joins the capture (fork) or adds a dependency (see hostside.graph)."""
    s = _stream(stream)
    ev = _event(event)
    if flags not in (0, hipEventWaitExternal):
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be 0 or hipEventWaitExternal, not {flags!r}")
    if s.capture is not None or ev.capture is not None:
        return _graph.capture_wait_event(s, ev, flags)
    if not ev.recorded:
        return
    if ev.stream is not None and ev.stream is not s.vgpu:
        ev.stream.flush()
    v = s.vgpu
    with v.lock:
        v.marker([ev.signal.handle])
        if len(ev.waiters) > 32:
            ev.waiters = [(q, i) for q, i in ev.waiters if not q.destroyed and q.load_read_index() <= i]
        ev.waiters.append((v.queue, v.queue.load_write_index() - 1))


# -- events ----------------------------------------------------------------------------------------
class hipEvent_t:
    def __init__(self, signal):
        self.signal = signal
        self.recorded = False
        self.stream = None
        self.destroyed = False
        self.capture = None         # the capture it was last recorded in (graphs), while it is open
        self.capture_nodes = ()     # that capture's nodes the record stands for
        self.waiters = []           # (queue, packet id) of barriers waiting on this record's signal
        self.retired = []           # (signal, waiters, stream) of earlier records still waited on


def _event_rearm(ev: hipEvent_t) -> None:
    """Called before a new record stores 1 into the event's signal. If the previous record has
    not completed (its marker would take the new value to 0 early, and the new marker to -1), or a
    barrier that hipStreamWaitEvent placed for it has not been passed yet (it would wait for the new
    record instead, and deadlock when that record sits behind it), the event moves to a fresh signal
    (one of its retired ones, once nobody can still use it)."""
    def pending(ws):
        return any(not q.destroyed and q.load_read_index() <= i for q, i in ws)
    if ev.signal.load() == 0 and not (ev.waiters and pending(ev.waiters)):
        ev.waiters = []
        return
    fresh = None
    for j, (sig, ws, v) in enumerate(ev.retired):
        if sig.load() == 0 and not pending(ws) and (v is None or v.last_signal is not sig):
            fresh = ev.retired.pop(j)[0]
            break
    ev.retired.append((ev.signal, ev.waiters, ev.stream))
    ev.signal = fresh if fresh is not None else _st().rt.signals.create(0, kind=2)
    ev.waiters = []


@_api
def hipEventCreate() -> hipEvent_t:
    return hipEvent_t(_st().rt.signals.create(0, kind=2))


def _event(ev) -> hipEvent_t:
    if not isinstance(ev, hipEvent_t) or ev.destroyed:
        _raise(hipError_t.hipErrorInvalidHandle, f"event must be a live hipEvent_t, not {ev!r}")
    return ev


@_api
def hipEventRecord(event: hipEvent_t, stream=None) -> None:
    ev = _event(event)
    s = _stream(stream)
    if s.capture is not None:
        return s.capture.add_event_record(s, ev)
    v = s.vgpu
    with v.lock:
        if ev.recorded and ev.stream is not v and ev.signal.load() != 0:
            ev.stream.sync_signal(ev.signal)
        _event_rearm(ev)
        v.marker(signal=ev.signal)
    ev.recorded = True
    ev.stream = v
    ev.capture, ev.capture_nodes = None, ()


@_api
def hipEventSynchronize(event: hipEvent_t) -> None:
    ev = _event(event)
    if ev.capture is not None:
        _raise(hipError_t.hipErrorCapturedEvent, "the event was last recorded in a capturing stream")
    if not ev.recorded:
        return
    ev.stream.sync_signal(ev.signal)


@_api
def hipEventQuery(event: hipEvent_t) -> hipError_t:
    ev = _event(event)
    if ev.capture is not None:
        _raise(hipError_t.hipErrorCapturedEvent, "the event was last recorded in a capturing stream")
    if not ev.recorded:
        return hipError_t.hipSuccess
    ev.stream.flush()
    if ev.signal.load() == 0:
        return hipError_t.hipSuccess
    ev.stream.check()
    return hipError_t.hipErrorNotReady


@_api
def hipEventElapsedTime(start: hipEvent_t, stop: hipEvent_t) -> float:
    a, b = _event(start), _event(stop)
    if not a.recorded or not b.recorded:
        _raise(hipError_t.hipErrorInvalidHandle, "both events must have been recorded")
    if a.signal.load() != 0 or b.signal.load() != 0:
        _raise(hipError_t.hipErrorNotReady, "an event has not completed yet")
    return (b.signal.end_ts - a.signal.end_ts) / 1e6


@_api
def hipEventDestroy(event: hipEvent_t) -> None:
    ev = _event(event)
    if ev.recorded and ev.signal.load() != 0:
        ev.stream.sync_signal(ev.signal)
    ev.destroyed = True
    ev.signal.destroy()
    for sig, ws, _v in ev.retired:      # a signal a barrier may still read stays claimed (never reused)
        if not any(not q.destroyed and q.load_read_index() <= i for q, i in ws):
            sig.destroy()
    ev.retired = []


# -- modules and launches ----------------------------------------------------------------------------
class hipModule_t:
    def __init__(self, co):
        self.co = co
        self.functions = {}


class hipFunction_t:
    __slots__ = ("module", "name", "kobj", "sig")

    def __init__(self, module, name, kobj, sig):
        self.module, self.name, self.kobj, self.sig = module, name, kobj, sig

    def __repr__(self):
        return f"<hipFunction_t {self.name}({self.sig.text})>"


@_api
def hipModuleLoadData(image, name: str = "<memory>") -> hipModule_t:
    if isinstance(image, (bytes, bytearray)):
        try:
            image = bytes(image).decode()
        except UnicodeDecodeError:
            _raise(hipError_t.hipErrorInvalidImage, "a code object image must be UTF-8 Python source")
    if not isinstance(image, str):
        _raise(hipError_t.hipErrorInvalidValue, f"image must be source text or bytes, not {type(image).__name__}")
    try:
        co = _st().rt.load_code_object(image, name)
    except HsaError as exc:
        _raise(hipError_t.hipErrorInvalidImage, str(exc))
    return hipModule_t(co)


@_api
def hipModuleLoad(fname: str) -> hipModule_t:
    try:
        with open(fname, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        _raise(hipError_t.hipErrorFileNotFound, f"no code object file {fname!r}")
    except OSError as exc:
        _raise(hipError_t.hipErrorFileNotFound, f"cannot read {fname!r}: {exc}")
    return hipModuleLoadData(data, os.path.basename(fname))


@_api
def hipModuleUnload(module: hipModule_t) -> None:
    if not isinstance(module, hipModule_t):
        _raise(hipError_t.hipErrorInvalidHandle, f"module must be a hipModule_t, not {module!r}")
    module.co.unload()


@_api
def hipModuleGetFunction(module: hipModule_t, name: str) -> hipFunction_t:
    if not isinstance(module, hipModule_t) or module.co.unloaded:
        _raise(hipError_t.hipErrorInvalidHandle, f"module must be a loaded hipModule_t, not {module!r}")
    k = module.co.kernels.get(name)
    if k is None:
        _raise(hipError_t.hipErrorNotFound,
               f"module {module.co.name} has no kernel {name!r}; it has {sorted(module.co.kernels)}")
    f = module.functions.get(name)
    if f is None:
        f = module.functions[name] = hipFunction_t(module, name, k[0], k[1])
    return f


@_api
def hipModuleGetGlobal(module: hipModule_t, name: str) -> tuple[int, int]:
    """(device pointer, size in bytes) of the module's device global ``name`` on the current
    device (declared with ``__hdemu_globals__``, see shm_layout.kernels)."""
    if not isinstance(module, hipModule_t) or module.co.unloaded:
        _raise(hipError_t.hipErrorInvalidHandle, f"module must be a loaded hipModule_t, not {module!r}")
    g = module.co.globals.get(name)
    if g is None:
        _raise(hipError_t.hipErrorNotFound,
               f"module {module.co.name} has no device global {name!r}; it has {sorted(module.co.globals)}")
    return g[2][_device()], g[3]


def _pack_value(v, ptr: bool, name: str):
    if ptr:
        if v is None:
            return 0
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return int(v)
        raise HipError(hipError_t.hipErrorInvalidValue, f"argument {name} must be a device pointer (int), not {v!r}")
    return v


def hipModuleLaunchKernel(f: hipFunction_t, gridDimX: int, gridDimY: int, gridDimZ: int,
                          blockDimX: int, blockDimY: int, blockDimZ: int, sharedMemBytes: int,
                          stream, kernelParams, extra=None) -> None:
    """Launch ``f`` over gridDim blocks of blockDim work-items with ``kernelParams`` (a sequence in
    signature order). Asynchronous: errors of the kernel itself surface at the next sync."""
    try:
        if type(f) is not hipFunction_t:
            _raise(hipError_t.hipErrorInvalidDeviceFunction, f"f must be a hipFunction_t, not {f!r}")
        if extra is not None:
            _raise(hipError_t.hipErrorNotSupported, "the extra argument is not supported; pass kernelParams")
        s = _stream(stream)
        sig = f.sig
        params = tuple(kernelParams) if kernelParams is not None else ()
        if len(params) != len(sig.args):
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{f.name} takes {len(sig.args)} arguments ({sig.text}), not {len(params)}")
        if any(a[2] for a in sig.args):
            params = tuple(_pack_value(v, a[2], a[0]) for v, a in zip(params, sig.args))
        dims = 3 if gridDimZ * blockDimZ > 1 else (2 if gridDimY * blockDimY > 1 else 1)
        grid = (gridDimX * blockDimX, gridDimY * blockDimY, gridDimZ * blockDimZ)
        if s.capture is not None:
            return s.capture.add_kernel(s, f, params, grid, (blockDimX, blockDimY, blockDimZ),
                                        sharedMemBytes, dims)
        try:
            s.vgpu.launch(f.kobj, sig, params, grid, (blockDimX, blockDimY, blockDimZ), sharedMemBytes, dims)
        except Exception as exc:  # struct.error: an argument of the wrong type or range
            if isinstance(exc, (HsaError, HipError)):
                raise
            _raise(hipError_t.hipErrorInvalidValue, f"{f.name}({sig.text}): bad argument: {exc}")
    except HsaError as exc:
        raise _from_hsa(exc) from None


# -- errors ----------------------------------------------------------------------------------------
def hipGetLastError() -> hipError_t:
    err = getattr(_tls, "last", hipError_t.hipSuccess)
    _tls.last = hipError_t.hipSuccess
    return err


def hipPeekAtLastError() -> hipError_t:
    return getattr(_tls, "last", hipError_t.hipSuccess)


def hipGetErrorName(err) -> str:
    return hipError_t(err).name


def hipDeviceReset() -> None:
    """Tear down this process's runtime (and its embedded platform, if it owns one)."""
    global _state
    with _state_lock:
        _state = None
    _hsa.shutdown()


# -- graphs and stream capture (hostside.graph) ---------------------------------------------------
from . import graph as _graph  # noqa: E402  (graph imports this module lazily)
from .graph import *  # noqa: E402,F401,F403
