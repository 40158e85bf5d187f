"""occupancy_common.hh: the checks the occupancy tests share (the nullptr SECTIONs of its negative
helpers have no Python form: the out-pointers are return values)."""
import pytest

from hostside import hip

__all__ = ["max_potential_block_size", "max_active_blocks_per_multiprocessor", "expect", "props"]


def props():
    return hip.hipGetDeviceProperties(0)


def max_potential_block_size(func, max_threads_per_block: int) -> None:
    """MaxPotentialBlockSize: ``func() -> (gridSize, blockSize)`` in range."""
    grid_size, block_size = func()
    assert grid_size > 0
    assert block_size > 0
    assert block_size <= max_threads_per_block
    assert grid_size * block_size < 2**32


def max_active_blocks_per_multiprocessor(func, block_size: int, max_threads_per_mp: int) -> None:
    """MaxActiveBlocksPerMultiprocessor: ``func() -> numBlocks`` in range."""
    num_blocks = func()
    assert num_blocks > 0
    assert num_blocks * block_size <= max_threads_per_mp


def expect(err, fn, *args):
    """HIP_CHECK_ERROR(fn(args...), err)."""
    with pytest.raises(hip.HipError) as ei:
        fn(*args)
    assert ei.value.error == err, f"{ei.value.name}, expected {err.name}: {ei.value}"
