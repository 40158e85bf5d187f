"""hipModuleGetGlobal: the address and size of a module's device globals (scalars and arrays of int,
float, char and double), checked against the address the kernel sees, and read and written with
hipMemcpyHtoD / hipMemcpyDtoH; the errors for a null, unknown or empty name and a null module."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.module.common import load

UPSTREAM = "ROCm/hip-tests:catch/unit/module/hipModuleGetGlobal.cc"

K_ARRAY_SIZE = 5
TYPES = {"int": np.int32, "float": np.float32, "char": np.int8, "double": np.float64}


@pytest.fixture
def module(platform):
    hip.hipFree(0)
    m = load("get_global_test_module.py")
    yield m
    hip.hipModuleUnload(m)


def _get_global_test(module, dtype, n, global_name):
    size = n * np.dtype(dtype).itemsize
    glob, global_size = hip.hipModuleGetGlobal(module, global_name)
    assert glob != 0
    assert size == global_size
    kernel = hip.hipModuleGetFunction(module, global_name + "_address_validation_kernel")
    equal_addresses = hip.hipMalloc(1)
    try:
        hip.hipMemset(equal_addresses, 0, 1)
        hip.hipModuleLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, None, [glob, equal_addresses])
        hip.hipGetLastError()
        hip.hipDeviceSynchronize()
        ok = np.zeros(1, dtype=np.uint8)
        hip.hipMemcpy(ok, equal_addresses, 1, hip.hipMemcpyDeviceToHost)
        assert ok[0]
    finally:
        hip.hipFree(equal_addresses)
    fill_buffer = np.full(n, 42, dtype=dtype)
    hip.hipMemcpyHtoD(glob, fill_buffer, size)
    read_buffer = np.zeros(n, dtype=dtype)
    hip.hipMemcpyDtoH(read_buffer, glob, size)
    assert np.all(read_buffer == 42)


@pytest.mark.parametrize("kind", ["array", "scalar"])
@pytest.mark.parametrize("type_name", list(TYPES))
def test_Unit_hipModuleGetGlobal_Positive_Basic(module, type_name, kind):
    n, suffix = (K_ARRAY_SIZE, "_arr") if kind == "array" else (1, "_var")
    _get_global_test(module, TYPES[type_name], n, type_name + suffix)


def test_Unit_hipModuleGetGlobal_Positive_Parameters(module):
    # SECTIONs "dptr == nullptr" and "bytes == nullptr" pass a null out-pointer for one of the two
    # results; in Python both are always returned, so the call simply succeeds.
    glob, size = hip.hipModuleGetGlobal(module, "int_var")
    assert glob != 0 and size == 4


@pytest.mark.parametrize("name, error", [
    pytest.param(None, "hipErrorInvalidValue", id="name == nullptr"),
    pytest.param("dummy", "hipErrorNotFound", id="name == invalid name"),
])
def test_Unit_hipModuleGetGlobal_Negative_Parameters(module, name, error):
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleGetGlobal(module, name)
    assert ei.value.error == hip.hipError_t[error]


def test_Unit_hipModuleGetGlobal_Negative_Hmod_Is_Nullptr(platform):
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleGetGlobal(None, "int_var")
    assert ei.value.error == hip.hipError_t.hipErrorInvalidResourceHandle


def test_Unit_hipModuleGetGlobal_Negative_Name_Is_Empty_String(module):
    with pytest.raises(hip.HipError) as ei:
        hip.hipModuleGetGlobal(module, "")
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
