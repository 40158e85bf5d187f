"""hipStreamCreate: a new stream on each device has the default flags and a priority in range."""
import pytest

from hostside import hip

from .stream_common import check_stream

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamCreate.cc"

# Unit_hipStreamCreate_Negative (hipStreamCreate(nullptr)) has no Python form: NOT_PORTED.md.


@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipStreamCreate_default(mod, device):
    hip.hipSetDevice(device)
    s = hip.hipStreamCreate()
    assert s is not None
    assert check_stream(s)
    hip.hipStreamDestroy(s)
