"""hipExtGetLinkTypeAndHopCount: the link between two peer devices looks the same both ways with at
least one hop; the same device, negative devices and devices past the last fail with upstream's codes.
(Upstream disables Positive_Basic on AMD Linux in config_amd_linux; it passes on hdemu.)"""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/device/hipExtGetLinkTypeAndHopCount.cc"
E = hip.hipError_t


@pytest.mark.parametrize("device2", [0, 1])
@pytest.mark.parametrize("device1", [0, 1])     # GENERATE(range(0, getDeviceCount())) twice: two devices
def test_Unit_hipExtGetLinkTypeAndHopCount_Positive_Basic(mod, device1, device2):
    if device1 == device2:
        return
    assert hip.hipDeviceCanAccessPeer(device1, device2) == 1
    link_type1, hop_count1 = hip.hipExtGetLinkTypeAndHopCount(device1, device2)
    link_type2, hop_count2 = hip.hipExtGetLinkTypeAndHopCount(device2, device1)
    assert hop_count1 > 0
    assert hop_count1 == hop_count2
    assert link_type1 == link_type2


_N = object()       # getDeviceCount()
NEGATIVE = [("same device", 0, 0, E.hipErrorInvalidValue),
            ("device ordinance 1 too large", _N, 0, E.hipErrorInvalidDevice),
            ("device ordinance 2 too large", 0, _N, E.hipErrorInvalidDevice),
            ("device ordinances too large", _N, 1, E.hipErrorInvalidDevice),
            ("device 1 < 0", -1, 0, E.hipErrorInvalidValue),
            ("device 2 < 0", 0, -1, E.hipErrorInvalidValue),
            ("both devices < 0", -1, -2, E.hipErrorInvalidValue)]
# SECTIONs "linktype == nullptr", "hopcount == nullptr" and both: no Python form (the values are returned)


@pytest.mark.parametrize("section, d1, d2, error", NEGATIVE, ids=[n[0] for n in NEGATIVE])
def test_Unit_hipExtGetLinkTypeAndHopCount_Negative_Parameters(mod, section, d1, d2, error):
    n = hip.hipGetDeviceCount()
    if d1 is _N:
        d1 = n
        d2 = n + 1 if section == "device ordinances too large" else d2
    if d2 is _N:
        d2 = n
    with pytest.raises(hip.HipError) as ei:
        hip.hipExtGetLinkTypeAndHopCount(d1, d2)
    assert ei.value.error == error
