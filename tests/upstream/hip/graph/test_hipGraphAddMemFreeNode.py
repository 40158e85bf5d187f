"""hipGraphAddMemFreeNode: argument errors and the one-instantiation rule."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._mem_node_common import alloc_params

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddMemFreeNode.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_graph", "deps_count_plus_one", "null_dev_ptr", "invalid_dev_ptr"])
def test_Unit_hipGraphAddMemFreeNode_Negative_Params(mod, res, section):
    # "nullptr graph node" is a null out-pointer, "invalid numDependencies" a null list with a count
    # (no Python form); "not allocated with alloc node" and "free twice" are HT_NVIDIA only
    graph = res.graph()
    p = alloc_params(1024)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemFreeNode, None, alloc, p.dptr)
    elif section == "deps_count_plus_one":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemFreeNode, graph, [alloc, None], p.dptr)
    elif section == "null_dev_ptr":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemFreeNode, graph, alloc, None)
    else:                                           # the address of a host int
        value, _view = res.pinned("int32", 1)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemFreeNode, graph, alloc, value + 0x10)


@pytest.mark.parametrize("section", ["second_instantiation"])
def test_Unit_hipGraphAddMemFreeNode_Negative_NotSupported(mod, res, section):
    # the clone, child graph and edge removal sections are HT_NVIDIA only
    graph1, graph2 = res.graph(), res.graph()
    p = alloc_params(1024)
    hip.hipGraphAddMemAllocNode(graph1, None, p)
    hip.hipGraphAddMemFreeNode(graph2, None, p.dptr)
    exe1 = hip.hipGraphInstantiate(graph2)
    expect_error(E.hipErrorNotSupported, hip.hipGraphInstantiate, graph2)
    hip.hipGraphExecDestroy(exe1)
