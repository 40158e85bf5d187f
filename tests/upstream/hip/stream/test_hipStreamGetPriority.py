"""hipStreamGetPriority: the null stream's and created streams' priorities, clamped to the device range."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamGetPriority.cc"

# Unit_hipStreamGetPriority_nullptr_nullptr and _stream_nullptr pass a nullptr out-param (no Python
# form): NOT_PORTED.md.


@pytest.mark.parametrize("section", ["null", "default", "high", "higher", "low", "lower"])
@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipStreamGetPriority_happy(mod, device, section):
    hip.hipSetDevice(device)
    low, high = hip.hipDeviceGetStreamPriorityRange()
    if section == "null":
        priority = hip.hipStreamGetPriority(None)
        assert low >= priority >= high
        return
    if section == "default":
        s = hip.hipStreamCreate()
        priority = hip.hipStreamGetPriority(s)
        assert low >= priority >= high     # a lower value is a higher priority
    elif section == "high":
        s = hip.hipStreamCreateWithPriority(hip.hipStreamDefault, high)
        assert hip.hipStreamGetPriority(s) == high
    elif section == "higher":
        s = hip.hipStreamCreateWithPriority(hip.hipStreamNonBlocking, high - 1)
        assert hip.hipStreamGetPriority(s) == high
    elif section == "low":
        s = hip.hipStreamCreateWithPriority(hip.hipStreamDefault, low)
        assert hip.hipStreamGetPriority(s) == low
    else:
        s = hip.hipStreamCreateWithPriority(hip.hipStreamNonBlocking, low + 1)
        assert hip.hipStreamGetPriority(s) == low
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamGetPriority_nullptr_priority(mod):
    hip.hipStreamGetPriority(None)


def test_Unit_hipStreamGetPriority_stream_priority(mod):
    s = hip.hipStreamCreate()
    hip.hipStreamGetPriority(s)
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamGetPriority_StreamsWithCUMask(mod):
    low, high = hip.hipDeviceGetStreamPriorityRange()
    normal = int((low + high) / 2)          # C's int division (truncation towards 0)
    assert low != high                      # priorities are supported
    s = hip.hipExtStreamCreateWithCUMask(1, [0xFFFFFFFF])
    assert hip.hipStreamGetPriority(s) == normal
    hip.hipStreamDestroy(s)
