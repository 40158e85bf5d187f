"""matmul.cpp as a code object: the matrix-multiply kernels, the delay kernels and the device global
``deviceGlobal`` of the hipModuleLaunchKernel / hipExtModuleLaunchKernel functional tests.

The delay kernels run for milliseconds where upstream's run for seconds (the suite must stay fast);
upstream initialises deviceGlobal to 1, hdemu's device globals start zero-filled."""
import time

import numpy as np

from shm_layout.kernels import kernel

__hdemu_globals__ = {"deviceGlobal": "i32"}


def _matmul(ctx, A, B, N):
    """Row-major N x N product of A and B over the work-items that fall inside the matrix."""
    rows = min(int(ctx.grid[1]), N)
    cols = min(int(ctx.grid[0]), N)
    a = A[:N * N].reshape(N, N)[:rows].astype(np.int64)
    b = B[:N * N].reshape(N, N)[:, :cols].astype(np.int64)
    return (a @ b).astype(np.int32), rows, cols


@kernel("i32 clockrate, i32* A, i32* B, i32* C, i32 N")
def matmulK(ctx, clockrate, A, B, C, N):
    out, rows, cols = _matmul(ctx, A, B, N)
    C[:N * N].reshape(N, N)[:rows, :cols] = out


@kernel("i32* A, i32* B, i32* C, i32* D, i32 N")
def KernelandExtraParams(ctx, A, B, C, D, N):
    out, rows, cols = _matmul(ctx, A, B, N)
    C[:N * N].reshape(N, N)[:rows, :cols] = out
    D[:N * N].reshape(N, N)[:rows, :cols] = out


def _delay(ms: int) -> None:
    time.sleep(ms / 1000.0)


@kernel("i32 clockrate")
def SixteenSecKernel(ctx, clockrate):
    _delay(16)


@kernel("i32 clockrate")
def TwoSecKernel(ctx, clockrate):
    _delay(2)


@kernel("i32 clockrate")
def FourSecKernel(ctx, clockrate):
    _delay(4)


@kernel("")
def dummyKernel(ctx):
    pass
