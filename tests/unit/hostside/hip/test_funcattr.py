"""hipFuncSetAttribute and hipFuncSetSharedMemConfig (hostside/hip/_funcattr.py) with CLR's checks
(hipamd/src/hip_module.cpp), and a launch with the dynamic shared memory CLR lets it take."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
MAXDYN = hip.hipFuncAttributeMaxDynamicSharedMemorySize
CARVE = hip.hipFuncAttributePreferredSharedMemoryCarveout


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 16, "engines": 2})


@pytest.fixture
def inc(mod):
    f = hip.hipModuleGetFunction(mod, "inc")
    yield f
    f.max_dyn_shared.clear()
    hip.hipSetDevice(0)


def expect(err, f, *args):
    with pytest.raises(hip.HipError) as ei:
        f(*args)
    assert ei.value.error == err, f"{f.__name__}: {ei.value.name}, expected {err.name}: {ei.value}"
    assert hip.hipGetLastError() == err


def test_max_dynamic_shared_is_recorded_per_device(inc):
    lds = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMaxSharedMemoryPerBlock, 0)
    assert hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes == lds
    hip.hipFuncSetAttribute(inc, MAXDYN, 1024)
    assert hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes == 1024
    hip.hipSetDevice(1)
    assert hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes == lds     # CLR: the device's kernel
    hip.hipSetDevice(0)
    hip.hipFuncSetAttribute(inc, MAXDYN, lds)           # all the LDS the kernel leaves free
    assert hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes == lds
    # hipFuncGetAttribute reports the free LDS, not the recorded value (hip_module.cpp)
    hip.hipFuncSetAttribute(inc, MAXDYN, 0)
    FA = hip.hipFunction_attribute
    assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, inc) == lds


def test_set_attribute_checks(inc):
    lds = hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes
    expect(E.hipErrorInvalidDeviceFunction, hip.hipFuncSetAttribute, None, MAXDYN, 0)
    expect(E.hipErrorInvalidDeviceFunction, hip.hipFuncSetAttribute, 0, CARVE, 0)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, -1, 0)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, 11, 0)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, MAXDYN, -1)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, MAXDYN, lds + 1)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, CARVE, -2)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetAttribute, inc, CARVE, 101)
    for v in (-1, 0, 50, 100):
        hip.hipFuncSetAttribute(inc, CARVE, v)
    assert hip.hipFuncGetAttributes(inc).preferredShmemCarveout == 0      # CLR keeps no carveout
    for attr in (0, 7, hip.hipFuncAttributeMax):       # in [0, hipFuncAttributeMax]: accepted, ignored
        hip.hipFuncSetAttribute(inc, attr, 12345)
    assert hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes == lds
    assert hip.hipGetLastError() == E.hipSuccess


def test_shared_mem_config_checks(inc):
    for cfg in (hip.hipSharedMemBankSizeDefault, hip.hipSharedMemBankSizeFourByte, hip.hipSharedMemBankSizeEightByte):
        hip.hipFuncSetSharedMemConfig(inc, cfg)
    expect(E.hipErrorInvalidDeviceFunction, hip.hipFuncSetSharedMemConfig, None, 0)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetSharedMemConfig, inc, -1)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetSharedMemConfig, inc, 3)


@pytest.mark.parametrize("limit", ["raised", "lowered"])
def test_launch_takes_the_device_lds_whatever_the_attribute(inc, limit):
    """CLR checks a launch's sharedMemBytes against the device's LDS only: with the attribute raised
    to all of it, or lowered to 0, a launch asking for all of it runs; one byte more is refused."""
    lds = hip.hipFuncGetAttributes(inc).maxDynamicSharedSizeBytes
    hip.hipFuncSetAttribute(inc, MAXDYN, lds if limit == "raised" else 0)
    p = hip.hipMalloc(4 * 64)
    try:
        hip.hipMemset(p, 0, 4 * 64)
        hip.hipModuleLaunchKernel(inc, 1, 1, 1, 64, 1, 1, lds, None, [p, 64])
        hip.hipDeviceSynchronize()
        out = np.empty(64, np.int32)
        hip.hipMemcpy(out, p, 4 * 64, hip.hipMemcpyDeviceToHost)
        assert (out == 1).all()
        expect(E.hipErrorInvalidValue, hip.hipModuleLaunchKernel, inc, 1, 1, 1, 64, 1, 1, lds + 1, None, [p, 64])
    finally:
        hip.hipFree(p)
