"""hipStreamGetDevice: the device of the null, per-thread and created streams, from several threads and
after the current device changed."""
import threading

import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamGetDevice.cc"

# Unit_hipStreamGetDevice_Negative passes only nullptr out-params (no Python form): NOT_PORTED.md.
# hipDeviceGet(&d, ordinal) is the identity on AMD (hipDevice_t is the ordinal): the ordinal is used.

NUMBER_OF_THREADS = 10


@pytest.mark.parametrize("section", ["null", "per_thread", "created"])
def test_Unit_hipStreamGetDevice_Usecase(mod, section):
    count = hip.hipGetDeviceCount()
    assert count != 0
    if section == "null":
        assert hip.hipStreamGetDevice(None) == 0
    elif section == "per_thread":
        assert hip.hipStreamGetDevice(hip.hipStreamPerThread) == 0
    else:
        for i in range(count):
            hip.hipSetDevice(i)
            s = hip.hipStreamCreate()
            assert hip.hipStreamGetDevice(s) == i
            hip.hipStreamDestroy(s)


def test_Unit_hipStreamGetDevice_MThread(mod):
    results = [None] * NUMBER_OF_THREADS

    def body(idx):
        try:
            s = hip.hipStreamCreate()
            results[idx] = hip.hipStreamGetDevice(s) == 0
            hip.hipStreamDestroy(s)
        except Exception as exc:    # reported by the main thread
            results[idx] = exc

    threads = [threading.Thread(target=body, args=(i,)) for i in range(NUMBER_OF_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(r is True for r in results), results


def test_Unit_hipStreamGetDevice_SetDiffDevice(mod):
    count = hip.hipGetDeviceCount()
    assert count >= 2
    for i in range(count):
        hip.hipSetDevice(i)
        s = hip.hipStreamCreate()
        for j in range(count):
            if i != j:
                hip.hipSetDevice(j)
                assert hip.hipStreamGetDevice(s) == i
        hip.hipStreamDestroy(s)


def test_Unit_hipStreamGetDevice_NullStream(mod):
    count = hip.hipGetDeviceCount()
    assert count != 0
    for i in range(count):
        hip.hipSetDevice(i)
        assert hip.hipStreamGetDevice(0) == i
