"""Modules (code objects), their functions and device globals, and kernel launch.

Unloading (``hipModuleUnload``): the module is retired first, so a launch of one of its functions
fails at the call (hipErrorInvalidHandle; a graph exec that uses it too), then every stream of every
device is synchronised, so the work launched before the unload runs to its end with its code object
and device globals in place, and only then are the code-object slot and the globals freed (a global's
memory may belong to the next hipMalloc). A launch racing the unload of its own module in another
thread is the application's race, as in HIP; the command processor refuses a packet whose code
object is gone (INVALID_CODE_OBJECT).
"""
from __future__ import annotations

import os
import threading

import numpy as np

from ..hsa import HostWaitTimeout, HsaError
from ._context import _current_device, _get_stream, _live_streams, _st, hipStream_t
from ._errors import HipError, _api, _from_hsa, _raise, hipError_t

__all__ = ["hipModule_t", "hipFunction_t", "hipModuleLoadData", "hipModuleLoad", "hipModuleUnload",
           "hipModuleGetFunction", "hipModuleGetGlobal", "hipModuleLaunchKernel"]


class hipModule_t:
    def __init__(self, co):
        self.co = co
        self.functions = {}
        self.lock = threading.Lock()


class hipFunction_t:
    __slots__ = ("module", "name", "kobj", "sig", "co", "nargs", "ptrs")

    def __init__(self, module, name, kobj, sig):
        self.module, self.name, self.kobj, self.sig = module, name, kobj, sig
        self.co = module.co     # its code object (``co.unloaded`` once the module is unloaded)
        self.nargs = len(sig.args)
        self.ptrs = any(a[2] for a in sig.args)     # has pointer arguments (checked at each launch)

    def __repr__(self):
        return f"<hipFunction_t {self.name}({self.sig.text})>"


@_api
def hipModuleLoadData(image, name: str = "<memory>") -> hipModule_t:
    if isinstance(image, (bytes, bytearray)):
        try:
            image = bytes(image).decode()
        except UnicodeDecodeError as exc:
            _raise(hipError_t.hipErrorInvalidImage, "a code object image must be UTF-8 Python source", exc)
    if not isinstance(image, str):
        _raise(hipError_t.hipErrorInvalidValue, f"image must be source text or bytes, not {type(image).__name__}")
    try:
        co = _st().rt.load_code_object(image, name)
    except HsaError as exc:
        _raise(hipError_t.hipErrorInvalidImage, str(exc), exc)
    return hipModule_t(co)


@_api
def hipModuleLoad(fname: str) -> hipModule_t:
    try:
        with open(fname, "rb") as f:
            data = f.read()
    except FileNotFoundError as exc:
        _raise(hipError_t.hipErrorFileNotFound, f"no code object file {fname!r}", exc)
    except OSError as exc:
        _raise(hipError_t.hipErrorFileNotFound, f"cannot read {fname!r}: {exc}", exc)
    return hipModuleLoadData(data, os.path.basename(fname))


@_api
def hipModuleUnload(module: hipModule_t) -> None:
    """Retire the module (its functions cannot be launched any more), wait for the work launched
    before (every stream of every device), then free its code object and device globals. A stream
    that failed is not waited for (it runs nothing more); a wait that runs out raises
    hipErrorLaunchTimeOut and leaves the module retired but not freed (call it again)."""
    if not isinstance(module, hipModule_t):
        _raise(hipError_t.hipErrorInvalidHandle, f"module must be a hipModule_t, not {module!r}")
    with module.lock:
        co = module.co
        if co.released:
            return
        co.retire()
        for s in _live_streams():
            try:
                s.vgpu.synchronize()
            except HostWaitTimeout:
                raise
            except HsaError:        # the stream failed: its error is reported at its own sync
                pass
        co.unload()


@_api
def hipModuleGetFunction(module: hipModule_t, name: str) -> hipFunction_t:
    if not isinstance(module, hipModule_t) or module.co.unloaded:
        _raise(hipError_t.hipErrorInvalidHandle, f"module must be a loaded hipModule_t, not {module!r}")
    k = module.co.kernels.get(name)
    if k is None:
        _raise(hipError_t.hipErrorNotFound,
               f"module {module.co.name} has no kernel {name!r}; it has {sorted(module.co.kernels)}")
    with module.lock:
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
    return g[2][_current_device()], g[3]


def _pack_value(v, ptr: bool, name: str):
    """A kernel argument as packed: a pointer argument must be an int (None is the null pointer)."""
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
    signature order). Asynchronous: errors of the kernel itself surface at the next sync. A launch
    rejected here (hipErrorInvalidValue: an argument or a dimension of the wrong type or range) leaves
    the stream as it was: the command layer checks and packs before it reserves anything.
    (Not wrapped in ``_api``: the launch path inlines its error handling.)"""
    try:
        if type(f) is not hipFunction_t:
            _raise(hipError_t.hipErrorInvalidDeviceFunction, f"f must be a hipFunction_t, not {f!r}")
        if f.co.unloaded:
            _raise(hipError_t.hipErrorInvalidHandle, f"{f.name}: its module {f.co.name} was unloaded")
        if extra is not None:
            _raise(hipError_t.hipErrorNotSupported, "the extra argument is not supported; pass kernelParams")
        s = stream if type(stream) is hipStream_t and not stream.destroyed else _get_stream(stream)
        sig = f.sig
        params = tuple(kernelParams) if kernelParams is not None else ()
        if len(params) != f.nargs:
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{f.name} takes {len(sig.args)} arguments ({sig.text}), not {len(params)}")
        if f.ptrs:
            params = tuple(_pack_value(v, a[2], a[0]) for v, a in zip(params, sig.args))
        try:
            gy = gridDimY * blockDimY
            gz = gridDimZ * blockDimZ
            dims = 3 if gz > 1 else (2 if gy > 1 else 1)
            grid = (gridDimX * blockDimX, gy, gz)
            if s.capture is not None:
                return s.capture.add_kernel(s, f, params, grid, (blockDimX, blockDimY, blockDimZ),
                                            sharedMemBytes, dims)
            s.vgpu.launch(f.kobj, sig, params, grid, (blockDimX, blockDimY, blockDimZ), sharedMemBytes, dims)
        except Exception as exc:  # struct.error / TypeError: an argument or dimension of the wrong type or range
            if isinstance(exc, (HsaError, HipError)):
                raise
            _raise(hipError_t.hipErrorInvalidValue, f"{f.name}({sig.text}): bad argument or dimension: {exc}", exc)
    except HsaError as exc:
        raise _from_hsa(exc) from exc
