"""hipGraphMemsetNodeGetParams: argument errors (its read-back is covered by the
hipGraphMemsetNodeSetParams and hipGraphExecMemsetNodeSetParams ports)."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemsetNodeGetParams.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["node_null"])
def test_Unit_hipGraphMemsetNodeGetParams_Negative_Parameters(mod, res, section):
    ptr, _pitch = hip.hipMallocPitch(4, 1)
    res._dev.append(ptr)
    graph = res.graph()
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(ptr, 0, 0, 4, width=1, height=1))
    # "pNodeParams == nullptr" has no Python form (the parameters are the return value); "Node is
    # destroyed" is disabled upstream (#if 0)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphMemsetNodeGetParams, None)
