"""A kernel writing a buffer, then hipMemsetAsync / hipMemsetD32/D16/D8Async of the same buffer on the same
stream (or hipStreamPerThread with a synchronization between): after each round the buffer holds the memset
value everywhere, on every device. (Upstream's hipDeviceReset at the end of the per-thread SECTION is
left out: it would tear down the shared platform.)"""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetAsyncAndKernel.cc"

ITER = 6
N = 16 * 1024                           # upstream: 1 Mi elements
TPB = 256
# SECTION -> (element type, memset value as that type, memset call, vector_square kernel)
SECTIONS = {
    "hipMemsetAsync With Kernel": (np.int8, 0x42, "hipMemsetAsync", "memset_vector_square_i8"),
    "hipMemsetAsync With Kernel using hipStreamPerThread stream obj":
        (np.int8, 0x42, "hipMemsetAsync", "memset_vector_square_i8"),
    "hipMemsetD32Async With Kernel": (np.int32, -0x21524111, "hipMemsetD32Async", "stream_vector_square_i32"),
    "hipMemsetD16Async With Kernel": (np.int16, -0x2153, "hipMemsetD16Async", "memset_vector_square_i16"),
    "hipMemsetD8Async With Kernel": (np.int8, -0x22, "hipMemsetD8Async", "memset_vector_square_i8"),
}


@pytest.mark.parametrize("section", list(SECTIONS))
@pytest.mark.parametrize("dev", [0, 1])
def test_Unit_hipMemsetAsync_VerifyExecutionWithKernel(kmod, dev, section):
    assert hip.hipGetDeviceCount() > dev
    hip.hipSetDevice(dev)
    dtype, val, api, kname = SECTIONS[section]
    per_thread = "hipStreamPerThread" in section
    nbytes = N * np.dtype(dtype).itemsize
    a_h = np.zeros(N, dtype=dtype)
    b_h = np.arange(N).astype(dtype)
    b_d, c_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    hip.hipMemcpy(b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    stream = hip.hipStreamCreate()
    f = hip.hipModuleGetFunction(kmod, kname)
    blocks = (N + TPB - 1) // TPB
    validate_count = 0
    for _ in range(ITER):
        s = hip.hipStreamPerThread if per_thread else stream
        hip.hipModuleLaunchKernel(f, blocks, 1, 1, TPB, 1, 1, 0, s, [b_d, c_d, N])
        hip.hipGetLastError()
        if per_thread:
            hip.hipStreamSynchronize(s)
        if api == "hipMemsetAsync":
            hip.hipMemsetAsync(c_d, val, N, s)        # N bytes of char
        else:
            getattr(hip, api)(c_d, val, N, s)
        hip.hipStreamSynchronize(s)
        hip.hipMemcpy(a_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
        validate_count += int(np.count_nonzero(a_h == dtype(val)))
    hip.hipFree(b_d)
    hip.hipFree(c_d)
    hip.hipStreamDestroy(stream)
    assert validate_count == ITER * N
