"""Review of the graph memory nodes (hostside/hip/_graph_mem.py, _graph_mem_run.py): signals, device
blocks and the address sets a launch, a hipFree, a failed call or a failed capture must not leak or
corrupt. Each test failed before its fix."""
import numpy as np
import pytest

from hostside import hip
from hostside.hip import _graph_mem_run
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)

E = hip.hipError_t
DEV_PTR = hip.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 8, "host_pool_mib": 8, "engines": 1})


def params(nbytes, device=0):
    return hip.hipMemAllocNodeParams(hip.hipMemPoolProps(hip.hipMemAllocationTypePinned,
                                                         location=hip.hipMemLocation(hip.hipMemLocationTypeDevice,
                                                                                     device)), bytesize=nbytes)


def live(ptr) -> bool:
    try:
        hip.hipPointerGetAttribute(DEV_PTR, ptr)
        return True
    except hip.HipError:
        hip.hipGetLastError()
        return False


@pytest.fixture
def flag(mod):
    """A u32 in pinned host memory a hipStreamWaitValue32 holds a stream on (set to 1 to let go)."""
    p = hip.hipHostMalloc(8)
    view = hip.host_array(p, np.uint32, 2)
    view[:] = 0
    yield p, view
    view[0] = 1
    hip.hipDeviceSynchronize()
    hip.hipHostFree(p)


def test_relaunch_reusing_a_chunk_whose_free_is_pending_leaks_no_marker_signal(mod, stream, flag, monkeypatch):
    """A launch whose alloc node takes back the chunk its previous launch freed on the same stream
    (its free marker not passed yet) dropped that marker's signal: one signal of the platform lost
    per overlapping relaunch."""
    made = []
    real = _graph_mem_run.fresh_signal

    def recording(retired, rt):
        sig = real(retired, rt)
        made.append(sig)
        return sig
    monkeypatch.setattr(_graph_mem_run, "fresh_signal", recording)
    ptr, view = flag
    g = hip.hipGraphCreate()
    p = params(4096)
    a = hip.hipGraphAddMemAllocNode(g, None, p)
    hip.hipGraphAddMemFreeNode(g, [a], p.dptr)
    exe = hip.hipGraphInstantiate(g)
    hip.hipStreamWaitValue32(stream, ptr, 1, hip.hipStreamWaitValueGte)
    for _ in range(3):                  # each one reuses the chunk the previous one freed
        hip.hipGraphLaunch(exe, stream)
    view[0] = 1
    hip.hipStreamSynchronize(stream)
    empty = hip.hipModuleGetFunction(mod, "empty")  # the last marker is no longer the stream's last signal
    hip.hipModuleLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, [])
    hip.hipStreamSynchronize(stream)
    hip.hipDeviceGraphMemTrim(0)                    # releases the passed frees, sweeps their signals
    assert len(made) == 3
    assert [s.destroyed for s in made] == [True] * 3
    assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrReservedMemCurrent) == 0
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)


def test_hipfree_of_a_graph_address_then_a_malloc_there_survives_the_exec_and_graph_destroy(mod, stream):
    """hipFree gives the alloc node's reserved block back; a hipMalloc may get the same address. The
    exec's and graph's destroy then freed that new, unrelated allocation."""
    g = hip.hipGraphCreate()
    p = params(4096)
    hip.hipGraphAddMemAllocNode(g, None, p)
    exe = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipFree(p.dptr)
    mine = hip.hipMalloc(4096)
    try:
        assert mine == p.dptr           # the allocator's first fit: the very address (else no test)
        assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent) == 0
        hip.hipGraphExecDestroy(exe)
        hip.hipGraphDestroy(g)
        assert live(mine)
    finally:
        if live(mine):
            hip.hipFree(mine)


def test_hipfree_of_a_graph_address_reserved_again_by_a_new_alloc_node_is_noticed(mod, stream):
    """The address of a hipFree'd alloc node, reserved again by another graph's alloc node: the old
    chunk mapped there was taken for the new node's (the address still named a live block)."""
    g1 = hip.hipGraphCreate()
    p1 = params(4096)
    hip.hipGraphAddMemAllocNode(g1, None, p1)
    exe1 = hip.hipGraphInstantiate(g1)
    hip.hipGraphLaunch(exe1, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipFree(p1.dptr)
    g2 = hip.hipGraphCreate()
    p2 = params(4096)
    hip.hipGraphAddMemAllocNode(g2, None, p2)
    assert p2.dptr == p1.dptr
    assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent) == 0
    hip.hipGraphExecDestroy(exe1)
    hip.hipGraphDestroy(g1)
    assert live(p2.dptr)                # g2's node still holds it
    hip.hipGraphDestroy(g2)
    assert not live(p2.dptr)


def test_a_failed_add_mem_free_node_leaves_the_address_free_able(mod):
    """hipGraphAddMemFreeNode took the address out of the graph's set before adding the node: when
    the add failed (a dependency of another graph), no free node could be added for it any more."""
    g, other = hip.hipGraphCreate(), hip.hipGraphCreate()
    p = params(512)
    a = hip.hipGraphAddMemAllocNode(g, None, p)
    stranger = hip.hipGraphAddEmptyNode(other, None)
    with pytest.raises(hip.HipError) as ei:
        hip.hipGraphAddMemFreeNode(g, [stranger], p.dptr)
    assert ei.value.error == E.hipErrorInvalidValue
    f = hip.hipGraphAddMemFreeNode(g, [a], p.dptr)
    assert hip.hipGraphMemFreeNodeGetParams(f) == p.dptr
    hip.hipGraphDestroy(other)
    hip.hipGraphDestroy(g)


def test_an_invalidated_capture_gives_back_its_alloc_nodes_addresses(mod, stream):
    """A captured hipMallocAsync reserves a device block for its node; when the capture fails, the
    graph is never handed out (CLR deletes it), and the block stayed reserved until the process
    ended."""
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    d = hip.hipMallocAsync(4096, stream)
    assert live(d)
    with pytest.raises(hip.HipError):
        hip.hipStreamSynchronize(stream)            # not permitted: the capture is invalidated
    with pytest.raises(hip.HipError) as ei:
        hip.hipStreamEndCapture(stream)
    assert ei.value.error == E.hipErrorStreamCaptureInvalidated
    assert not live(d)


def test_an_unjoined_capture_gives_back_its_alloc_nodes_addresses(mod, stream):
    side = hip.hipStreamCreate()
    ev = hip.hipEventCreate()
    try:
        hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
        hip.hipEventRecord(ev, stream)
        hip.hipStreamWaitEvent(side, ev)            # side joins the capture ...
        d = hip.hipMallocAsync(4096, side)          # ... and is never joined back
        with pytest.raises(hip.HipError) as ei:
            hip.hipStreamEndCapture(stream)
        assert ei.value.error == E.hipErrorStreamCaptureUnjoined
        assert not live(d)
    finally:
        hip.hipEventDestroy(ev)
        hip.hipStreamDestroy(side)


def _mem_graph(nbytes=4096):
    g = hip.hipGraphCreate()
    p = params(nbytes)
    a = hip.hipGraphAddMemAllocNode(g, None, p)
    hip.hipGraphAddMemFreeNode(g, [a], p.dptr)
    return g, p, hip.hipGraphInstantiate(g)


def test_a_release_between_a_launch_and_its_free_marker_does_not_take_the_marker_signal(mod, stream, monkeypatch):
    """A launch put its freed chunks in the free list with a marker signal still at 0 and queued the
    marker only after the packets: another thread's release in between (hipDeviceGraphMemTrim,
    hipDeviceGetGraphMemAttribute, a launch) took the chunks as passed and swept the signal, which
    the marker then named, destroyed (its slot free for anyone's next signal)."""
    made = []
    real = _graph_mem_run.fresh_signal

    def recording(retired, rt):
        sig = real(retired, rt)
        made.append(sig)
        return sig
    monkeypatch.setattr(_graph_mem_run, "fresh_signal", recording)
    g, p, exe = _mem_graph()
    ex = exe.impl
    launch = ex.launch

    def launch_then_other_thread(v):    # what another thread can do at that point of the launch
        launch(v)
        hip.hipDeviceGraphMemTrim(0)
    monkeypatch.setattr(ex, "launch", launch_then_other_thread)
    hip.hipGraphLaunch(exe, stream)
    assert not made[0].destroyed
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)


def test_a_launch_that_fails_leaves_the_graph_memory_as_it_was(mod, stream, monkeypatch):
    """The alloc nodes mapped their chunks (and the marker's signal was taken) before the packets went
    out: a launch that raised left the chunks in use and the signal to nobody."""
    from hostside.hsa import HsaError
    from shm_layout import layouts as L
    made = []
    real = _graph_mem_run.fresh_signal

    def recording(retired, rt):
        sig = real(retired, rt)
        made.append(sig)
        return sig
    monkeypatch.setattr(_graph_mem_run, "fresh_signal", recording)
    g = hip.hipGraphCreate()
    p = params(4096)
    hip.hipGraphAddMemAllocNode(g, None, p)             # no free node: the chunk stays in use
    exe = hip.hipGraphInstantiate(g)

    def failing(v):
        raise HsaError(L.HSA_STATUS_ERROR_OUT_OF_RESOURCES, "no room (injected)")
    monkeypatch.setattr(exe.impl, "launch", failing)
    with pytest.raises(hip.HipError):
        hip.hipGraphLaunch(exe, stream)
    assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent) == 0
    assert all(s.destroyed for s in made)
    monkeypatch.undo()
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert hip.hipDeviceGetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemCurrent) == 4096
    hip.hipFreeAsync(p.dptr, stream)
    hip.hipStreamSynchronize(stream)
    hip.hipGraphExecDestroy(exe)
    hip.hipGraphDestroy(g)
    hip.hipDeviceSetGraphMemAttribute(0, hip.hipGraphMemAttrUsedMemHigh, 0)
