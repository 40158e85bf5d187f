"""hipGraphDestroy: a created graph is destroyed; a null graph is refused."""
from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphDestroy.cc"


def test_Unit_hipGraphDestroy_Positive_Basic(mod):
    graph = hip.hipGraphCreate(0)
    assert graph is not None
    hip.hipGraphDestroy(graph)


def test_Unit_hipGraphDestroy_Negative_Parameters(mod):
    expect_error(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphDestroy, None)
