"""Graph memory nodes across hipDeviceReset (hostside/hip/_graph_mem_run.py): a graph or exec made
before the reset and destroyed after it frees nothing of the new runtime and brings none up. Each
test failed before its fix."""
import pytest

from hostside import hip, hsa
from hostside.hip import _context

pytestmark = pytest.mark.timeout(120)

CONFIG = {"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "engines": 1}


@pytest.fixture
def platform():
    hip.hipDeviceReset()
    hsa.configure(CONFIG)
    try:
        yield
    finally:
        hsa.configure(None)
        hip.hipDeviceReset()


def params(nbytes):
    return hip.hipMemAllocNodeParams(hip.hipMemPoolProps(hip.hipMemAllocationTypePinned,
                                                         location=hip.hipMemLocation(hip.hipMemLocationTypeDevice,
                                                                                     0)), bytesize=nbytes)


def test_destroying_a_graph_of_the_old_runtime_frees_nothing_of_the_new_one(platform):
    """The alloc node's address freed through whatever runtime was current: after a reset, the new
    runtime's allocation at the same address (a fresh allocator hands out the same one)."""
    g = hip.hipGraphCreate()
    p = params(4096)
    hip.hipGraphAddMemAllocNode(g, None, p)
    exe = hip.hipGraphInstantiate(g)
    hip.hipDeviceReset()
    mine = hip.hipMalloc(4096)
    assert mine == p.dptr
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)
    hip.hipPointerGetAttribute(hip.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, mine)
    hip.hipFree(mine)


def test_destroying_a_graph_after_a_reset_brings_no_runtime_up(platform):
    g = hip.hipGraphCreate()
    hip.hipGraphAddMemAllocNode(g, None, params(4096))
    hip.hipDeviceReset()
    hip.hipGraphDestroy(g)
    assert _context._state is None
