"""hipGraphAddMemAllocNode: argument errors, the one-instantiation rule, and graphs whose allocation
is freed in the graph, by hipFree, by hipFreeAsync or by another graph. Upstream's validateGPU kernel
(a device-side compare) is a copy of the allocation back to the host here; sizes are scaled down."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._mem_node_common import ELEMENTS, alloc_params, fill_graph

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphAddMemAllocNode.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_graph", "deps_count_plus_one", "null_params", "alloc_type",
                                     "location_type", "location_id"])
def test_Unit_hipGraphAddMemAllocNode_Negative_Params(mod, res, section):
    # "nullptr graph node" is a null out-pointer and "invalid numDependencies" a null list with a
    # count: no Python form (the node is the result, a list carries its length); the max size_t and
    # accessDescCount sections are HT_NVIDIA only
    graph = res.graph()
    p = alloc_params(1024, desc=True)
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, None, None, p)
    elif section == "deps_count_plus_one":      # a dependency that is not a node of the graph
        node = hip.hipGraphAddMemAllocNode(graph, None, p)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, graph, [node, None], p)
    elif section == "null_params":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, graph, None, None)
    elif section == "alloc_type":
        p.poolProps.allocType = hip.hipMemAllocationTypeInvalid
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, graph, None, p)
    elif section == "location_type":
        p.poolProps.location.type = hip.hipMemLocationTypeInvalid
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, graph, None, p)
    else:
        p.poolProps.location.id = hip.hipGetDeviceCount()
        expect_error(E.hipErrorInvalidValue, hip.hipGraphAddMemAllocNode, graph, None, p)


@pytest.mark.parametrize("section", ["second_instantiation"])
def test_Unit_hipGraphAddMemAllocNode_Negative_NotSupported(mod, res, section):
    # the clone, child graph and edge removal sections are HT_NVIDIA only
    graph = res.graph()
    hip.hipGraphAddMemAllocNode(graph, None, alloc_params(1024))
    exe1 = hip.hipGraphInstantiate(graph)
    expect_error(E.hipErrorNotSupported, hip.hipGraphInstantiate, graph)
    hip.hipGraphExecDestroy(exe1)


def test_Unit_hipGraphAddMemAllocNode_Positive_FreeInGraph(mod, res):
    host = np.zeros(ELEMENTS, np.int32)
    stream = res.stream()
    exe, _ = fill_graph(host, 11)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (host == 11).all()
    hip.hipGraphExecDestroy(exe)


def _check_outside(res, exe, dev_p, stream, value, host):
    back = np.zeros(ELEMENTS, np.int32)
    hip.hipMemcpyAsync(back, dev_p, back.nbytes, hip.hipMemcpyDeviceToHost, stream)
    return back


def test_Unit_hipGraphAddMemAllocNode_Positive_FreeOutsideStream(mod, res):
    host = np.zeros(ELEMENTS, np.int32)
    stream = res.stream()
    exe, dev_p = fill_graph(host, 12, with_free=False)
    hip.hipGraphLaunch(exe, stream)
    back = _check_outside(res, exe, dev_p, stream, 12, host)
    hip.hipStreamSynchronize(stream)
    hip.hipFree(dev_p)
    assert (back == 12).all() and (host == 12).all()
    hip.hipGraphExecDestroy(exe)


def test_Unit_hipGraphAddMemAllocNode_Positive_FreeOutsideGraph(mod, res):
    host = np.zeros(ELEMENTS, np.int32)
    stream = res.stream()
    exe, dev_p = fill_graph(host, 13, with_free=False)
    hip.hipGraphLaunch(exe, stream)
    back = _check_outside(res, exe, dev_p, stream, 13, host)
    hip.hipFreeAsync(dev_p, stream)
    hip.hipStreamSynchronize(stream)
    assert (back == 13).all() and (host == 13).all()
    hip.hipGraphExecDestroy(exe)


def test_Unit_hipGraphAddMemAllocNode_Positive_FreeSeparateGraph(mod, res):
    host = np.zeros(ELEMENTS, np.int32)
    stream = res.stream()
    exe1, dev_p = fill_graph(host, 13, with_free=False)
    graph = hip.hipGraphCreate(0)                   # createFreeGraph
    hip.hipGraphAddMemFreeNode(graph, None, dev_p)
    exe2 = hip.hipGraphInstantiate(graph)
    hip.hipGraphDestroy(graph)
    hip.hipGraphLaunch(exe1, stream)
    back = _check_outside(res, exe1, dev_p, stream, 13, host)
    hip.hipGraphLaunch(exe2, stream)
    hip.hipStreamSynchronize(stream)
    assert (back == 13).all() and (host == 13).all()
    hip.hipGraphExecDestroy(exe1)
    hip.hipGraphExecDestroy(exe2)
