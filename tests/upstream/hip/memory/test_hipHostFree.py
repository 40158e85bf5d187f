"""hipHostFree: a null pointer, a pointer that is not a pinned allocation, a double free, and frees
from several threads at once."""
import threading

import numpy as np
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipHostFree.cc"


# SECTION "Host registered memory" needs hipHostRegister (not in hdemu).
@pytest.mark.parametrize("section", ["Nullptr", "Invalid ptr"])
def test_Unit_hipHostFree_InvalidMemory(platform, section):
    if section == "Nullptr":
        hip.hipHostFree(None)
        return
    d = hip.hipMalloc(64)           # the address of something that is not a hipHostMalloc allocation
    try:
        with pytest.raises(hip.HipError) as ei:
            hip.hipHostFree(d + 8)
        assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    finally:
        hip.hipFree(d)


def test_Unit_hipHostFree_DoubleFree(platform):
    ptr = hip.hipHostMalloc(1024)
    hip.hipHostFree(ptr)
    with pytest.raises(hip.HipError) as ei:
        hip.hipHostFree(ptr)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


def test_Unit_hipHostFree_Multithreading(platform):
    ptrs = [hip.hipHostMalloc(1024) for _ in range(10)]
    errors = []

    def free(ptr):
        try:
            hip.hipHostFree(ptr)
            assert hip.hipStreamQuery(None) == hip.hipError_t.hipSuccess
        except BaseException as exc:  # noqa: BLE001 - HIP_CHECK_THREAD: reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=free, args=(p,)) for p in ptrs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
