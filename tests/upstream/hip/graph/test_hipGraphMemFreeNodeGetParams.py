"""hipGraphMemFreeNodeGetParams: the address read back, and argument errors."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._mem_node_common import alloc_params

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemFreeNodeGetParams.cc"

E = hip.hipError_t


def _graph(res):
    graph = res.graph()
    p = alloc_params(256)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    free = hip.hipGraphAddMemFreeNode(graph, alloc, p.dptr)
    return graph, p, alloc, free


def _launch_auto_free(res, graph):
    stream = res.stream()
    exe = res.keep(hip.hipGraphInstantiateWithFlags(graph, hip.hipGraphInstantiateFlagAutoFreeOnLaunch))
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)


def test_Unit_hipGraphMemFreeNodeGetParams_ValidArgs(mod, res):
    graph, p, _alloc, free = _graph(res)
    out = hip.hipGraphMemFreeNodeGetParams(free)
    _launch_auto_free(res, graph)
    assert out == p.dptr


@pytest.mark.parametrize("section", ["null_node", "mismatched_type"])
def test_Unit_hipGraphMemFreeNodeGetParams_InvalidArgs(mod, res, section):
    # "Null out pointer" has no Python form (the address is the result)
    graph, _p, alloc, _free = _graph(res)
    expect_error(E.hipErrorInvalidValue, hip.hipGraphMemFreeNodeGetParams, None if section == "null_node" else alloc)
    _launch_auto_free(res, graph)
