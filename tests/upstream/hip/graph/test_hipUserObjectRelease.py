"""hipUserObjectRelease: argument checks."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._userobj_common import Destroyed

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipUserObjectRelease.cc"


@pytest.mark.parametrize("section", ["null_object", "count_0", "count_INT_MAX"])
def test_Unit_hipUserObjectRelease_Negative(mod, section):
    h = hip.hipUserObjectCreate(0, Destroyed(), 1, hip.hipUserObjectNoDestructorSync)
    if section == "null_object":
        expect_error(hip.hipError_t.hipErrorInvalidValue, hip.hipUserObjectRelease, None, 1)
    elif section == "count_0":
        expect_error(hip.hipError_t.hipErrorInvalidValue, hip.hipUserObjectRelease, h, 0)
    else:
        hip.hipUserObjectRelease(h, 2 ** 31 - 1)
