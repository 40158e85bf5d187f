"""hipMemcpyDtoD from device 0 to device 1, then a kernel on device 1 adds the copies (int, float, double).
The case runs upstream's "no P2P" path: it was ported before hdemu had hipDeviceCanAccessPeer /
hipDeviceEnablePeerAccess (the P2P path is not yet ported: NOT_PORTED.md)."""
import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemcpyDtoD.cc"

NUM_ELM = 1024
KERNELS = {np.int32: "vectorADD_i32", np.float32: "vectorADD", np.float64: "memcpy_vector_add_f64"}
TYPES = [pytest.param(np.int32, id="int"), pytest.param(np.float32, id="float"),
         pytest.param(np.float64, id="double")]


def init_host(dtype):
    """HipTest::initArrays' host values: A = 3.146 + i, B = 1.618 + i (converted to the type)."""
    i = np.arange(NUM_ELM)
    return (3.146 + i).astype(dtype), (1.618 + i).astype(dtype), np.zeros(NUM_ELM, dtype=dtype)


def vector_add(kmod, dtype, a, b, c, stream=None):
    hip.hipModuleLaunchKernel(hip.hipModuleGetFunction(kmod, KERNELS[dtype]), 1, 1, 1, 1, 1, 1, 0, stream,
                              [a, b, c, NUM_ELM])


def basic(kmod, dtype, is_async):
    """Unit_hipMemcpyDtoD[Async]_Basic."""
    assert hip.hipGetDeviceCount() > 1
    nbytes = NUM_ELM * np.dtype(dtype).itemsize
    hip.hipSetDevice(0)
    a_h, b_h, c_h = init_host(dtype)
    a_d, b_d, c_d = (hip.hipMalloc(nbytes) for _ in range(3))
    hip.hipSetDevice(1)
    x_d, y_d, z_d = (hip.hipMalloc(nbytes) for _ in range(3))
    hip.hipSetDevice(0)
    hip.hipMemcpy(a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    hip.hipMemcpy(b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    vector_add(kmod, dtype, a_d, b_d, c_d)
    hip.hipGetLastError()
    hip.hipMemcpy(c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    hip.hipDeviceSynchronize()
    assert np.array_equal(c_h, a_h + b_h)
    hip.hipSetDevice(1)
    c_h[:] = 0
    if is_async:
        stream = hip.hipStreamCreate()
        hip.hipMemcpyDtoDAsync(x_d, a_d, nbytes, stream)
        hip.hipMemcpyDtoDAsync(y_d, b_d, nbytes, stream)
        hip.hipStreamSynchronize(stream)
        vector_add(kmod, dtype, x_d, y_d, z_d)
        hip.hipGetLastError()
        hip.hipMemcpyDtoHAsync(c_h, z_d, nbytes, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipStreamDestroy(stream)
    else:
        hip.hipMemcpyDtoD(x_d, a_d, nbytes)
        hip.hipMemcpyDtoD(y_d, b_d, nbytes)
        vector_add(kmod, dtype, x_d, y_d, z_d)
        hip.hipGetLastError()
        hip.hipMemcpyDtoH(c_h, z_d, nbytes)
    hip.hipDeviceSynchronize()
    assert np.array_equal(c_h, a_h + b_h)
    for p in (a_d, b_d, c_d, x_d, y_d, z_d):
        hip.hipFree(p)


@pytest.mark.parametrize("dtype", TYPES)
def test_Unit_hipMemcpyDtoD_Basic(kmod, dtype):
    basic(kmod, dtype, False)
