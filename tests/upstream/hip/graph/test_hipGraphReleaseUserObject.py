"""hipGraphReleaseUserObject: argument checks."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._userobj_common import Destroyed

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphReleaseUserObject.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_graph", "null_object", "count_0", "count_INT_MAX"])
def test_Unit_hipGraphReleaseUserObject_Negative(mod, section):
    graph = hip.hipGraphCreate(0)
    h = hip.hipUserObjectCreate(0.0, Destroyed(), 1, hip.hipUserObjectNoDestructorSync)
    hip.hipGraphRetainUserObject(graph, h, 1, hip.hipGraphUserObjectMove)
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphReleaseUserObject, None, h, 1)
    elif section == "null_object":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphReleaseUserObject, graph, None, 1)
    elif section == "count_0":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphReleaseUserObject, graph, h, 0)
    else:
        hip.hipGraphReleaseUserObject(graph, h, 2 ** 31 - 1)
    hip.hipUserObjectRelease(h, 1)
    hip.hipGraphDestroy(graph)
