"""hipGraphExecMemsetNodeSetParams: an exec's memset node moved to a larger pitched allocation (the
graph keeps its parameters), argument errors (memory of another device among them), and a 2-D node
whose width may not change."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._memset_node_common import (DTYPES, NEGATIVE, Pitched, check_filled,
                                                          memset_common_negative, widths)

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphExecMemsetNodeSetParams.cc"

E = hip.hipError_t


def _fields(p):
    return p.dst, p.elementSize, p.width, p.height, p.pitch, p.value


@pytest.mark.parametrize("dtype", DTYPES)
def test_Unit_hipGraphExecMemsetNodeSetParams_Positive_Basic(mod, res, dtype):
    itemsize = np.dtype(dtype).itemsize
    for width in widths(dtype):
        graph = res.graph()
        initial = res.malloc(2 * itemsize)
        initial_params = hip.hipMemsetParams(initial, 0, 0, itemsize, width=2, height=1)
        node = hip.hipGraphAddMemsetNode(graph, None, initial_params)
        exe = res.instantiate(graph)
        alloc = Pitched(res, dtype, width, 1)
        params = hip.hipMemsetParams(alloc.ptr, 42, 0, itemsize, width=width, height=1)
        hip.hipGraphExecMemsetNodeSetParams(exe, node, params)
        assert _fields(hip.hipGraphMemsetNodeGetParams(node)) == _fields(initial_params)
        hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
        check_filled(dtype, alloc, width, 1)


@pytest.mark.parametrize("section", ["exec_null", "node_null"] + NEGATIVE + ["other_device"])
def test_Unit_hipGraphExecMemsetNodeSetParams_Negative_Parameters(mod, res, section):
    graph = res.graph()
    alloc = res.malloc(4 * 4)
    params = hip.hipMemsetParams(alloc, 42, 0, 4, width=1, height=1)
    node = hip.hipGraphAddMemsetNode(graph, None, params)
    exe = res.instantiate(graph)
    if section == "exec_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemsetNodeSetParams, None, node, params)
    elif section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemsetNodeSetParams, exe, None, params)
    elif section == "other_device":
        if hip.hipGetDeviceCount() < 2:
            pytest.skip("Test requires two connected GPUs")
        hip.hipSetDevice(1)
        try:
            params.dst = res.malloc(4 * 4)
        finally:
            hip.hipSetDevice(0)
        expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemsetNodeSetParams, exe, node, params)
    else:
        memset_common_negative(lambda p: hip.hipGraphExecMemsetNodeSetParams(exe, node, p), params, section)


def test_Unit_hipGraphExecMemsetNodeSetParams_Negative_Updating_Non1D_Node(mod, res):
    alloc = Pitched(res, np.int32, 2, 2)
    graph = res.graph()
    params = hip.hipMemsetParams(alloc.ptr, 42, 0, 4, width=1, height=2, pitch=alloc.pitch)
    node = hip.hipGraphAddMemsetNode(graph, None, params)
    exe = res.instantiate(graph)
    params.width = 2
    expect_error(E.hipErrorInvalidValue, hip.hipGraphExecMemsetNodeSetParams, exe, node, params)
