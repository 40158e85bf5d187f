"""hipGraphMemsetNodeSetParams: a node added with other parameters set to fill pitched allocations
(read back with hipGraphMemsetNodeGetParams, then run), and argument errors."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._memset_node_common import DTYPES, NEGATIVE, memset_common_negative, \
    memset_common_positive

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemsetNodeSetParams.cc"

E = hip.hipError_t


def _fields(p):
    return p.dst, p.elementSize, p.width, p.height, p.pitch, p.value


@pytest.mark.parametrize("dtype", DTYPES)
def test_Unit_hipGraphMemsetNodeSetParams_Positive_Basic(mod, res, dtype):
    itemsize = np.dtype(dtype).itemsize

    def f(params):
        graph = res.graph()
        initial = res.malloc(2 * itemsize)
        initial_params = hip.hipMemsetParams(initial, 0, 0, itemsize, width=2, height=1)
        node = hip.hipGraphAddMemsetNode(graph, None, initial_params)
        assert _fields(hip.hipGraphMemsetNodeGetParams(node)) == _fields(initial_params)
        hip.hipGraphMemsetNodeSetParams(node, params)
        assert _fields(hip.hipGraphMemsetNodeGetParams(node)) == _fields(params)
        exe = res.instantiate(graph)
        hip.hipGraphLaunch(exe, hip.hipStreamPerThread)
        hip.hipStreamSynchronize(hip.hipStreamPerThread)
    memset_common_positive(res, dtype, f)


@pytest.mark.parametrize("section", ["node_null"] + NEGATIVE)
def test_Unit_hipGraphMemsetNodeSetParams_Negative_Parameters(mod, res, section):
    graph = res.graph()
    alloc = res.malloc(4 * 4)
    params = hip.hipMemsetParams(alloc, 42, 0, 4, width=1, height=1)
    node = hip.hipGraphAddMemsetNode(graph, None, params)
    if section == "node_null":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphMemsetNodeSetParams, None, params)
    else:
        memset_common_negative(lambda p: hip.hipGraphMemsetNodeSetParams(node, p), params, section)
