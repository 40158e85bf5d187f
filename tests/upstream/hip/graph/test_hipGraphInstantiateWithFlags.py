"""hipGraphInstantiateWithFlags: argument errors and a dependency graph instantiated and launched on
the null stream, and AutoFreeOnLaunch on a graph that never frees its allocation. (The peer-device
cases need hipDeviceCanAccessPeer: NOT_PORTED.md.)"""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error, kparams

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipGraphInstantiateWithFlags.cc"

E = hip.hipError_t


@pytest.mark.parametrize("section", ["null_graph", "invalid_flag"])
def test_Unit_hipGraphInstantiateWithFlags_Negative(mod, res, section):
    # "Passing nullptr pGraphExec" is a null out-pointer
    if section == "null_graph":
        expect_error(E.hipErrorInvalidValue, hip.hipGraphInstantiateWithFlags, None, 0)
    else:
        graph = res.graph()
        with pytest.raises(hip.HipError):
            res.keep(hip.hipGraphInstantiateWithFlags(graph, 10))


def test_Unit_hipGraphInstantiateWithFlags_DependencyGraph(mod, res):
    n = 1024
    nbytes = n * 4
    a_d, b_d, c_d = res.malloc(nbytes), res.malloc(nbytes), res.malloc(nbytes)
    a_h = np.arange(n, dtype=np.int32)
    b_h = np.arange(n, dtype=np.int32) * 3
    c_h = np.zeros(n, np.int32)
    blocks = (n + 255) // 256
    graph = res.graph()
    memset_a = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(a_d, 0, nbytes, 1))
    memset_b = hip.hipGraphAddMemsetNode(graph, None, hip.hipMemsetParams(b_d, 0, nbytes, 1))
    memset_k_c = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "set_value", [c_d, 0, n], blocks, 256))
    h2d_a = hip.hipGraphAddMemcpyNode1D(graph, None, a_d, a_h, nbytes, hip.hipMemcpyHostToDevice)
    h2d_b = hip.hipGraphAddMemcpyNode1D(graph, None, b_d, b_h, nbytes, hip.hipMemcpyHostToDevice)
    d2h_c = hip.hipGraphAddMemcpyNode1D(graph, None, c_h, c_d, nbytes, hip.hipMemcpyDeviceToHost)
    vec_add = hip.hipGraphAddKernelNode(graph, None, kparams(mod, "vectorADD_i32", [a_d, b_d, c_d, n], blocks, 256))
    hip.hipGraphAddDependencies(graph, memset_a, h2d_a)
    hip.hipGraphAddDependencies(graph, memset_b, h2d_b)
    hip.hipGraphAddDependencies(graph, h2d_a, vec_add)
    hip.hipGraphAddDependencies(graph, h2d_b, vec_add)
    hip.hipGraphAddDependencies(graph, memset_k_c, vec_add)
    hip.hipGraphAddDependencies(graph, vec_add, d2h_c)
    exe = res.keep(hip.hipGraphInstantiateWithFlags(graph, 0))
    hip.hipGraphLaunch(exe, 0)
    hip.hipStreamSynchronize(0)
    assert (c_h == a_h + b_h).all()


def test_Unit_hipGraphInstantiateWithFlags_FlagAutoFreeOnLaunch_check(mod, res):
    nbytes = 4 * 1024 * 1024                      # upstream: 2 GiB
    graph = hip.hipGraphCreate(0)
    stream = res.stream()
    p = hip.hipMemAllocNodeParams(hip.hipMemPoolProps(hip.hipMemAllocationTypePinned,
                                                      location=hip.hipMemLocation(hip.hipMemLocationTypeDevice, 0)),
                                  bytesize=nbytes)
    hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    exe = hip.hipGraphInstantiateWithFlags(graph, hip.hipGraphInstantiateFlagAutoFreeOnLaunch)

    def launch_trim_read():
        hip.hipGraphLaunch(exe, stream)
        hip.hipStreamSynchronize(stream)
        hip.hipDeviceGraphMemTrim(0)
        return (hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent),
                hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrReservedMemCurrent))
    before = launch_trim_read()
    assert launch_trim_read() == before
    assert launch_trim_read() == before
    hip.hipFree(p.dptr)                           # free allocMemory manually
    hip.hipGraphDestroy(graph)
    hip.hipGraphExecDestroy(exe)
