"""Fixed-direction copies, element memsets, pointer attributes and memory info, device attributes and
versions, graph clones and child graphs (hipGraphLaunch into a capture)."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
A = hip.hipDeviceAttribute_t


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2, "signals": 4096})


@pytest.fixture
def on_device():
    """on_device(i): make device i current for the rest of the test (device 0 again afterwards)."""
    yield hip.hipSetDevice
    hip.hipSetDevice(0)


def fn(mod, name):
    return hip.hipModuleGetFunction(mod, name)


def kparams(f, args):
    return hip.hipKernelNodeParams(f, (1, 1, 1), (1, 1, 1), 0, args)


def read(ptr, dtype, count):
    out = np.empty(count, dtype)
    hip.hipMemcpyDtoH(out, ptr, out.nbytes)
    return out


def expect(err, f, *args):
    with pytest.raises(hip.HipError) as ei:
        f(*args)
    assert ei.value.error == err, f"{f.__name__}: {ei.value.name}, expected {err.name}: {ei.value}"
    return ei.value


# -- fixed-direction copies ------------------------------------------------------------------------
def test_htod_dtod_dtoh_round_trip_pageable_and_pinned(mod, dmem):
    n = 1000
    src = np.arange(n, dtype=np.int32)
    a, b = dmem(4 * n), dmem(4 * n)
    hip.hipMemcpyHtoD(a, src, 4 * n)
    hip.hipMemcpyDtoD(b, a, 4 * n)
    out = np.zeros(n, np.int32)
    hip.hipMemcpyDtoH(out, b, 4 * n)
    assert np.array_equal(out, src)
    pin = dmem(4 * n, host=True)
    hip.host_array(pin, np.int32, n)[:] = src * 3
    hip.hipMemcpyHtoD(a, pin, 4 * n)                 # pinned host is a host pointer
    pout = dmem(4 * n, host=True)
    hip.hipMemcpyDtoH(pout, a, 4 * n)
    assert np.array_equal(hip.host_array(pout, np.int32, n), src * 3)


def test_async_fixed_direction_copies_follow_stream_order(mod, stream, dmem):
    n = 4096
    src = np.arange(n, dtype=np.int32)
    a, b = dmem(4 * n), dmem(4 * n)
    out = np.zeros(n, np.int32)
    hip.hipMemcpyHtoDAsync(a, src, 4 * n, stream)
    hip.hipMemcpyDtoDAsync(b, a, 4 * n, stream)
    hip.hipMemcpyDtoHAsync(out, b, 4 * n, stream)
    hip.hipStreamSynchronize(stream)
    assert np.array_equal(out, src)


@pytest.mark.parametrize("call", ["HtoD dst host", "HtoD src device", "DtoH dst device", "DtoH src host",
                                  "DtoD dst host", "DtoD src pinned", "DtoDAsync src pageable"])
def test_a_wrong_kind_of_pointer_is_invalid_value(mod, dmem, call):
    d, d2, pin = dmem(64), dmem(64), dmem(64, host=True)
    page = np.zeros(16, np.int32)
    f, args = {
        "HtoD dst host": (hip.hipMemcpyHtoD, (pin, page, 64)),
        "HtoD src device": (hip.hipMemcpyHtoD, (d, d2, 64)),
        "DtoH dst device": (hip.hipMemcpyDtoH, (d2, d, 64)),
        "DtoH src host": (hip.hipMemcpyDtoH, (page, pin, 64)),
        "DtoD dst host": (hip.hipMemcpyDtoD, (pin, d, 64)),
        "DtoD src pinned": (hip.hipMemcpyDtoD, (d, pin, 64)),
        "DtoDAsync src pageable": (hip.hipMemcpyDtoDAsync, (d, page, 64, None)),
    }[call]
    e = expect(hip.hipError_t.hipErrorInvalidValue, f, *args)
    assert f.__name__ in str(e) and ("dst" if "dst" in call else "src") in str(e)


def test_fixed_direction_copy_past_the_allocation_is_invalid_value(mod, dmem):
    d = dmem(256)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipMemcpyHtoD, d, np.zeros(128, np.int32), 512)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipMemcpyDtoH, np.zeros(8, np.int32), d, 64)


# -- element memsets -------------------------------------------------------------------------------
@pytest.mark.parametrize("width,value,expected", [(1, 0xAB, 0xAB), (1, -1, 0xFF), (2, 0xBEEF, 0xBEEF),
                                                  (2, -2, 0xFFFE), (4, 0xDEADBEEF, 0xDEADBEEF), (4, -1, 0xFFFFFFFF)])
def test_memset_d_fills_count_elements_only(mod, dmem, width, value, expected):
    dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
    f = {1: hip.hipMemsetD8, 2: hip.hipMemsetD16, 4: hip.hipMemsetD32}[width]
    d = dmem(1024)
    hip.hipMemset(d, 0x11, 1024)
    count = 100
    f(d + 4, value, count)                         # count is in elements, at an offset
    got = read(d, np.uint8, 1024)
    lo, hi = 4, 4 + count * width
    assert np.all(got[:lo] == 0x11) and np.all(got[hi:] == 0x11)
    assert np.all(got[lo:hi].view(dt) == expected)


def test_memset_d_async_on_a_stream(mod, stream, dmem):
    d = dmem(3 * 256)
    hip.hipMemsetD8Async(d, 7, 256, stream)
    hip.hipMemsetD16Async(d + 256, 0x0102, 128, stream)
    hip.hipMemsetD32Async(d + 512, 0x01020304, 64, stream)
    hip.hipStreamSynchronize(stream)
    got = read(d, np.uint8, 768)
    assert np.all(got[:256] == 7)
    assert np.all(got[256:512].view(np.uint16) == 0x0102)
    assert np.all(got[512:].view(np.uint32) == 0x01020304)


@pytest.mark.parametrize("f,value", [(hip.hipMemsetD8, 256), (hip.hipMemsetD8, -129), (hip.hipMemsetD16, 65536),
                                     (hip.hipMemsetD16, -32769), (hip.hipMemsetD32, 2**32),
                                     (hip.hipMemsetD32, -2**31 - 1), (hip.hipMemsetD32, 1.5)])
def test_memset_d_value_that_does_not_fit_is_invalid_value(mod, dmem, f, value):
    d = dmem(64)
    hip.hipMemset(d, 0x22, 64)
    e = expect(hip.hipError_t.hipErrorInvalidValue, f, d, value, 4)
    assert "value" in str(e)
    assert np.all(read(d, np.uint8, 64) == 0x22)     # nothing was written


def test_memset_d_bad_count_or_pointer(mod, dmem):
    d = dmem(256)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipMemsetD32, d, 1, 65)        # 260 bytes > 256
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipMemsetD16, d, 1, -1)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipMemsetD8, np.zeros(8, np.uint8), 1, 8)
    hip.hipMemsetD32(d, 5, 0)                                                        # nothing to do


def test_captured_memset_d_become_memset_nodes_with_their_element_size(mod, stream, dmem):
    d = dmem(3 * 256)
    hip.hipMemset(d, 0, 768)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipMemsetD8Async(d, 0x5A, 256, stream)
    hip.hipMemsetD16Async(d + 256, 0x1234, 128, stream)
    hip.hipMemsetD32Async(d + 512, 0x89ABCDEF, 64, stream)
    g = hip.hipStreamEndCapture(stream)
    nodes = hip.hipGraphGetNodes(g)
    assert [hip.hipGraphNodeGetType(n) for n in nodes] == [hip.hipGraphNodeType.hipGraphNodeTypeMemset] * 3
    assert "memset 256 B = 0x1234 (2-byte elements)" in repr(nodes[1])
    assert "memset 256 B = 0x89abcdef (4-byte elements)" in repr(nodes[2])
    assert np.all(read(d, np.uint8, 768) == 0)       # captured, not run
    ex = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    got = read(d, np.uint8, 768)
    assert np.all(got[:256] == 0x5A)
    assert np.all(got[256:512].view(np.uint16) == 0x1234)      # a byte fill would give 0x3434
    assert np.all(got[512:].view(np.uint32) == 0x89ABCDEF)
    hip.hipGraphExecDestroy(ex)


def test_sync_memset_d_and_memcpy_htod_during_capture_are_refused(mod, stream, dmem):
    d = dmem(64)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    expect(hip.hipError_t.hipErrorStreamCaptureUnsupported, hip.hipMemsetD32, d, 1, 4)
    assert hip.hipStreamIsCapturing(stream) == hip.hipStreamCaptureStatusInvalidated
    expect(hip.hipError_t.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, stream)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    expect(hip.hipError_t.hipErrorStreamCaptureUnsupported, hip.hipMemcpyHtoD, d, np.zeros(16, np.int32), 64)
    expect(hip.hipError_t.hipErrorStreamCaptureInvalidated, hip.hipStreamEndCapture, stream)


# -- pointer attributes and memory info ---------------------------------------------------------------
def test_pointer_attributes_of_device_memory_base_and_inside(mod, dmem, on_device):
    d = dmem(4096)
    for p in (d, d + 1, d + 4095):
        a = hip.hipPointerGetAttributes(p)
        assert a.type == hip.hipMemoryTypeDevice
        assert (a.device, a.devicePointer, a.hostPointer, a.isManaged, a.allocationFlags) == (0, p, 0, 0, 0)
    on_device(1)
    d1 = dmem(256)
    on_device(0)
    a = hip.hipPointerGetAttributes(d1 + 8)
    assert (a.type, a.device, a.devicePointer) == (hip.hipMemoryTypeDevice, 1, d1 + 8)


def test_pointer_attributes_of_pinned_host_memory(mod, dmem, on_device):
    on_device(1)
    h = dmem(1000, host=True, flags=0x4)
    on_device(0)
    a = hip.hipPointerGetAttributes(h + 10)
    assert a.type == hip.hipMemoryTypeHost
    assert (a.device, a.hostPointer, a.devicePointer, a.isManaged, a.allocationFlags) == (1, h + 10, h + 10, 0, 4)


def test_pointer_attributes_of_unknown_null_and_freed_pointers(mod, dmem):
    assert (hip.hipMemoryTypeUnregistered, hip.hipMemoryTypeHost, hip.hipMemoryTypeDevice,
            hip.hipMemoryTypeManaged, hip.hipMemoryTypeArray, hip.hipMemoryTypeUnified) == (0, 1, 2, 3, 10, 11)
    p = hip.hipMalloc(256)
    hip.hipFree(p)
    for unknown in (p, np.zeros(4, np.int32), 0x1234):
        a = hip.hipPointerGetAttributes(unknown)
        assert (a.type, a.device, a.devicePointer, a.hostPointer) == \
            (hip.hipMemoryTypeUnregistered, hip.hipInvalidDeviceId, 0, 0)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipPointerGetAttributes, 0)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipPointerGetAttributes, None)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipPointerGetAttributes, "0x1000")


def test_mem_get_info_follows_malloc_and_free_of_the_current_device(mod, on_device):
    free0, total = hip.hipMemGetInfo()
    assert total == hip.hipGetDeviceProperties(0).totalGlobalMem == 16 << 20
    assert 0 < free0 <= total
    p = hip.hipMalloc(1 << 20)
    q = hip.hipMalloc(1000)                          # whole multiples of 256 bytes
    assert hip.hipMemGetInfo() == (free0 - (1 << 20) - 1024, total)
    on_device(1)
    free1, _ = hip.hipMemGetInfo()                   # another device's memory
    r = hip.hipMalloc(4096)
    assert hip.hipMemGetInfo()[0] == free1 - 4096
    hip.hipFree(r)
    on_device(0)
    hip.hipFree(p)
    hip.hipFree(q)
    assert hip.hipMemGetInfo() == (free0, total)


# -- device attributes and versions -------------------------------------------------------------------
def test_attribute_values_are_hips(mod):
    assert (A.hipDeviceAttributeEccEnabled, A.hipDeviceAttributeCanMapHostMemory, A.hipDeviceAttributeClockRate,
            A.hipDeviceAttributeComputeCapabilityMajor, A.hipDeviceAttributeMaxBlockDimX,
            A.hipDeviceAttributeMaxThreadsPerBlock, A.hipDeviceAttributeMemoryClockRate,
            A.hipDeviceAttributeComputeCapabilityMinor, A.hipDeviceAttributeMultiprocessorCount,
            A.hipDeviceAttributePciBusId, A.hipDeviceAttributeMaxSharedMemoryPerBlock,
            A.hipDeviceAttributeTotalConstantMemory, A.hipDeviceAttributeWarpSize,
            A.hipDeviceAttributeClockInstructionRate, A.hipDeviceAttributeWallClockRate) == \
        (0, 3, 5, 23, 26, 56, 60, 61, 63, 67, 74, 83, 87, 10000, 10017)
    assert A.hipDeviceAttributeCudaCompatibleBegin is A.hipDeviceAttributeEccEnabled


_SAME_AS_PROPERTY = [
    ("MaxThreadsPerBlock", "maxThreadsPerBlock"), ("MaxBlockDimX", ("maxThreadsDim", 0)),
    ("MaxBlockDimY", ("maxThreadsDim", 1)), ("MaxBlockDimZ", ("maxThreadsDim", 2)),
    ("MaxGridDimX", ("maxGridSize", 0)), ("MaxGridDimY", ("maxGridSize", 1)), ("MaxGridDimZ", ("maxGridSize", 2)),
    ("MaxSharedMemoryPerBlock", "sharedMemPerBlock"), ("WarpSize", "warpSize"),
    ("MultiprocessorCount", "multiProcessorCount"), ("TotalConstantMemory", "totalConstMem"),
    ("ComputeCapabilityMajor", "major"), ("ComputeCapabilityMinor", "minor"),
    ("ConcurrentKernels", "concurrentKernels"), ("PciBusId", "pciBusID"), ("ClockRate", "clockRate"),
    ("MemoryClockRate", "memoryClockRate"), ("IsMultiGpuBoard", "isMultiGpuBoard"), ("Integrated", "integrated"),
    ("CanMapHostMemory", "canMapHostMemory"), ("ManagedMemory", "managedMemory"),
    ("AsyncEngineCount", "asyncEngineCount"), ("L2CacheSize", "l2CacheSize"),
]


@pytest.mark.parametrize("device", [0, 1])
def test_attributes_equal_the_device_properties(mod, device):
    p = hip.hipGetDeviceProperties(device)
    for attr, key in _SAME_AS_PROPERTY:
        want = p[key[0]][key[1]] if isinstance(key, tuple) else p[key]
        got = hip.hipDeviceGetAttribute(A["hipDeviceAttribute" + attr], device)
        assert got == want and type(got) is int, attr
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributePciBusId, device) == device
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeIsMultiGpuBoard, device) == 1          # 2 agents
    assert hip.hipDeviceGetAttribute(A.hipDeviceAttributeTotalGlobalMem, device) == 16 << 20
    assert (p.maxThreadsPerBlock, p.warpSize, p.major) == (1024, 64, 9)
    assert p.clockRate > 0 and p.memoryClockRate > 0 and p.totalConstMem > 0


def test_attribute_errors(mod):
    for bad in (2, -1, True, "0"):
        expect(hip.hipError_t.hipErrorInvalidDevice, hip.hipDeviceGetAttribute, A.hipDeviceAttributeWarpSize, bad)
    # the device is checked first, as in CLR
    expect(hip.hipError_t.hipErrorInvalidDevice, hip.hipDeviceGetAttribute, 12345, 7)
    for bad in (12345, -1, A.hipDeviceAttributeCudaCompatibleEnd, A.hipDeviceAttributeMaxTexture2DWidth):
        e = expect(hip.hipError_t.hipErrorInvalidValue, hip.hipDeviceGetAttribute, bad, 0)
    assert "MaxTexture2DWidth" in str(e)
    assert hip.hipGetLastError() == hip.hipError_t.hipErrorInvalidValue


def test_driver_and_runtime_versions():
    v = hip.hipRuntimeGetVersion()
    assert v == hip.hipDriverGetVersion() == hip.HIP_VERSION
    assert isinstance(v, int)
    assert (v // 10_000_000, v // 100_000 % 100, v % 100_000) == (6, 2, 0)


# -- graph clones ------------------------------------------------------------------------------------
def _chain(mod, x, d):
    """A graph: inc(x) -> memset(d) -> inc(x), plus a root empty node."""
    inc = fn(mod, "inc")
    g = hip.hipGraphCreate()
    k0 = hip.hipGraphAddKernelNode(g, None, kparams(inc, [x, 4]))
    m = hip.hipGraphAddMemsetNode(g, [k0], hip.hipMemsetParams(d, 0x0707, 16, 2))
    k1 = hip.hipGraphAddKernelNode(g, [m], kparams(inc, [x, 4]))
    hip.hipGraphAddEmptyNode(g, None)
    return g, (k0, m, k1)


def _shape(g):
    nodes = hip.hipGraphGetNodes(g)
    idx = {id(n): i for i, n in enumerate(nodes)}
    frm, to = hip.hipGraphGetEdges(g)
    return [hip.hipGraphNodeGetType(n) for n in nodes], [(idx[id(a)], idx[id(b)]) for a, b in zip(frm, to)]


def test_clone_has_the_same_nodes_and_edges_and_is_independent(mod, stream, dmem):
    x, d = dmem(16), dmem(16)
    g, (k0, m, k1) = _chain(mod, x, d)
    c = hip.hipGraphClone(g)
    assert c is not g and _shape(c) == _shape(g)
    assert not set(map(id, hip.hipGraphGetNodes(c))) & set(map(id, hip.hipGraphGetNodes(g)))
    ck0 = hip.hipGraphGetNodes(c)[0]
    # change the original afterwards: parameters, nodes, edges
    hip.hipGraphKernelNodeSetParams(k0, kparams(fn(mod, "inc"), [x, 2]))
    hip.hipGraphAddEmptyNode(g, [k1])
    hip.hipGraphRemoveDependencies(g, [m], [k1])
    assert hip.hipGraphKernelNodeGetParams(ck0).kernelParams == [x, 4]
    assert len(hip.hipGraphGetNodes(c)) == 4 and len(hip.hipGraphGetEdges(c)[0]) == 2
    # and the clone runs as the original did when it was cloned
    hip.hipMemset(x, 0, 16)
    ex = hip.hipGraphInstantiate(c)
    hip.hipGraphDestroy(g)                            # the clone does not depend on the original
    hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert list(read(x, np.int32, 4)) == [2, 2, 2, 2]
    assert np.all(read(d, np.uint16, 8) == 0x0707)
    hip.hipGraphExecDestroy(ex)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphClone, g)         # destroyed
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphClone, None)


# -- child graphs ------------------------------------------------------------------------------------
def test_child_graph_is_copied_when_added(mod, stream, dmem, tmp_path):
    x = dmem(16)
    inc = fn(mod, "inc")
    child = hip.hipGraphCreate()
    ck = hip.hipGraphAddKernelNode(child, None, kparams(inc, [x, 4]))
    hip.hipGraphAddKernelNode(child, [ck], kparams(inc, [x, 4]))
    parent = hip.hipGraphCreate()
    root = hip.hipGraphAddKernelNode(parent, None, kparams(inc, [x, 4]))
    node = hip.hipGraphAddChildGraphNode(parent, [root], child)
    assert hip.hipGraphNodeGetType(node) == hip.hipGraphNodeType.hipGraphNodeTypeGraph
    assert hip.hipGraphNodeGetDependencies(node) == [root]
    # changing the child afterwards changes neither the node nor what the parent runs
    hip.hipGraphAddKernelNode(child, None, kparams(inc, [x, 4]))
    hip.hipGraphKernelNodeSetParams(ck, kparams(inc, [x, 1]))
    hip.hipGraphDestroy(child)
    owned = hip.hipGraphChildGraphNodeGetGraph(node)
    assert owned is not child and len(hip.hipGraphGetNodes(owned)) == 2
    assert hip.hipGraphKernelNodeGetParams(hip.hipGraphGetNodes(owned)[0]).kernelParams == [x, 4]
    hip.hipMemset(x, 0, 16)
    ex = hip.hipGraphInstantiate(parent)
    for _ in range(3):
        hip.hipGraphLaunch(ex, stream)
    hip.hipStreamSynchronize(stream)
    assert list(read(x, np.int32, 4)) == [9] * 4
    hip.hipGraphExecDestroy(ex)
    dot = tmp_path / "g.dot"
    hip.hipGraphDebugDotPrint(parent, str(dot))
    assert "child graph (2 nodes)" in dot.read_text()
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphChildGraphNodeGetGraph, root)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphAddChildGraphNode, parent, None, child)   # destroyed
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphAddChildGraphNode, parent, None, "graph")


def _spans(out, k):
    v = hip.host_array(out, np.uint64, 2 * k).astype(np.int64)
    return v[0::2], v[1::2]


@pytest.mark.parametrize("slow", [1, 2])
def test_child_graph_nodes_run_after_its_dependencies_and_before_its_dependents(mod, stream, dmem, slow):
    """A -> child{B, C; nested{E}; empty{}} -> D: B, C and E start after A ends, D after all of them."""
    out = dmem(8 * 10, host=True)
    span = fn(mod, "span")
    secs = {i: (0.12 if i == slow else 0.0) for i in range(5)}
    nested = hip.hipGraphCreate()
    hip.hipGraphAddKernelNode(nested, None, kparams(span, [out, 4, secs[4]]))
    child = hip.hipGraphCreate()
    hip.hipGraphAddKernelNode(child, None, kparams(span, [out, 1, secs[1]]))
    hip.hipGraphAddKernelNode(child, None, kparams(span, [out, 2, secs[2]]))
    hip.hipGraphAddChildGraphNode(child, None, nested)
    g = hip.hipGraphCreate()
    a = hip.hipGraphAddKernelNode(g, None, kparams(span, [out, 0, 0.05]))
    c = hip.hipGraphAddChildGraphNode(g, [a], child)
    e = hip.hipGraphAddChildGraphNode(g, [c], hip.hipGraphCreate())      # empty: passes the order through
    hip.hipGraphAddKernelNode(g, [e], kparams(span, [out, 3, 0.0]))
    ex = hip.hipGraphInstantiate(g)
    assert ex.statistics().nodes == 5                                    # the child graphs are inlined
    for _ in range(2):
        hip.host_array(out, np.uint64, 10)[:] = 0
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        start, end = _spans(out, 5)
        for inner in (1, 2, 4):
            assert start[inner] >= end[0], f"child node {inner} started before its dependency ended"
            assert start[3] >= end[inner], f"the dependent started before child node {inner} ended"
    hip.hipGraphExecDestroy(ex)


def test_a_cycle_inside_a_child_graph_is_refused(mod):
    g = hip.hipGraphCreate()
    node = hip.hipGraphAddChildGraphNode(g, None, hip.hipGraphCreate())
    owned = hip.hipGraphChildGraphNodeGetGraph(node)
    x = hip.hipGraphAddEmptyNode(owned, None)
    y = hip.hipGraphAddEmptyNode(owned, [x])
    hip.hipGraphAddDependencies(owned, [y], [x])
    e = expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphInstantiate, g)
    assert "cycle" in str(e)


# -- hipGraphLaunch into a capture --------------------------------------------------------------------
def test_graph_launch_into_a_capture_adds_a_child_graph_node(mod, stream, dmem):
    x = dmem(16)
    out = dmem(8 * 6, host=True)
    inc, span = fn(mod, "inc"), fn(mod, "span")
    inner = hip.hipGraphCreate()
    k = hip.hipGraphAddKernelNode(inner, None, kparams(inc, [x, 4]))
    s = hip.hipGraphAddKernelNode(inner, [k], kparams(span, [out, 1, 0.1]))
    ex = hip.hipGraphInstantiate(inner)
    hip.hipGraphExecKernelNodeSetParams(ex, k, kparams(inc, [x, 2]))         # an exec update: captured too
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 0, 0.05])
    hip.hipGraphLaunch(ex, stream)                                           # not run now: recorded
    hip.hipModuleLaunchKernel(span, 1, 1, 1, 1, 1, 1, 0, stream, [out, 2, 0.0])
    g = hip.hipStreamEndCapture(stream)
    nodes = hip.hipGraphGetNodes(g)
    T = hip.hipGraphNodeType
    assert [hip.hipGraphNodeGetType(n) for n in nodes] == \
        [T.hipGraphNodeTypeKernel, T.hipGraphNodeTypeGraph, T.hipGraphNodeTypeKernel]
    assert hip.hipGraphNodeGetDependencies(nodes[1]) == [nodes[0]]
    assert hip.hipGraphNodeGetDependencies(nodes[2]) == [nodes[1]]
    sub = hip.hipGraphChildGraphNodeGetGraph(nodes[1])
    assert len(hip.hipGraphGetNodes(sub)) == 2
    hip.hipMemset(x, 0, 16)
    ex2 = hip.hipGraphInstantiate(g)
    hip.hipGraphNodeSetEnabled(ex, s, False)          # the capture took a copy: this does not change it
    hip.hipGraphLaunch(ex2, stream)
    hip.hipStreamSynchronize(stream)
    assert list(read(x, np.int32, 4)) == [1, 1, 0, 0]                        # once, with the exec's parameters
    start, end = _spans(out, 3)
    assert start[1] >= end[0] and start[2] >= end[1]
    hip.hipGraphExecDestroy(ex2)
    # a disabled node of the exec becomes an empty node of the captured child graph
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    hip.hipGraphLaunch(ex, stream)
    g2 = hip.hipStreamEndCapture(stream)
    sub2 = hip.hipGraphChildGraphNodeGetGraph(hip.hipGraphGetNodes(g2)[0])
    assert [hip.hipGraphNodeGetType(n) for n in hip.hipGraphGetNodes(sub2)] == \
        [T.hipGraphNodeTypeKernel, T.hipGraphNodeTypeEmpty]
    hip.hipGraphExecDestroy(ex)
    expect(hip.hipError_t.hipErrorInvalidValue, hip.hipGraphLaunch, ex, stream)
