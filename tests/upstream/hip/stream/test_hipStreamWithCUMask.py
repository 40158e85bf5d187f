"""hipExtStreamCreateWithCUMask: streams with a CU mask run their work (a callback checks the data;
four streams on disjoint masks, some of which enable no CU of the device); an all-disabled mask
reads back as every CU; a zero size or no mask is refused. Sizes are scaled down (upstream: 4 Mi and
25 Mi floats); the timings upstream prints are not asserted."""
import threading

import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamWithCUMask.cc"
N = 64 * 1024
CONSTANT = np.float32(1.618)
GRIDSIZE, BLOCKSIZE = 512, 256
NUM_CU_PARTITIONS = 4


def _default_cu_mask(cus: int) -> list[int]:
    out, temp, bit = [], 0, 0
    for _ in range(cus):
        temp |= (1 << bit) & 0xFFFFFFFF
        if bit >= 32:
            out.append(temp)
            temp, bit = 1, 0
        bit += 1
    if bit:
        out.append(temp)
    return out


def _disabled_cu_mask(cus: int) -> list[int]:
    out, bit = [], 0
    for _ in range(cus):
        if bit >= 32:
            out.append(0)
            bit = 0
        bit += 1
    if bit:
        out.append(0)
    return out


def _square(mod, stream, a_d, c_d, n) -> None:
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(mod, "vector_square"), GRIDSIZE, 1, 1, BLOCKSIZE, 1, 1, 0,
                              stream, [a_d, c_d, n])


def test_Unit_hipExtStreamCreateWithCUMask_ValidateCallbackFunc(mod):
    nbytes = N * 4
    a_h = (CONSTANT + np.arange(N, dtype=np.float32)).astype(np.float32)
    c_h = np.zeros(N, dtype=np.float32)
    a_d, c_d = hip.hipMalloc(nbytes), hip.hipMalloc(nbytes)
    hip.hipSetDevice(0)
    default = _default_cu_mask(hip.hipGetDeviceProperties(0).multiProcessorCount)
    s = hip.hipExtStreamCreateWithCUMask(len(default), default)
    done, seen = threading.Event(), {}

    def callback(stream, status, user_data):
        seen.update(status=status, user_none=user_data is None, passed=bool(np.array_equal(c_h, a_h * a_h)))
        done.set()
    try:
        hip.hipMemcpyAsync(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice, s)
        _square(mod, s, a_d, c_d, N)
        assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
        hip.hipMemcpyAsync(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost, s)
        hip.hipStreamAddCallback(s, callback, None, 0)
        assert done.wait(30), "the callback did not run"
    finally:
        hip.hipStreamDestroy(s)
        hip.hipFree(c_d)
        hip.hipFree(a_d)
    assert seen["status"] == hip.hipError_t.hipSuccess and seen["user_none"]
    assert seen["passed"]


def test_Unit_hipExtStreamCreateWithCUMask_Functionality(mod):
    hip.hipSetDevice(0)
    props = hip.hipGetDeviceProperties(0)
    nbytes = N * 4
    h_a = (CONSTANT + np.arange(N, dtype=np.float32)).astype(np.float32)
    h_c = np.empty(N, dtype=np.float32)
    per_group = 2 if props.major >= 10 else 1
    group_mask = 2 ** per_group - 1
    d_a, d_c, streams, masks = [], [], [], []
    try:
        for p in range(NUM_CU_PARTITIONS):       # unique CU masks in whole dwords for each stream
            d_a.append(hip.hipMalloc(nbytes))
            d_c.append(hip.hipMalloc(nbytes))
            mask, temp, bit = [], 0, per_group * p
            for _ in range(p, props.multiProcessorCount, per_group * 4):
                temp |= (group_mask << bit) & 0xFFFFFFFF
                if bit >= 32:
                    mask.append(temp)
                    temp, bit = (group_mask << per_group * p) & 0xFFFFFFFF, per_group * p
                bit += per_group * 4
            if bit:
                mask.append(temp)
            masks.append(mask)
            streams.append(hip.hipExtStreamCreateWithCUMask(len(mask), mask))
            hip.hipMemcpy(d_a[p], h_a, nbytes, hip.hipMemcpyHostToDevice)
        _square(mod, streams[0], d_a[0], d_c[0], N)
        assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
        hip.hipDeviceSynchronize()
        hip.hipMemcpy(h_c, d_c[0], nbytes, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(h_c, h_a * h_a)
        for p in range(NUM_CU_PARTITIONS):
            _square(mod, streams[p], d_a[p], d_c[p], N)
            assert hip.hipGetLastError() == hip.hipError_t.hipSuccess
        hip.hipDeviceSynchronize()
        for p in range(NUM_CU_PARTITIONS):
            h_c[:] = 0
            hip.hipMemcpy(h_c, d_c[p], nbytes, hip.hipMemcpyDeviceToHost)
            assert np.array_equal(h_c, h_a * h_a), f"stream {p} with CU mask {masks[p]}"
    finally:
        for s in streams:
            hip.hipStreamDestroy(s)
        for p in d_a + d_c:
            hip.hipFree(p)


def test_Unit_hipExtStreamCreateWithCUMask_AllCUsMasked(mod):
    hip.hipSetDevice(0)
    cus = hip.hipGetDeviceProperties(0).multiProcessorCount
    disabled = _disabled_cu_mask(cus)
    s = hip.hipExtStreamCreateWithCUMask(len(disabled), disabled)
    cu_mask = hip.hipExtStreamGetCUMask(s, cus // 32 + 1)      # the default mask is reported
    default = _default_cu_mask(cus)
    assert cu_mask[:len(default)] == default
    hip.hipStreamDestroy(s)


# SECTION "stream is nullptr" (the out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["cuMaskSize is 0", "cuMask is nullptr"])
def test_Unit_hipExtStreamCreateWithCUMask_NegTst(mod, section):
    hip.hipSetDevice(0)
    default = _default_cu_mask(hip.hipGetDeviceProperties(0).multiProcessorCount)
    with pytest.raises(hip.HipError):          # REQUIRE_FALSE(... == hipSuccess)
        if section == "cuMaskSize is 0":
            hip.hipExtStreamCreateWithCUMask(0, default)
        else:
            hip.hipExtStreamCreateWithCUMask(len(default), None)
