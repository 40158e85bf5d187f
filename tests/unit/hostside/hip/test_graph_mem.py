"""Graph memory nodes (hostside/hip/_graph_mem.py, _graph_mem_run.py): captured hipMallocAsync /
hipFreeAsync become alloc / free nodes, CLR's NotSupported cases, hipFreeAsync of a graph allocation,
and the address's lifetime."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)

E = hip.hipError_t


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 8, "host_pool_mib": 8, "engines": 1})


def params(nbytes, device=0):
    return hip.hipMemAllocNodeParams(hip.hipMemPoolProps(hip.hipMemAllocationTypePinned,
                                                         location=hip.hipMemLocation(hip.hipMemLocationTypeDevice,
                                                                                     device)), bytesize=nbytes)


def used():
    return hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent)


def test_captured_malloc_and_free_async_become_memory_nodes(mod, stream):
    host = np.zeros(1024, np.uint8)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    d = hip.hipMallocAsync(1024, stream)
    hip.hipMemsetAsync(d, 7, 1024, stream)
    hip.hipMemcpyAsync(host, d, 1024, hip.hipMemcpyDeviceToHost, stream)
    hip.hipFreeAsync(d, stream)
    g = hip.hipStreamEndCapture(stream)
    nodes = hip.hipGraphGetNodes(g)
    assert [hip.hipGraphNodeGetType(n) for n in nodes] == [
        hip.hipGraphNodeType.hipGraphNodeTypeMemAlloc, hip.hipGraphNodeType.hipGraphNodeTypeMemset,
        hip.hipGraphNodeType.hipGraphNodeTypeMemcpy, hip.hipGraphNodeType.hipGraphNodeTypeMemFree]
    p = hip.hipGraphMemAllocNodeGetParams(nodes[0])
    assert p.dptr == d and p.bytesize == 1024 and p.accessDescCount == hip.hipGetDeviceCount()
    assert p.accessDescs[0].flags == hip.hipMemAccessFlagsProtReadWrite
    assert hip.hipGraphMemFreeNodeGetParams(nodes[3]) == d
    assert used() == 0                  # nothing taken from the pool before a launch
    exe = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert (host == 7).all() and used() == 0
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)


def test_clone_and_destroy_node_of_a_graph_with_memory_nodes_are_not_supported(mod):
    g = hip.hipGraphCreate()
    p = params(512)
    a = hip.hipGraphAddMemAllocNode(g, None, p)
    f = hip.hipGraphAddMemFreeNode(g, a, p.dptr)
    for fn, arg in ((hip.hipGraphClone, g), (hip.hipGraphDestroyNode, a), (hip.hipGraphDestroyNode, f)):
        with pytest.raises(hip.HipError) as ei:
            fn(arg)
        assert ei.value.error == E.hipErrorNotSupported
    with pytest.raises(hip.HipError) as ei:     # the address has its free node already
        hip.hipGraphAddMemFreeNode(g, a, p.dptr)
    assert ei.value.error == E.hipErrorInvalidValue
    hip.hipGraphDestroy(g)


def test_free_async_of_a_graph_allocation_returns_it_to_the_graph_pool(mod, stream):
    g = hip.hipGraphCreate()
    p = params(4096)
    hip.hipGraphAddMemAllocNode(g, None, p)
    exe = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(exe, stream)
    assert used() == 4096
    hip.hipFreeAsync(p.dptr, stream)
    hip.hipStreamSynchronize(stream)
    assert used() == 0
    assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrReservedMemCurrent) == 0
    assert hip.hipPointerGetAttribute(hip.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, p.dptr) \
        == p.dptr                       # the address stays reserved while the node lives
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)
    with pytest.raises(hip.HipError):   # ... and goes with the last graph or exec holding it
        hip.hipPointerGetAttribute(hip.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, p.dptr)
    hip.hipGetLastError()
