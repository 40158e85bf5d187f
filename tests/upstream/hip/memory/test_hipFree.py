"""hipFree / hipHostFree: both wait for the device (a null stream held busy by a host callback), a null
pointer is a no-op, a pointer HIP did not allocate and a second free are hipErrorInvalidValue, and
frees from ten threads at once. The hipArray cases (ImplicitSyncArray, NegativeArray, DoubleArray,
MultiTArray) are in NOT_PORTED.md."""
import threading

import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory.hiptest_common import BlockingContext, host_address

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipFree.cc"

NUM_ALLOCS = 10
#: sizeof(char), sizeof(int), sizeof(float2), sizeof(float4)
TYPE_SIZES = {"char": 1, "int": 4, "float2": 8, "float4": 16}


def _implicit_sync(alloc, free, size_mult):
    ptr = alloc(4 * size_mult)
    b_context = BlockingContext(None)
    with b_context:
        b_context.block_stream()
        assert b_context.is_blocked()
        assert hip.hipStreamQuery(None) == hip.hipError_t.hipErrorNotReady
        b_context.unblock_stream()
        free(ptr)
        assert hip.hipStreamQuery(None) == hip.hipError_t.hipSuccess


@pytest.mark.parametrize("size_mult", [1, 32, 64, 128, 256])
def test_Unit_hipFreeImplicitSyncDev(platform, size_mult):
    _implicit_sync(hip.hipMalloc, hip.hipFree, size_mult)


@pytest.mark.parametrize("size_mult", [1, 32, 64, 128, 256])
def test_Unit_hipFreeImplicitSyncHost(platform, size_mult):
    _implicit_sync(hip.hipHostMalloc, hip.hipHostFree, size_mult)


@pytest.mark.parametrize("section", ["InvalidPtr", "NullPtr"])
def test_Unit_hipFreeNegativeDev(platform, section):
    if section == "NullPtr":
        hip.hipFree(None)
        return
    value = np.zeros(1, dtype=np.int8)          # a host variable
    with pytest.raises(hip.HipError) as ei:
        hip.hipFree(host_address(value))
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


# SECTION "hipHostRegister" needs hipHostRegister (not in hdemu).
@pytest.mark.parametrize("section", ["NullPtr", "InvalidPtr"])
def test_Unit_hipFreeNegativeHost(platform, section):
    if section == "NullPtr":
        hip.hipHostFree(None)
        return
    host = np.zeros(1, dtype=np.int8)
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostFree(host_address(host))
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("width", [32, 512, 1024])
def test_Unit_hipFreeDoubleDevice(platform, width):
    ptr = hip.hipMalloc(width)
    hip.hipFree(ptr)
    with pytest.raises(hip.HipError) as ei:
        hip.hipFree(ptr)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("width", [32, 512, 1024])
def test_Unit_hipFreeDoubleHost(platform, width):
    ptr = hip.hipHostMalloc(width)
    hip.hipHostFree(ptr)
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostFree(ptr)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def _free_from_threads(ptrs, free):
    errors = []

    def worker(ptr):
        try:
            free(ptr)
            assert hip.hipStreamQuery(None) == hip.hipError_t.hipSuccess
        except BaseException as exc:  # noqa: BLE001 - HIP_CHECK_THREAD: reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(p,)) for p in ptrs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


@pytest.mark.parametrize("mult", [1, 32, 64, 128])
@pytest.mark.parametrize("test_type", list(TYPE_SIZES))
def test_Unit_hipFreeMultiTDev(platform, test_type, mult):
    ptrs = [hip.hipMalloc(TYPE_SIZES[test_type] * mult) for _ in range(NUM_ALLOCS)]
    _free_from_threads(ptrs, hip.hipFree)


@pytest.mark.parametrize("mult", [1, 32, 64, 128])
@pytest.mark.parametrize("test_type", list(TYPE_SIZES))
def test_Unit_hipFreeMultiTHost(platform, test_type, mult):
    ptrs = [hip.hipHostMalloc(TYPE_SIZES[test_type] * mult) for _ in range(NUM_ALLOCS)]
    _free_from_threads(ptrs, hip.hipHostFree)
