"""hipGraphNodeGetDependentNodes (older cases): the dependent list of a kernel node asked with exact,
extra and too little room, and argument checks."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._dependency_common import EQUAL, GREATER, LESSER, Fan, check_node_list

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphNodeGetDependentNodes_old.cc"

E = hip.hipError_t


def test_Unit_hipGraphNodeGetDependentNodes_Functional(mod, res):
    fan = Fan(mod, res, res.graph())
    num_deps = len(hip.hipGraphNodeGetDependentNodes(fan.sqr))
    assert num_deps == len(fan.mods)
    check_node_list(hip.hipGraphNodeGetDependentNodes(fan.sqr), fan.mods, num_deps, EQUAL)
    check_node_list(hip.hipGraphNodeGetDependentNodes(fan.sqr), fan.mods, num_deps + 4, GREATER)
    check_node_list(hip.hipGraphNodeGetDependentNodes(fan.sqr), fan.mods, num_deps - 1, LESSER)
    fan.finish_and_check(res)


@pytest.mark.parametrize("section", ["single_node", "node_null", "node_uninitialized"])
def test_Unit_hipGraphNodeGetDependentNodes_ParamValidation(mod, res, section):
    graph = res.graph()
    a_d = res.malloc(100)
    node = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 1, 100, 1))
    # "NumDependentNodes as nullptr" has no Python form
    if section == "single_node":
        assert len(hip.hipGraphNodeGetDependentNodes(node)) == 0
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipGraphNodeGetDependentNodes, None)
