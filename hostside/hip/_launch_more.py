"""The runtime API's launches (hipLaunchKernel, hipExtLaunchKernel) and cooperative launches
(hipLaunchCooperativeKernel, hipModuleLaunchCooperativeKernel), all on ``_module._launch``.

hdemu has no host symbols for kernels: ``function_address`` / ``f`` is the hipFunction_t of
hipModuleGetFunction, and the arguments are values in signature order (kernelParams). ``numBlocks``
and ``dimBlocks`` (gridDim, blockDim) are an int or up to three ints, as a dim3. The checks and codes
are CLR's (hip_platform.cpp ``ihipLaunchKernel``, hip_module.cpp ``ihipLaunchKernel_validate``): the
runtime API launches by global work size (gridDim x blockDim work-items per dimension, at most
UINT32_MAX: hipErrorInvalidConfiguration) and does not check gridDim against maxGridSize on a gfx9
device; zero sizes, a block over maxThreadsPerBlock or shared memory over sharedMemPerBlock are
hipErrorInvalidValue, as for hipModuleLaunchKernel.

A cooperative launch: hdemu runs the whole grid as one vectorised call, so a grid-wide barrier holds
trivially. As in CLR, the grid may not have more blocks than can be co-resident: the grid
hipModuleOccupancyMaxPotentialBlockSize reports for this block size and shared memory
(hipErrorCooperativeLaunchTooLarge). hipLaunchCooperativeKernelMultiDevice is not provided.

In a capturing stream these launches become kernel nodes, as hipModuleLaunchKernel's do; start/stop
events of hipExtLaunchKernel during capture are hipErrorStreamCaptureUnsupported (as
hipExtModuleLaunchKernel's: CLR records them as graph nodes).
"""
from __future__ import annotations

from ._context import hipStream_t
from ._errors import _api, _is_int, _raise, hipError_t
from ._limits import MAX_GLOBAL_DIM, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK
from ._occupancy import hipModuleOccupancyMaxPotentialBlockSize
from ._module import _bad_config, _launch, hipFunction_t
from ._stream import hipEvent_t

__all__ = ["hipLaunchKernel", "hipExtLaunchKernel", "hipLaunchCooperativeKernel",
           "hipModuleLaunchCooperativeKernel", "hipExtAnyOrderLaunch"]

#: hipExtLaunchKernel / hipExtModuleLaunchKernel flag: the kernel may run in any order with the
#: stream's other work (accepted; hdemu's streams stay in order)
hipExtAnyOrderLaunch = 1

_E = hipError_t


def _dim3(d, what: str) -> tuple:
    """A dim3 argument: an int (x) or up to three ints, the missing ones 1. Zeros pass (the launch
    checks report them, as CLR's do); anything else is hipErrorInvalidValue."""
    if _is_int(d):
        d = (d,)
    try:
        t = tuple(d)
    except TypeError:
        t = ()
    if not 1 <= len(t) <= 3 or not all(_is_int(x) and 0 <= x < 2**32 for x in t):
        _raise(_E.hipErrorInvalidValue, f"{what} must be an int or up to 3 u32s (a dim3), not {d!r}")
    return tuple(int(x) for x in t) + (1,) * (3 - len(t))


def _check_stream(stream, err: hipError_t) -> None:
    """CLR's ``hip::isValid(stream)``: a destroyed stream, or an int handle no stream has, is ``err``
    (the null stream, hipStreamPerThread and live streams are resolved by ``_launch``)."""
    if type(stream) is hipStream_t:
        if stream.destroyed:
            _raise(err, f"stream {stream!r} was destroyed")
    elif _is_int(stream) and stream != 0:
        _raise(err, f"{int(stream):#x} is not the handle of a live stream")


def _check_function(f, err: hipError_t) -> hipFunction_t:
    if type(f) is not hipFunction_t:
        _raise(err, f"the function must be a hipFunction_t (from hipModuleGetFunction), not {f!r}")
    return f


def _global_size(grid, block) -> tuple:
    """gridDim x blockDim work-items per dimension; over UINT32_MAX is hipErrorInvalidConfiguration."""
    wg = tuple(g * b for g, b in zip(grid, block))
    if any(w > MAX_GLOBAL_DIM for w in wg):
        _raise(_E.hipErrorInvalidConfiguration, f"grid {grid!r} of blocks {block!r} has over 2**32-1 work-items "
               "in a dimension")
    return wg


def _cooperative(f, wg, block, shared, params) -> None:
    """CLR's checks of a cooperative launch (``ihipLaunchKernel_validate`` with CooperativeGroups),
    after the common ones: the grid's blocks must all be co-resident."""
    bad = _bad_config(f, wg, block, shared, True)
    if bad is not None:
        _raise(bad[0], f"{f.name}: {bad[1]}")
    if f.nargs and params is None:
        _raise(_E.hipErrorInvalidValue, f"{f.name} takes {f.nargs} arguments ({f.sig.text}); kernelParams is None")
    block_size = block[0] * block[1] * block[2]
    most = hipModuleOccupancyMaxPotentialBlockSize(f, int(shared), block_size)[0]
    blocks = (wg[0] * wg[1] * wg[2]) // block_size
    if blocks > most:
        _raise(_E.hipErrorCooperativeLaunchTooLarge,
               f"{f.name}: a cooperative grid of {blocks} blocks of {block_size} work-items "
               f"({shared} bytes of shared memory) exceeds the {most} that can be co-resident")


@_api
def hipLaunchKernel(function_address, numBlocks, dimBlocks, args=None, sharedMemBytes: int = 0,
                    stream=None) -> None:
    """Launch ``function_address`` (a hipFunction_t) over ``numBlocks`` blocks of ``dimBlocks``
    work-items with ``args`` (the argument values in signature order, as kernelParams). As in CLR:
    a destroyed stream is hipErrorInvalidValue, no function hipErrorInvalidDeviceFunction, a grid
    over UINT32_MAX work-items in a dimension hipErrorInvalidConfiguration, then
    hipModuleLaunchKernel's checks (hipErrorInvalidValue)."""
    _check_stream(stream, _E.hipErrorInvalidValue)
    f = _check_function(function_address, _E.hipErrorInvalidDeviceFunction)
    grid, block = _dim3(numBlocks, "numBlocks"), _dim3(dimBlocks, "dimBlocks")
    _launch(f, _global_size(grid, block), block, sharedMemBytes, stream, args, None, True)


@_api
def hipExtLaunchKernel(function_address, numBlocks, dimBlocks, args=None, sharedMemBytes: int = 0,
                       stream=None, startEvent=None, stopEvent=None, flags: int = 0) -> None:
    """hipLaunchKernel with ``startEvent`` recorded just before the kernel and ``stopEvent`` just
    after it (either may be None), as hipExtModuleLaunchKernel does. An event that is not a live
    hipEvent_t is hipErrorInvalidValue (checked first, as CLR's ``hip::isValid``). ``flags``
    (hipExtAnyOrderLaunch) is not checked by CLR beyond that bit; hdemu's streams stay in order."""
    for ev in (startEvent, stopEvent):
        if ev is not None and (type(ev) is not hipEvent_t or ev.destroyed):
            _raise(_E.hipErrorInvalidValue, f"an event must be a live hipEvent_t or None, not {ev!r}")
    if not _is_int(flags):
        _raise(_E.hipErrorInvalidValue, f"flags must be an int, not {flags!r}")
    _check_stream(stream, _E.hipErrorInvalidValue)
    f = _check_function(function_address, _E.hipErrorInvalidDeviceFunction)
    grid, block = _dim3(numBlocks, "numBlocks"), _dim3(dimBlocks, "dimBlocks")
    _launch(f, _global_size(grid, block), block, sharedMemBytes, stream, args, None, True, startEvent, stopEvent)


@_api
def hipLaunchCooperativeKernel(f, gridDim, blockDim, kernelParams=None, sharedMemBytes: int = 0,
                               stream=None) -> None:
    """A cooperative launch of ``f`` (a hipFunction_t) over ``gridDim`` blocks of ``blockDim``
    work-items. CLR's ``hipLaunchCooperativeKernel_common``: a destroyed stream is
    hipErrorContextIsDestroyed, no function hipErrorInvalidDeviceFunction, over UINT32_MAX
    work-items in a dimension or a block over maxThreadsPerBlock hipErrorInvalidConfiguration,
    shared memory over sharedMemPerBlock hipErrorCooperativeLaunchTooLarge; then the checks of
    hipModuleLaunchCooperativeKernel."""
    _check_stream(stream, _E.hipErrorContextIsDestroyed)
    f = _check_function(f, _E.hipErrorInvalidDeviceFunction)
    grid, block = _dim3(gridDim, "gridDim"), _dim3(blockDim, "blockDim")
    wg = _global_size(grid, block)
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        _raise(_E.hipErrorInvalidConfiguration, f"a block of {block!r} has over {MAX_THREADS_PER_BLOCK} work-items")
    if not _is_int(sharedMemBytes) or sharedMemBytes < 0:
        _raise(_E.hipErrorInvalidValue, f"sharedMemBytes must be a non-negative int, not {sharedMemBytes!r}")
    if sharedMemBytes > SHARED_MEM_PER_BLOCK:
        _raise(_E.hipErrorCooperativeLaunchTooLarge,
               f"sharedMemBytes {sharedMemBytes} is over {SHARED_MEM_PER_BLOCK} (sharedMemPerBlock)")
    _cooperative(f, wg, block, sharedMemBytes, kernelParams)
    _launch(f, wg, block, sharedMemBytes, stream, kernelParams, None, True)


@_api
def hipModuleLaunchCooperativeKernel(f, gridDimX: int, gridDimY: int, gridDimZ: int, blockDimX: int,
                                     blockDimY: int, blockDimZ: int, sharedMemBytes: int, stream,
                                     kernelParams) -> None:
    """hipModuleLaunchKernel's form of a cooperative launch (no ``extra``). CLR's checks: a destroyed
    stream is hipErrorInvalidValue, over UINT32_MAX work-items in a dimension
    hipErrorInvalidConfiguration, no function hipErrorInvalidResourceHandle, zero sizes, a block
    over maxThreadsPerBlock or shared memory over sharedMemPerBlock hipErrorInvalidValue, more
    blocks than can be co-resident hipErrorCooperativeLaunchTooLarge (gridDim is not checked
    against maxGridSize)."""
    _check_stream(stream, _E.hipErrorInvalidValue)
    grid = _dim3((gridDimX, gridDimY, gridDimZ), "gridDim")
    block = _dim3((blockDimX, blockDimY, blockDimZ), "blockDim")
    wg = _global_size(grid, block)
    f = _check_function(f, _E.hipErrorInvalidResourceHandle)
    _cooperative(f, wg, block, sharedMemBytes, kernelParams)
    _launch(f, wg, block, sharedMemBytes, stream, kernelParams, None, True)
