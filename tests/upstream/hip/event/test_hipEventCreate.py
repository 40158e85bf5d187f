"""hipEventCreate: an event can be created (and destroyed) on every device."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/event/hipEventCreate.cc"


@pytest.mark.parametrize("device", [0, 1])
def test_Unit_hipEventCreate_Positive(mod, device):
    hip.hipSetDevice(device)
    ev = hip.hipEventCreate()
    assert ev is not None
    hip.hipEventDestroy(ev)
