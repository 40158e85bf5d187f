"""hipGraphNodeGetDependencies: the three dependencies of a summing kernel node (all, a part, more room
than dependencies), none for a root node, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import EQUAL, GREATER, LESSER, Fan, check_node_list

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetDependencies.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", [EQUAL, LESSER, GREATER, "root_node"])
def test_Unit_hipGraphNodeGetDependencies_Positive_Functional(mod, res, section):
    fan = Fan(mod, res, res.graph())
    fan.add_sum()
    num_deps = len(hip.hipGraphNodeGetDependencies(fan.add))
    assert num_deps == len(fan.mods)
    if section == "root_node":
        assert len(hip.hipGraphNodeGetDependencies(fan.h2d)) == 0
    else:
        want = {EQUAL: num_deps, LESSER: num_deps - 1, GREATER: num_deps + 1}[section]
        check_node_list(hip.hipGraphNodeGetDependencies(fan.add), fan.mods, want, section)
    fan.finish_and_check(res)


@pytest.mark.parametrize("section", ["node_null", "node_uninitialized"])
def test_Unit_hipGraphNodeGetDependencies_Negative_Parameters(mod, res, section):
    graph = res.graph()
    a_d = res.malloc(100)
    hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 1, 100, 1))
    # "NumDependencies as nullptr" has no Python form; an uninitialized hipGraphNode_t is a null one
    expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetDependencies, None)
