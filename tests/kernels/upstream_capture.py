"""Kernels of the ported stream-capture cases (tests/upstream/hip/graph) that tests/kernels/upstream.py
does not have: the file-local kernels of hipStreamUpdateCaptureDependencies.cc."""
from shm_layout.kernels import kernel


@kernel("f32* a, f32* b, u64 n")
def vectorSet(ctx, a, b, n):
    """vectorSet: B = A."""
    b[:n] = a[:n]


@kernel("f32* a, f32* b, f32* c, u64 n")
def vectorSum(ctx, a, b, c, n):
    """vectorSum: C = A + B + C."""
    c[:n] = a[:n] + b[:n] + c[:n]
