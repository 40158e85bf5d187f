"""hipStreamCreateWithFlags: bad flags, the flags and priority of the new stream, and how a blocking or
non-blocking stream and the null / per-thread stream wait for each other."""
import pytest

from hostside import hip

from .stream_common import gates

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamCreateWithFlags.cc"

# Unit_hipStreamCreateWithFlags_Negative_NullStream (a nullptr out-param) has no Python form: NOT_PORTED.md.


def test_Unit_hipStreamCreateWithFlags_Negative_InvalidFlag(mod):
    flag = 0xFF
    assert flag != hip.hipStreamDefault
    assert flag != hip.hipStreamNonBlocking
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamCreateWithFlags(flag)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("flag_name", ["hipStreamDefault", "hipStreamNonBlocking"])
def test_Unit_hipStreamCreateWithFlags_Default(mod, flag_name):
    flag = getattr(hip, flag_name)
    s = hip.hipStreamCreateWithFlags(flag)
    assert hip.hipStreamGetFlags(s) == flag
    assert hip.hipStreamGetPriority(s) == 0      # zero is the default priority
    hip.hipStreamDestroy(s)


@pytest.mark.parametrize("section", ["default_waits_for_created", "created_waits_for_default"])
@pytest.mark.parametrize("flag_name", ["hipStreamDefault", "hipStreamNonBlocking"])
@pytest.mark.parametrize("default_stream", ["null", "per_thread"])
def test_Unit_hipStreamCreateWithFlags_DefaultStreamInteraction(mod, default_stream, flag_name, section):
    dflt = None if default_stream == "null" else hip.hipStreamPerThread
    flag = getattr(hip, flag_name)
    s = hip.hipStreamCreateWithFlags(flag)
    with gates(mod, 1) as (g,):
        if section == "default_waits_for_created":
            blocked = flag == hip.hipStreamDefault and dflt is None
            expected = hip.hipError_t.hipErrorNotReady if blocked else hip.hipError_t.hipSuccess
            g.launch(s)
            assert hip.hipStreamQuery(dflt) == expected
        else:
            g.launch(dflt)
            assert hip.hipStreamQuery(s) == hip.hipError_t.hipSuccess
        g.open()
        hip.hipDeviceSynchronize()
    hip.hipStreamDestroy(s)
