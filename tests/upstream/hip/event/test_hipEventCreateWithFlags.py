"""hipEventCreateWithFlags: an event can be created with each flag (the HT_AMD list)."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/event/hipEventCreateWithFlags.cc"

# The memory-coherency cases (DisableSystemFence / DefaultFlg x HstVisMem / NonCohHstMem / CohHstMem)
# read hipMalloc memory from the host (large BAR) or need hipHostMallocCoherent/NonCoherent: NOT_PORTED.md.


@pytest.mark.parametrize("flags", [("hipEventDefault",), ("hipEventBlockingSync",), ("hipEventDisableTiming",),
                                   ("hipEventInterprocess", "hipEventDisableTiming"), ("hipEventReleaseToDevice",),
                                   ("hipEventReleaseToSystem",)], ids="|".join)
def test_Unit_hipEventCreateWithFlags_Positive(mod, flags):
    value = 0
    for name in flags:
        value |= getattr(hip, name)
    ev = hip.hipEventCreateWithFlags(value)
    assert ev is not None
    hip.hipEventDestroy(ev)
