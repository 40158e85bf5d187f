"""hipStreamGetFlags: the flags a stream was created with; the null stream is an invalid value on AMD."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamGetFlags.cc"

@pytest.mark.parametrize("flag_name", ["hipStreamDefault", "hipStreamNonBlocking"])
def test_Unit_hipStreamGetFlags_Basic(mod, flag_name):
    expected = getattr(hip, flag_name)
    s = hip.hipStreamCreateWithFlags(expected)
    assert hip.hipStreamGetFlags(s) & expected == expected
    hip.hipStreamDestroy(s)


def test_Unit_hipStreamGetFlags_Negative(mod):
    valid = hip.hipStreamCreate()
    # "Nullptr Stream && Valid Flags" (the HT_AMD expectation, EXSWCPHIPT-17)
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamGetFlags(None)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
    # "Valid Stream && Nullptr Flags": a nullptr out-param has no Python form
    hip.hipStreamDestroy(valid)


def test_Unit_hipStreamGetFlags_StreamsCreatedWithCUMask(mod):
    s = hip.hipExtStreamCreateWithCUMask(1, [0xFFFFFFFF])
    assert hip.hipStreamGetFlags(s) == hip.hipStreamDefault
    hip.hipStreamDestroy(s)
