"""hipGraphNodeGetDependentNodes: the three dependents of a kernel node (all, a part, more room than
dependents), none for the last node, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import EQUAL, GREATER, LESSER, Fan, check_node_list

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetDependentNodes.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", [EQUAL, LESSER, GREATER, "last_node"])
def test_Unit_hipGraphNodeGetDependentNodes_Positive_Functional(mod, res, section):
    fan = Fan(mod, res, res.graph())
    num_deps = len(hip.hipGraphNodeGetDependentNodes(fan.sqr))
    assert num_deps == len(fan.mods)
    if section == "last_node":
        assert len(hip.hipGraphNodeGetDependentNodes(fan.mods[2])) == 0
    else:
        want = {EQUAL: num_deps, LESSER: num_deps - 1, GREATER: num_deps + 1}[section]
        check_node_list(hip.hipGraphNodeGetDependentNodes(fan.sqr), fan.mods, want, section)
    fan.finish_and_check(res)


@pytest.mark.parametrize("section", ["node_null", "node_uninitialized"])
def test_Unit_hipGraphNodeGetDependentNodes_Negative_Parameters(mod, res, section):
    graph = res.graph()
    a_d = res.malloc(100)
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 1, 100, 1))
    # "NumDependentNodes as nullptr" has no Python form; an uninitialized hipGraphNode_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetDependentNodes, None)
