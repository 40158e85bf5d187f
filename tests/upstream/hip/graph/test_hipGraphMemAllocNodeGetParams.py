"""hipGraphMemAllocNodeGetParams / hipGraphMemFreeNodeGetParams: parameters read back on one and on
every device, with a vector add between three allocations, with access descriptors, and argument
errors. Sizes are scaled down."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams
from tests.upstream.hip.graph._mem_node_common import ELEMENTS, alloc_params

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphMemAllocNodeGetParams.cc"

E = hip.hipError_t
N = 64 * 1024


def _same(a, b):
    """validateAllocParam."""
    return (a.bytesize == b.bytesize and a.poolProps.allocType == b.poolProps.allocType
            and a.poolProps.location.id == b.poolProps.location.id
            and a.poolProps.location.type == b.poolProps.location.type)


def _functional(device):
    hip.hipSetDevice(device)
    hip.hipDeviceGraphMemTrim(device)
    graph = hip.hipGraphCreate(0)
    stream = hip.hipStreamCreate()
    p = alloc_params(N * 4, device)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    hip.hipGraphAddMemFreeNode(graph, alloc, p.dptr)
    assert _same(p, hip.hipGraphMemAllocNodeGetParams(alloc))
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphDestroy(graph)
    hip.hipGraphExecDestroy(exe)
    hip.hipStreamDestroy(stream)
    hip.hipDeviceGraphMemTrim(device)
    hip.hipSetDevice(0)


def test_Unit_hipGraphMem_Alloc_Free_NodeGetParams_Functional(mod):
    _functional(0)


def test_Unit_hipGraphMem_Alloc_Free_NodeGetParams_Functional_MultiDevice(mod):
    for d in range(hip.hipGetDeviceCount()):
        _functional(d)


def test_Unit_hipGraphMem_Alloc_Free_NodeGetParams_Functional_2(mod, res):
    nbytes = N * 4
    a_h = np.arange(N, dtype=np.int32)
    b_h = np.arange(N, dtype=np.int32) * 2
    c_h = np.zeros(N, np.int32)
    graph = res.graph()
    stream = res.stream()
    p = alloc_params(nbytes)
    alloc_a = hip.hipGraphAddMemAllocNode(graph, None, p)
    a_d = p.dptr
    alloc_b = hip.hipGraphAddMemAllocNode(graph, alloc_a, p)
    b_d = p.dptr
    alloc_c = hip.hipGraphAddMemAllocNode(graph, alloc_b, p)
    c_d = p.dptr
    assert a_d and b_d and c_d and len({a_d, b_d, c_d}) == 3
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, alloc_c, a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, alloc_c, b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    blocks = (N + 255) // 256
    vadd = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, N], blocks, 256))
    hip.hipGraphAddDependencies(graph, h2d_a, vadd)
    hip.hipGraphAddDependencies(graph, h2d_b, vadd)
    d2h = hip.hipGraphAddMemcpyNode1D(graph, vadd, c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    frees = [hip.hipGraphAddMemFreeNode(graph, d2h, x) for x in (a_d, b_d, c_d)]
    for node in (alloc_a, alloc_b, alloc_c):
        assert _same(p, hip.hipGraphMemAllocNodeGetParams(node))
    assert [hip.hipGraphMemFreeNodeGetParams(f) for f in frees] == [a_d, b_d, c_d]
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (c_h == a_h + b_h).all()
    hip.hipDeviceGraphMemTrim(0)


def test_Unit_hipGraphMem_Alloc_Free_NodeGetParams_Functional_3(mod, res):
    host = np.zeros(ELEMENTS, np.int32)
    stream = res.stream()
    graph = res.graph()
    p = alloc_params(host.nbytes, desc=True)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    assert hip.hipGraphMemAllocNodeGetParams(alloc) == p         # memcmp of the whole struct
    memset = hip.hipGraphAddMemsetNode(graph, alloc, hip.hipMemsetParams(p.dptr, 11, 0, 4, width=ELEMENTS, height=1))
    copy = hip.hipGraphAddMemcpyNode1D(graph, memset, host, p.dptr, host.nbytes, hip.hipMemcpyDeviceToHost)
    free = hip.hipGraphAddMemFreeNode(graph, copy, p.dptr)
    assert hip.hipGraphMemFreeNodeGetParams(free) == p.dptr
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (host == 11).all()


@pytest.mark.parametrize("section", ["alloc_null", "alloc_empty", "alloc_of_free_node", "free_null",
                                     "free_empty", "free_of_alloc_node"])
def test_Unit_hipGraphMem_Alloc_Free_NodeGetParams_Negative(mod, res, section):
    # the null out-pointer sections have no Python form (the parameters are the result); an "empty"
    # node is a zero-initialised hipGraphNode_t: None
    hip.hipDeviceGraphMemTrim(0)
    graph = res.graph()
    stream = res.stream()
    p = alloc_params(N * 4)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    free = hip.hipGraphAddMemFreeNode(graph, alloc, p.dptr)
    fn, arg = {"alloc_null": (hip.hipGraphMemAllocNodeGetParams, None),
               "alloc_empty": (hip.hipGraphMemAllocNodeGetParams, None),
               "alloc_of_free_node": (hip.hipGraphMemAllocNodeGetParams, free),
               "free_null": (hip.hipGraphMemFreeNodeGetParams, None),
               "free_empty": (hip.hipGraphMemFreeNodeGetParams, None),
               "free_of_alloc_node": (hip.hipGraphMemFreeNodeGetParams, alloc)}[section]
    expect_error(E.hipErrorInvalidValue, fn, arg)
    exe = res.instantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipDeviceGraphMemTrim(0)
