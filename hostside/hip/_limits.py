"""The launch limits of an emulated device: what ``hipModuleLaunchKernel`` checks at the call and what
``hipGetDeviceProperties`` / ``hipDeviceGetAttribute`` report, from one table (ROCm's values for a
gfx9-class GPU: CLR reports maxGridSize as (INT32_MAX, 65536, 65536) blocks)."""
from __future__ import annotations

__all__ = ["MAX_THREADS_PER_BLOCK", "MAX_BLOCK_DIM", "MAX_GRID_DIM", "SHARED_MEM_PER_BLOCK", "WARP_SIZE",
           "MAX_GLOBAL_DIM"]

MAX_THREADS_PER_BLOCK = 1024                 # work-items in one workgroup (maxWorkGroupSize)
MAX_BLOCK_DIM = (1024, 1024, 1024)           # maxThreadsDim
MAX_GRID_DIM = (2**31 - 1, 65536, 65536)     # maxGridSize, in blocks
SHARED_MEM_PER_BLOCK = 65536                 # sharedMemPerBlock: LDS bytes of one workgroup
WARP_SIZE = 64
MAX_GLOBAL_DIM = 2**32 - 1                   # an AQL grid size is a u32 of work-items per dimension
