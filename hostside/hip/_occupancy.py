"""The occupancy calculator, with CLR's formula, argument checks and error codes
(hipamd/src/hip_platform.cpp: ihipOccupancyMaxActiveBlocksPerMultiprocessor and its callers) and the
header's hipOccupancyMaxPotentialBlockSizeVariableSMem(WithFlags) (hip_runtime_api.h).

The ``hipModuleOccupancy*`` calls take a hipFunction_t and say hipErrorInvalidValue for no function;
the ``hipOccupancy*`` calls take the kernel's host symbol in HIP (hdemu has none: a hipFunction_t
stands in) and say hipErrorInvalidDeviceFunction. Values are returned (the C out-pointers are
dropped, so their null-pointer errors have no Python form).
"""
from __future__ import annotations

from ._context import _current_device, _st
from ._device import DEVICE_LIMITS, _properties
from ._errors import _api, _raise, hipError_t
from ._errors import _is_int as _int
from ._funcattr import _function, hipFuncGetAttributes
from ._limits import MAX_THREADS_PER_BLOCK, WARP_SIZE

__all__ = ["hipOccupancyDefault", "hipOccupancyDisableCachingOverride",
           "hipModuleOccupancyMaxPotentialBlockSize", "hipModuleOccupancyMaxPotentialBlockSizeWithFlags",
           "hipOccupancyMaxPotentialBlockSize", "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
           "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
           "hipOccupancyMaxActiveBlocksPerMultiprocessor", "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
           "hipOccupancyMaxPotentialBlockSizeVariableSMem", "hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags"]

#: the flags of the *WithFlags calls (hip_runtime_api.h); CLR accepts these two and nothing else
hipOccupancyDefault = 0x00
hipOccupancyDisableCachingOverride = 0x01

_INVAL = hipError_t.hipErrorInvalidValue
_NO_FUNC = hipError_t.hipErrorInvalidDeviceFunction


def _occupancy(block, dyn_shared, potential: bool):
    """CLR's ihipOccupancyMaxActiveBlocksPerMultiprocessor for a gfx9 device and a kernel that uses
    no registers or static LDS: (blocks per CU, blocks per grid, best block size). The waves a CU
    holds give maxThreadsPerMultiProcessor work-items; LDS (sharedMemPerMultiprocessor) limits blocks
    that ask for dynamic shared memory."""
    if not _int(dyn_shared) or dyn_shared < 0:
        _raise(_INVAL, f"dynSharedMemPerBlk must be a non-negative int, not {dyn_shared!r}")
    if not _int(block):
        _raise(_INVAL, f"the block size must be an int, not {block!r}")
    max_wg = MAX_THREADS_PER_BLOCK
    if not potential:
        if block <= 0:
            _raise(_INVAL, f"blockSize must be positive, not {block}")
        if block > max_wg:
            return 0, 0, 0
    elif block <= 0 or block > max_wg:
        block = max_wg
    alu_threads = DEVICE_LIMITS["maxThreadsPerMultiProcessor"]
    lds = DEVICE_LIMITS["sharedMemPerMultiprocessor"]
    lds_wgs = lds // dyn_shared if dyn_shared else 2**31 - 1
    aligned = -(-int(block) // WARP_SIZE) * WARP_SIZE
    per_cu = min(alu_threads // aligned, lds_wgs)
    best = min(alu_threads, aligned)
    cus = _properties(_st().rt, _current_device())["multiProcessorCount"]
    return per_cu, cus * min(alu_threads // best, lds_wgs), best


def _check_flags(flags) -> None:
    if not _int(flags) or flags not in (hipOccupancyDefault, hipOccupancyDisableCachingOverride):
        _raise(_INVAL, f"flags must be hipOccupancyDefault or hipOccupancyDisableCachingOverride, not {flags!r}")


@_api
def hipModuleOccupancyMaxPotentialBlockSize(f, dynSharedMemPerBlk: int = 0, blockSizeLimit: int = 0):
    """(gridSize, blockSize): the block size (a multiple of warpSize, at most ``blockSizeLimit``
    when that is in (0, maxThreadsPerBlock]) that fills a CU, and the grid that fills every CU of the
    current device with it (CLR's calculation; see ``_occupancy``). No function is
    hipErrorInvalidValue."""
    _function(f, _INVAL)
    _per_cu, grid, best = _occupancy(blockSizeLimit, dynSharedMemPerBlk, True)
    return grid, best


@_api
def hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f, dynSharedMemPerBlk: int = 0, blockSizeLimit: int = 0,
                                                     flags: int = hipOccupancyDefault):
    """hipModuleOccupancyMaxPotentialBlockSize with ``flags`` (hipOccupancyDefault or
    hipOccupancyDisableCachingOverride, which changes nothing; anything else is hipErrorInvalidValue,
    checked after the function as in CLR)."""
    _function(f, _INVAL)
    _check_flags(flags)
    _per_cu, grid, best = _occupancy(blockSizeLimit, dynSharedMemPerBlk, True)
    return grid, best


@_api
def hipOccupancyMaxPotentialBlockSize(f, dynSharedMemPerBlk: int = 0, blockSizeLimit: int = 0):
    """As hipModuleOccupancyMaxPotentialBlockSize, for ``f`` a hipFunction_t (hdemu has no host
    symbols); anything else is hipErrorInvalidDeviceFunction."""
    _function(f, _NO_FUNC)
    _per_cu, grid, best = _occupancy(blockSizeLimit, dynSharedMemPerBlk, True)
    return grid, best


@_api
def hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, blockSize: int, dynSharedMemPerBlk: int = 0) -> int:
    """How many blocks of ``blockSize`` work-items (rounded up to warpSize) fit one CU at once:
    maxThreadsPerMultiProcessor / blockSize, fewer when dynamic shared memory limits them; 0 for a
    block over maxThreadsPerBlock. blockSize <= 0 or no function is hipErrorInvalidValue."""
    _function(f, _INVAL)
    return _occupancy(blockSize, dynSharedMemPerBlk, False)[0]


@_api
def hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, blockSize: int, dynSharedMemPerBlk: int = 0,
                                                                flags: int = hipOccupancyDefault) -> int:
    """hipModuleOccupancyMaxActiveBlocksPerMultiprocessor with ``flags`` (as
    hipModuleOccupancyMaxPotentialBlockSizeWithFlags checks them)."""
    _function(f, _INVAL)
    _check_flags(flags)
    return _occupancy(blockSize, dynSharedMemPerBlk, False)[0]


@_api
def hipOccupancyMaxActiveBlocksPerMultiprocessor(f, blockSize: int, dynSharedMemPerBlk: int = 0) -> int:
    """As hipModuleOccupancyMaxActiveBlocksPerMultiprocessor; no function is
    hipErrorInvalidDeviceFunction."""
    _function(f, _NO_FUNC)
    return _occupancy(blockSize, dynSharedMemPerBlk, False)[0]


@_api
def hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, blockSize: int, dynSharedMemPerBlk: int = 0,
                                                          flags: int = hipOccupancyDefault) -> int:
    """hipOccupancyMaxActiveBlocksPerMultiprocessor with ``flags``: as in CLR a bad flag
    (hipErrorInvalidValue) is found before a missing function (hipErrorInvalidDeviceFunction)."""
    _st()
    _check_flags(flags)
    _function(f, _NO_FUNC)
    return _occupancy(blockSize, dynSharedMemPerBlk, False)[0]


@_api
def hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(func, block_size_to_dynamic_smem_size,
                                                           block_size_limit: int = 0, flags: int = 0):
    """(min_grid_size, block_size) for a kernel whose dynamic shared memory depends on its block
    size (``block_size_to_dynamic_smem_size(block_size) -> bytes``), as the HIP header computes it:
    from the limit (0: the function's maxThreadsPerBlock) down by warpSize, the block size that keeps
    most work-items of a CU busy (hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags), and the
    blocks that fill every CU with it. No function is hipErrorInvalidValue (the header checks it
    first), a bad flag too; a size function that does not return a non-negative int as well."""
    if func is None or (_int(func) and func == 0):
        _raise(_INVAL, "func is a null function")
    if not callable(block_size_to_dynamic_smem_size):
        _raise(_INVAL, f"block_size_to_dynamic_smem_size must be callable, not {block_size_to_dynamic_smem_size!r}")
    if not _int(block_size_limit):
        _raise(_INVAL, f"block_size_limit must be an int, not {block_size_limit!r}")
    props = _properties(_st().rt, _current_device())
    per_cu_threads, cus = props["maxThreadsPerMultiProcessor"], props["multiProcessorCount"]
    fmax = hipFuncGetAttributes(func).maxThreadsPerBlock
    limit = fmax if block_size_limit == 0 or fmax < block_size_limit else int(block_size_limit)
    best = (0, 0, 0)       # (threads, block size, blocks per CU)
    for aligned in range(-(-limit // WARP_SIZE) * WARP_SIZE, 0, -WARP_SIZE):
        size = min(limit, aligned)
        blocks = hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            func, size, block_size_to_dynamic_smem_size(size), flags)
        if size * blocks > best[0]:
            best = (size * blocks, size, blocks)
        if best[0] == per_cu_threads:
            break
    return best[2] * cus, best[1]


def hipOccupancyMaxPotentialBlockSizeVariableSMem(func, block_size_to_dynamic_smem_size, block_size_limit: int = 0):
    """hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags with flags 0."""
    return hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(func, block_size_to_dynamic_smem_size,
                                                                  block_size_limit, 0)
