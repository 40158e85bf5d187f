"""Events: incompatible or unknown creation flags, and synchronize / query / destroy of no event."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/event/Unit_hipEvent_Negative.cc"

# Unit_hipEventCreate_NullCheck and Unit_hipEventCreateWithFlags_NullCheck pass a nullptr out-param (no
# Python form): NOT_PORTED.md.


def _fails(call, *args):
    with pytest.raises(hip.HipError) as ei:
        call(*args)
    return ei.value.error


def test_Unit_hipEventCreate_IncompatibleFlags(mod):
    invalid = hip.hipError_t.hipErrorInvalidValue
    assert _fails(hip.hipEventCreateWithFlags, hip.hipEventInterprocess) == invalid
    assert _fails(hip.hipEventCreateWithFlags, hip.hipEventReleaseToDevice | hip.hipEventReleaseToSystem) == invalid
    all_flags = (hip.hipEventReleaseToDevice | hip.hipEventReleaseToSystem | hip.hipEventBlockingSync
                 | hip.hipEventDisableTiming | hip.hipEventDefault | hip.hipEventInterprocess)
    assert _fails(hip.hipEventCreateWithFlags, all_flags) == invalid       # the HT_AMD expectation
    assert _fails(hip.hipEventCreateWithFlags, 0x08000000) == invalid


def test_Unit_hipEventSynchronize_NullCheck(mod):
    assert _fails(hip.hipEventSynchronize, None) != hip.hipError_t.hipSuccess


def test_Unit_hipEventQuery_NullCheck(mod):
    assert _fails(hip.hipEventQuery, None) != hip.hipError_t.hipSuccess


def test_Unit_hipEventDestroy_NullCheck(mod):
    assert _fails(hip.hipEventDestroy, None) != hip.hipError_t.hipSuccess
