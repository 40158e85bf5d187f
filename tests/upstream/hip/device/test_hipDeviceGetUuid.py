"""hipDeviceGetUuid: every device has a non-zero uuid, equal to hipDeviceProp_t.uuid; a bad device
fails."""
import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/device/hipDeviceGetUuid.cc"


@pytest.mark.parametrize("device_id", [0, 1])        # GENERATE(range(0, getDeviceCount())): two devices
def test_Unit_hipDeviceGetUuid_Positive(mod, device_id):
    assert device_id < hip.hipGetDeviceCount()
    device = hip.hipDeviceGet(device_id)
    uuid = hip.hipDeviceGetUuid(device)
    assert len(uuid) == 16
    assert any(b != 0 for b in uuid)                # at least one non-zero byte


def test_Unit_hipDeviceGetUuid_Negative(mod):
    # hipDeviceGetUuid(nullptr, device) has no Python form (the uuid is returned)
    num_devices = hip.hipGetDeviceCount()
    assert num_devices > 0
    hip.hipDeviceGet(0)
    for device in (-1, num_devices):
        with pytest.raises(hip.HipError):
            hip.hipDeviceGetUuid(device)


def test_Unit_hipDeviceGetUuid_VerifyUuidFrm_hipGetDeviceProperties(mod):
    for dev in range(hip.hipGetDeviceCount()):
        hip.hipSetDevice(dev)
        device = hip.hipDeviceGet(dev)
        uuid = hip.hipDeviceGetUuid(device)
        prop = hip.hipGetDeviceProperties(dev)
        assert uuid == prop.uuid
