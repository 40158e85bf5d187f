"""hipGraphCreate: non-zero flags refused; a graph is created and destroyed."""
from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphCreate.cc"


def test_Unit_hipGraphCreate_Negative_Parameters(mod):
    # "pGraph is nullptr" is a null out-pointer
    expect_error(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphCreate, 1)


def test_Unit_hipGraphCreate_Positive_Basic(mod):
    graph = hip.hipGraphCreate(0)
    assert graph is not None
    hip.hipGraphDestroy(graph)
