"""hipUserObjectCreate with hipUserObjectRetain / hipUserObjectRelease: the destructor runs once the
references are gone; argument checks; releasing more than held, then retaining, is a no-op."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._userobj_common import OBJECTS, Destroyed

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipUserObjectCreate.cc"

E = hip.hipError_t
INT_MAX = 2 ** 31 - 1
NO_SYNC = hip.hipUserObjectNoDestructorSync


@pytest.mark.parametrize("kind", OBJECTS)
def test_Unit_hipUserObjectCreate_Functional_1(mod, kind):
    obj, destroy = kind(), Destroyed()
    h = hip.hipUserObjectCreate(obj, destroy, 1, NO_SYNC)
    assert h is not None
    hip.hipUserObjectRelease(h)
    assert destroy == [obj]


@pytest.mark.parametrize("kind", OBJECTS)
def test_Unit_hipUserObjectCreate_Functional_2(mod, kind):
    obj, destroy = kind(), Destroyed()
    h = hip.hipUserObjectCreate(obj, destroy, 5, NO_SYNC)
    hip.hipUserObjectRelease(h, 5)
    assert destroy == [obj]


@pytest.mark.parametrize("kind", OBJECTS)
def test_Unit_hipUserObjectCreate_Functional_3(mod, kind):
    obj, destroy = kind(), Destroyed()
    h = hip.hipUserObjectCreate(obj, destroy, 1, NO_SYNC)
    hip.hipUserObjectRetain(h)
    hip.hipUserObjectRelease(h)
    assert destroy == []
    hip.hipUserObjectRelease(h)
    assert destroy == [obj]


@pytest.mark.parametrize("kind", OBJECTS)
def test_Unit_hipUserObjectCreate_Functional_4(mod, kind):
    obj, destroy = kind(), Destroyed()
    h = hip.hipUserObjectCreate(obj, destroy, 5, NO_SYNC)
    hip.hipUserObjectRetain(h, 8)
    hip.hipUserObjectRelease(h, 5 + 8)
    assert destroy == [obj]


@pytest.mark.parametrize("section", ["null_object", "null_callback", "refcount_0", "refcount_INT_MAX",
                                     "invalid_flag"])
def test_Unit_hipUserObjectCreate_Negative(mod, section):
    # "Pass User Object as nullptr" is a null out-pointer
    obj, destroy = 0, Destroyed()
    if section == "null_object":
        hip.hipUserObjectCreate(None, destroy, 1, NO_SYNC)
    elif section == "null_callback":
        expect_error(E.hipErrorInvalidValue, hip.hipUserObjectCreate, obj, None, 1, NO_SYNC)
    elif section == "refcount_0":
        expect_error(E.hipErrorInvalidValue, hip.hipUserObjectCreate, obj, destroy, 0, NO_SYNC)
    elif section == "refcount_INT_MAX":
        hip.hipUserObjectCreate(obj, destroy, INT_MAX, NO_SYNC)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipUserObjectCreate, obj, destroy, 1, 9)


def test_Unit_hipUserObj_Negative_Test(mod):
    destroy = Destroyed()
    h = hip.hipUserObjectCreate(0, destroy, 2, NO_SYNC)
    hip.hipUserObjectRelease(h, 4)          # more than it holds: nothing happens (CLR)
    hip.hipUserObjectRetain(h, 1)
    assert destroy == []
