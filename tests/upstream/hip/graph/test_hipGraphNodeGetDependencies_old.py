"""hipGraphNodeGetDependencies (older cases): the dependency list of a summing kernel node asked with
exact, extra and too little room, and argument checks."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import EQUAL, GREATER, LESSER, Fan, check_node_list

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetDependencies_old.cc"

E = hip.hipError_t


def test_Unit_hipGraphNodeGetDependencies_Functional(mod, res):
    fan = Fan(mod, res, res.graph())
    fan.add_sum()
    num_deps = len(hip.hipGraphNodeGetDependencies(fan.add))
    assert num_deps == len(fan.mods)
    check_node_list(hip.hipGraphNodeGetDependencies(fan.add), fan.mods, num_deps, EQUAL)
    check_node_list(hip.hipGraphNodeGetDependencies(fan.add), fan.mods, num_deps + 4, GREATER)
    check_node_list(hip.hipGraphNodeGetDependencies(fan.add), fan.mods, num_deps - 1, LESSER)
    fan.finish_and_check(res)


@pytest.mark.parametrize("section", ["root_node", "node_null", "node_uninitialized"])
def test_Unit_hipGraphNodeGetDependencies_ParamValidation(mod, res, section):
    graph = res.graph()
    a_d = res.malloc(100)
    node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 1, 100, 1))
    # "NumDependencies as nullptr" has no Python form
    if section == "root_node":
        assert len(hip.hipGraphNodeGetDependencies(node)) == 0
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetDependencies, None)
