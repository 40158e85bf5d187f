"""hipExtStreamGetCUMask: the null stream reports every CU of the device; a stream created with a
custom mask reads back (upstream compares it only when ROC_GLOBAL_CU_MASK is set: hdemu has no
global CU mask, so the case runs as without one)."""
import math

import pytest

from hostside import hip

UPSTREAM = "ROCm/hip-tests:catch/unit/stream/hipStreamGetCUMask.cc"
MAX_CU_PER_VALUE = 32


def _default_cu_mask(cus: int) -> list[int]:
    """The test's loop that builds the default mask (every CU enabled), as written upstream."""
    out, temp, bit = [], 0, 0
    for _ in range(cus):
        temp |= (1 << bit) & 0xFFFFFFFF
        if bit >= 32:
            out.append(temp)
            temp, bit = 1, 0
        bit += 1
    if bit:
        out.append(temp)
    return out


@pytest.mark.parametrize("section", ["Verify with default CU Mask or global CU Mask", "Verify with custom mask set"])
def test_Unit_hipExtStreamGetCUMask_verifyDefaultAndCustomMask(mod, section):
    hip.hipSetDevice(0)
    props = hip.hipGetDeviceProperties(0)
    max_num = math.ceil(props.multiProcessorCount / MAX_CU_PER_VALUE)
    default = _default_cu_mask(props.multiProcessorCount)
    if section == "Verify with default CU Mask or global CU Mask":
        cu_mask = hip.hipExtStreamGetCUMask(None, max_num)
        assert cu_mask[:len(default)] == default[:len(cu_mask)]
        return
    custom = list(default)
    custom[0] = 0xC if props.major >= 10 else 0xE
    s = hip.hipExtStreamCreateWithCUMask(len(custom), custom)
    cu_mask = hip.hipExtStreamGetCUMask(s, max_num)
    assert len(cu_mask) == max_num             # compared with custom only under ROC_GLOBAL_CU_MASK
    hip.hipStreamDestroy(s)


# SECTION "cuMask is nullptr" (a null out-pointer) has no Python form.
@pytest.mark.parametrize("section", ["cuMaskSize is 0"])
def test_Unit_hipExtStreamGetCUMask_Negative(mod, section):
    with pytest.raises(hip.HipError) as ei:
        hip.hipExtStreamGetCUMask(None, 0)
    assert ei.value.error == hip.hipError_t.hipErrorInvalidValue
