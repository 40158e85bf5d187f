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
from ._context import _apply_order, _current_device, _live_streams, _resolve, _st, hipStream_t, hipStreamLegacy
from ._errors import _PLATFORM_ERRORS, HipError, _api, _from_hsa, _from_platform, _raise, _set_last, hipError_t
from ._limits import MAX_GLOBAL_DIM, MAX_GRID_DIM, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK
from ._stream import hipEventRecord

__all__ = ["hipModule_t", "hipFunction_t", "hipModuleLoadData", "hipModuleLoadDataEx", "hipModuleLoad", "hipModuleUnload",
           "hipModuleGetFunction", "hipModuleGetGlobal", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
           "HIP_LAUNCH_PARAM_BUFFER_POINTER", "HIP_LAUNCH_PARAM_BUFFER_SIZE", "HIP_LAUNCH_PARAM_END"]

#: The markers of hipModuleLaunchKernel's ``extra`` list (HIP's ``(void*)1``, ``(void*)2``, ``(void*)3``):
#: ``[HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, size, HIP_LAUNCH_PARAM_END]``
#: where ``buf`` holds the arguments packed as the kernarg segment (each at its natural alignment)
HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03


class hipModule_t:
    def __init__(self, co):
        self.co = co
        self.functions = {}
        self.lock = threading.Lock()


class hipFunction_t:
    __slots__ = ("module", "name", "kobj", "sig", "co", "nargs", "ptrs", "max_dyn_shared")

    def __init__(self, module, name, kobj, sig):
        self.module, self.name, self.kobj, self.sig = module, name, kobj, sig
        self.co = module.co     # its code object (``co.unloaded`` once the module is unloaded)
        self.nargs = len(sig.args)
        #: the positions of its pointer arguments (checked at each launch; empty: none)
        self.ptrs = tuple(i for i, a in enumerate(sig.args) if a[2])
        #: hipFuncSetAttribute's hipFuncAttributeMaxDynamicSharedMemorySize, per device (``_funcattr``)
        self.max_dyn_shared = {}

    def __repr__(self):
        return f"<hipFunction_t {self.name}({self.sig.text})>"


@_api
def hipModuleLoadData(image, name: str = "<memory>") -> hipModule_t:
    if image is None:
        _raise(hipError_t.hipErrorInvalidValue, "image must be a code object, not None")
    if isinstance(image, (bytes, bytearray, memoryview)) and len(image) == 0 or isinstance(image, str) and not image:
        _raise(hipError_t.hipErrorInvalidImage, "the code object image is empty")
    if isinstance(image, (bytes, bytearray, memoryview)):
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
def hipModuleLoadDataEx(image, numOptions: int = 0, options=None, optionValues=None,
                        name: str = "<memory>") -> hipModule_t:
    """hipModuleLoadData with JIT options: as in CLR the options are not used (an hdemu code object
    is not compiled); ``numOptions`` must be a non-negative int and, when given, ``options`` and
    ``optionValues`` sequences of at least that many entries (hipErrorInvalidValue)."""
    if not isinstance(numOptions, (int, np.integer)) or isinstance(numOptions, bool) or numOptions < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"numOptions must be a non-negative int, not {numOptions!r}")
    for what, seq in (("options", options), ("optionValues", optionValues)):
        if seq is not None and (not hasattr(seq, "__len__") or len(seq) < numOptions):
            _raise(hipError_t.hipErrorInvalidValue, f"{what} must hold numOptions ({numOptions}) entries, not {seq!r}")
    return hipModuleLoadData(image, name)


@_api
def hipModuleLoad(fname: str) -> hipModule_t:
    if not isinstance(fname, (str, os.PathLike)) or not str(fname):
        _raise(hipError_t.hipErrorInvalidValue, f"fname must be a non-empty path, not {fname!r}")
    try:
        with open(fname, "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError) as exc:
        _raise(hipError_t.hipErrorFileNotFound, f"no code object file {fname!r}", exc)
    except OSError as exc:
        _raise(hipError_t.hipErrorFileNotFound, f"cannot read {fname!r}: {exc}", exc)
    if not data:
        _raise(hipError_t.hipErrorInvalidImage, f"code object file {str(fname)!r} is empty")
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
            _raise(hipError_t.hipErrorNotFound, f"module {co.name} was unloaded already")
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
    if not isinstance(name, str) or not name:
        _raise(hipError_t.hipErrorInvalidValue, f"name must be a kernel name, not {name!r}")
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
    if not isinstance(name, str) or not name:
        _raise(hipError_t.hipErrorInvalidValue, f"name must be a global's name, not {name!r}")
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


def _bad_config(f, grid, block, shared, ext: bool):
    """Why a launch configuration is refused (the checks and codes of CLR): (hipError_t, message), or
    None when it is fine. ``grid`` is in blocks, or in work-items for ``ext``."""
    inval = hipError_t.hipErrorInvalidValue
    what = "global work size" if ext else "grid"
    for name, dims in ((what, grid), ("block", block)):
        for d in dims:
            if type(d) is not int and not isinstance(d, np.integer):
                return inval, f"{name} dimensions must be ints, not {dims!r}"
            if d <= 0 or d > MAX_GLOBAL_DIM:
                return inval, f"{name} dimensions must be in [1, 2**32), not {dims!r}"
    for i, (g, m) in enumerate(zip(grid, MAX_GRID_DIM)):
        if g > m and not ext:       # a global work size may be any u32 (as CLR)
            return inval, f"{what} {'XYZ'[i]} must be at most {m} (maxGridSize), not {g}"
    if not ext and any(g * b > MAX_GLOBAL_DIM for g, b in zip(grid, block)):
        return inval, f"grid {grid!r} of blocks {block!r} has over 2**32-1 work-items in a dimension"
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        return inval, f"a block of {block!r} has over {MAX_THREADS_PER_BLOCK} work-items (maxThreadsPerBlock)"
    if type(shared) is not int and not isinstance(shared, np.integer) or not 0 <= shared <= SHARED_MEM_PER_BLOCK:
        return inval, f"sharedMemBytes must be in [0, {SHARED_MEM_PER_BLOCK}] (sharedMemPerBlock), not {shared!r}"
    return None


def _extra_params(f, extra):
    """The argument values an ``extra`` list carries (HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END)."""
    try:
        ok = (len(extra) == 5 and extra[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER
              and extra[2] == HIP_LAUNCH_PARAM_BUFFER_SIZE and extra[4] == HIP_LAUNCH_PARAM_END)
    except TypeError:
        ok = False
    if not ok:
        _raise(hipError_t.hipErrorInvalidValue,
               "extra must be [HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, size, "
               f"HIP_LAUNCH_PARAM_END], not {extra!r}")
    buf, size = extra[1], extra[3]
    if type(size) is not int or size < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"the extra buffer size must be a non-negative int, not {size!r}")
    sig = f.sig
    if sig.size == 0:           # a kernel without arguments ignores the buffer (sizeof an empty struct is 1)
        return ()
    try:
        mv = memoryview(buf).cast("B")
    except TypeError:
        _raise(hipError_t.hipErrorInvalidValue, f"the extra buffer must be bytes-like, not {type(buf).__name__}")
    if size < sig.size or mv.nbytes < sig.size:
        _raise(hipError_t.hipErrorInvalidValue,
               f"{f.name}({sig.text}) needs {sig.size} bytes of arguments; extra has {min(size, mv.nbytes)}")
    return sig.unpack_from(mv, 0)


def _launch(f, grid, block, shared, stream, kernelParams, extra, ext: bool, start=None, stop=None):
    """hipModuleLaunchKernel (grid in blocks) and hipExtModuleLaunchKernel (``ext``: grid in
    work-items). Every check happens before anything is submitted: a rejected launch leaves every
    stream as it was and sets the last error."""
    s = stream if type(stream) is hipStream_t and not stream.destroyed else _resolve(stream)
    if type(f) is not hipFunction_t:
        _raise(hipError_t.hipErrorInvalidResourceHandle, f"f must be a hipFunction_t, not {f!r}")
    if f.co.unloaded:
        _raise(hipError_t.hipErrorInvalidHandle, f"{f.name}: its module {f.co.name} was unloaded")
    bad = _bad_config(f, grid, block, shared, ext)
    if bad is not None:
        _raise(bad[0], f"{f.name}: {bad[1]}")
    if ext:
        gx, gy, gz = (min(g, b) for g, b in zip(grid, block))     # a block no larger than the grid
        block = (gx, gy, gz)
        wg = grid
    else:
        wg = (grid[0] * block[0], grid[1] * block[1], grid[2] * block[2])
    sig = f.sig
    if extra is not None:
        if kernelParams is not None:
            _raise(hipError_t.hipErrorInvalidValue, "pass kernelParams or extra, not both")
        params = _extra_params(f, extra)
    else:
        params = tuple(kernelParams) if kernelParams is not None else ()
        if len(params) != f.nargs:
            _raise(hipError_t.hipErrorInvalidValue,
                   f"{f.name} takes {len(sig.args)} arguments ({sig.text}), not {len(params)}")
    if f.ptrs:
        params = tuple(_pack_value(v, a[2], a[0]) for v, a in zip(params, sig.args))
    dims = 3 if wg[2] > 1 else (2 if wg[1] > 1 else 1)
    if s.capture is not None:
        if start is not None or stop is not None:
            _raise(hipError_t.hipErrorStreamCaptureUnsupported, "start/stop events during capture")
        return s.capture.add_kernel(s, f, params, wg, tuple(block), shared, dims)
    _apply_order(s)
    try:
        if start is not None:
            hipEventRecord(start, s)
        s.vgpu.launch(f.kobj, sig, params, wg, tuple(block), shared, dims)
        if stop is not None:
            hipEventRecord(stop, s)
    except (HsaError, HipError):
        raise
    except Exception as exc:  # struct.error / TypeError: an argument or dimension of the wrong type or range
        _raise(hipError_t.hipErrorInvalidValue, f"{f.name}({sig.text}): bad argument or dimension: {exc}", exc)


def hipModuleLaunchKernel(f: hipFunction_t, gridDimX: int, gridDimY: int, gridDimZ: int,
                          blockDimX: int, blockDimY: int, blockDimZ: int, sharedMemBytes: int,
                          stream, kernelParams, extra=None) -> None:
    """Launch ``f`` over gridDim blocks of blockDim work-items with ``kernelParams`` (a sequence in
    signature order) or ``extra`` (the packed arguments: see HIP_LAUNCH_PARAM_BUFFER_POINTER).
    Asynchronous: errors of the kernel itself surface at the next sync. The call checks what HIP
    checks (hipErrorInvalidValue: zero or oversized dimensions, over maxThreadsPerBlock work-items,
    shared memory over sharedMemPerBlock, a wrong argument; hipErrorInvalidResourceHandle: no
    function; hipErrorContextIsDestroyed: a destroyed stream); a
    rejected launch leaves the stream as it was and is this thread's last error.
    (Not wrapped in ``_api``: the common case runs inline.)"""
    try:
        s = stream
        if s is None or s is hipStreamLegacy or (type(s) is int and s == 0):
            s = _resolve(s)         # the null stream (and the implicit-capture check), as _launch does first
        if (type(s) is hipStream_t and type(f) is hipFunction_t and extra is None and s.capture is None
                and not s.destroyed and type(gridDimX) is int and type(blockDimX) is int
                and 0 < gridDimX <= 2147483647 and 0 < gridDimY <= 65536 and 0 < gridDimZ <= 65536
                and 0 < blockDimX and 0 < blockDimY and 0 < blockDimZ
                and blockDimX * blockDimY * blockDimZ <= 1024 and 0 <= sharedMemBytes <= 65536
                and not f.co.unloaded):
            # the common case: checked above, as _launch checks it (_launch reports what is wrong)
            n = f.nargs
            kp = kernelParams
            if n == 0:
                ok = kp is None or ((type(kp) is list or type(kp) is tuple) and not kp)
                params = ()
            else:
                params = tuple(kp) if kp is not None else ()
                ok = len(params) == n
                if ok and f.ptrs:
                    for i in f.ptrs:            # a pointer is an int as it is: else _pack_value says
                        if type(params[i]) is not int:      # what it takes (or makes None a null)
                            params = tuple(_pack_value(v, a[2], a[0]) for v, a in zip(params, f.sig.args))
                            break
            if ok:
                if s.null or s.order.v.commands != s.seen:
                    _apply_order(s)             # the legacy null stream's ordering, as in _launch
                if gridDimY == 1 and gridDimZ == 1 and blockDimY == 1 and blockDimZ == 1:
                    dims, grid = 1, (gridDimX * blockDimX, 1, 1)
                else:
                    gy = gridDimY * blockDimY
                    gz = gridDimZ * blockDimZ
                    dims, grid = 3 if gz > 1 else (2 if gy > 1 else 1), (gridDimX * blockDimX, gy, gz)
                try:
                    s.vgpu.launch(f.kobj, f.sig, params, grid, (blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                                  dims)
                    return
                except (HsaError, HipError):
                    raise
                except Exception as exc:  # noqa: BLE001 - struct.error / TypeError: a bad argument
                    _raise(hipError_t.hipErrorInvalidValue, f"{f.name}({f.sig.text}): bad argument: {exc}", exc)
        _launch(f, (gridDimX, gridDimY, gridDimZ), (blockDimX, blockDimY, blockDimZ), sharedMemBytes, s,
                kernelParams, extra, False)
    except HsaError as exc:
        raise _from_hsa(exc) from exc
    except HipError as exc:
        _set_last(exc.error)
        raise
    except _PLATFORM_ERRORS as exc:     # the runtime could not come up (the null stream's first use)
        raise _from_platform(exc) from exc
    except TypeError as exc:        # a dimension that cannot be compared with an int
        _raise(hipError_t.hipErrorInvalidValue, f"bad launch dimension or size: {exc}", exc)


@_api
def hipExtModuleLaunchKernel(f: hipFunction_t, globalWorkSizeX: int, globalWorkSizeY: int, globalWorkSizeZ: int,
                             localWorkSizeX: int, localWorkSizeY: int, localWorkSizeZ: int,
                             sharedMemBytes: int = 0, stream=None, kernelParams=None, extra=None,
                             startEvent=None, stopEvent=None, flags: int = 0) -> None:
    """AMD's launch by global work size (work-items, not blocks), as MIOpen launches its kernels: a
    grid smaller than a block shrinks the block to it; ``startEvent`` is recorded just before the
    kernel and ``stopEvent`` just after it. ``flags`` (hipExtAnyOrderLaunch) is accepted; streams
    stay in order. Zero sizes or a block over maxThreadsPerBlock are hipErrorInvalidValue (as the
    hip-tests cases expect); a global size may be any u32, as in CLR."""
    if type(flags) is not int or flags < 0:
        _raise(hipError_t.hipErrorInvalidValue, f"flags must be a non-negative int, not {flags!r}")
    _launch(f, (globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ), (localWorkSizeX, localWorkSizeY, localWorkSizeZ),
            sharedMemBytes, stream, kernelParams, extra, True, startEvent, stopEvent)
