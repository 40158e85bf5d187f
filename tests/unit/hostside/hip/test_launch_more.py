"""hipLaunchKernel, hipExtLaunchKernel, the cooperative launches (_launch_more) and the smaller device
calls of _device_more, on two emulated GPUs: results read back from device memory, every bad
argument with CLR's error code."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
N = 1024


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 32, "engines": 2})


@pytest.fixture
def buf(mod):
    d = hip.hipMalloc(4 * N)
    hip.hipMemset(d, 0xFF, 4 * N)
    yield d
    hip.hipDeviceSynchronize()
    hip.hipFree(d)
    hip.hipGetLastError()


def fn(mod, name):
    return hip.hipModuleGetFunction(mod, name)


def read(d, n=N):
    out = np.empty(n, dtype=np.int32)
    hip.hipMemcpy(out, d, 4 * n, hip.hipMemcpyDeviceToHost)
    return out


def ids_written(d, n):
    """grid_ids wrote work-items 0..n-1 and nothing past them."""
    out = read(d)
    return np.array_equal(out[:n], np.arange(n)) and (out[n:] == -1).all()


def raises(err, call, *args):
    with pytest.raises(hip.HipError) as ei:
        call(*args)
    assert ei.value.error == err, ei.value
    assert hip.hipGetLastError() == err


# -- hipLaunchKernel / hipExtLaunchKernel ------------------------------------------------------------
@pytest.mark.parametrize("grid, block, n", [(4, 64, 256), ((3,), (100,), 300), ((2, 1, 1), (64, 1, 1), 128)])
def test_launch_kernel_grid(mod, buf, grid, block, n):
    hip.hipLaunchKernel(fn(mod, "grid_ids"), grid, block, [buf], 0, None)
    assert ids_written(buf, n)


def test_launch_kernel_stream_and_args(mod):
    n = 1000
    a, b = np.arange(n, dtype=np.float32), np.full(n, 2, dtype=np.float32)
    da, db, dc = (hip.hipMalloc(4 * n) for _ in range(3))
    s = hip.hipStreamCreate()
    try:
        hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyHostToDevice)
        hip.hipMemcpy(db, b, 4 * n, hip.hipMemcpyHostToDevice)
        hip.hipLaunchKernel(fn(mod, "vadd"), (n + 255) // 256, 256, (da, db, dc, n), 0, s)
        hip.hipStreamSynchronize(s)
        c = np.empty(n, dtype=np.float32)
        hip.hipMemcpy(c, dc, 4 * n, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(c, a + b)
    finally:
        hip.hipStreamDestroy(s)
        for p in (da, db, dc):
            hip.hipFree(p)


def test_launch_kernel_no_arguments(mod):
    hip.hipLaunchKernel(fn(mod, "empty"), 1, 1)
    hip.hipLaunchKernel(fn(mod, "empty"), 1, 1, [], 0, hip.hipStreamPerThread)
    hip.hipDeviceSynchronize()


def test_launch_kernel_over_max_grid_dim_y(mod):
    """As CLR on gfx9: gridDim is not checked against maxGridSize, only the work-items (u32)."""
    hip.hipLaunchKernel(fn(mod, "empty"), (1, 65537, 1), 1)
    hip.hipDeviceSynchronize()


def test_launch_kernel_errors(mod, buf):
    g = fn(mod, "grid_ids")
    dead = hip.hipStreamCreate()
    hip.hipStreamDestroy(dead)
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, [buf], 0, dead)
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, [buf], 0, 0x1234)
    for f in (None, "grid_ids", 0):
        raises(E.hipErrorInvalidDeviceFunction, hip.hipLaunchKernel, f, 1, 1, [buf])
    for grid, block in [(0, 1), ((1, 0, 1), 1), ((1, 1, 0), 1), (1, 0), (1, (1, 0, 1)), (1, (1, 1, 0))]:
        raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, grid, block, [buf])
    raises(E.hipErrorInvalidConfiguration, hip.hipLaunchKernel, g, 2**31, 2, [buf])
    raises(E.hipErrorInvalidConfiguration, hip.hipLaunchKernel, g, (1, 2**16, 1), (1, 2**16, 1), [buf])
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1025, [buf])            # > maxThreadsPerBlock
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, (11, 11, 11), [buf])
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, [buf], 65537)        # > sharedMemPerBlock
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, [buf], -1)
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1)                      # no arguments
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, [buf, 1])            # one too many
    raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, 1, ["x"])               # not a pointer
    for bad in ((1, 2, 3, 4), (), 1.5, (1, -1), "1", 2**32):
        raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, bad, 1, [buf])
        raises(E.hipErrorInvalidValue, hip.hipLaunchKernel, g, 1, bad, [buf])
    hip.hipDeviceSynchronize()
    assert (read(buf) == -1).all()          # no rejected launch ran


def test_launch_kernel_unloaded_module(mod):
    from tests.paths import kernel_file
    m = hip.hipModuleLoad(kernel_file("basic.py"))
    f = fn(m, "empty")
    hip.hipModuleUnload(m)
    raises(E.hipErrorInvalidHandle, hip.hipLaunchKernel, f, 1, 1)


def test_launch_kernel_capture(mod, buf):
    s = hip.hipStreamCreate()
    try:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        hip.hipLaunchKernel(fn(mod, "grid_ids"), 2, 64, [buf], 0, s)
        graph = hip.hipStreamEndCapture(s)
        assert len(hip.hipGraphGetNodes(graph)) == 1
        assert (read(buf) == -1).all()              # recorded, not run
        ex = hip.hipGraphInstantiate(graph)
        hip.hipGraphLaunch(ex, s)
        hip.hipStreamSynchronize(s)
        assert ids_written(buf, 128)
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(graph)
    finally:
        hip.hipStreamDestroy(s)


def test_ext_launch_kernel_events(mod, buf):
    start, stop = hip.hipEventCreate(), hip.hipEventCreate()
    s = hip.hipStreamCreate()
    try:
        hip.hipExtLaunchKernel(fn(mod, "grid_ids"), 3, 64, [buf], 0, s, start, stop, hip.hipExtAnyOrderLaunch)
        hip.hipEventSynchronize(stop)
        assert hip.hipEventElapsedTime(start, stop) >= 0
        assert ids_written(buf, 192)
        hip.hipExtLaunchKernel(fn(mod, "empty"), 1, 1, None, 0, s, None, None, 0)     # no events
        hip.hipExtLaunchKernel(fn(mod, "empty"), 1, 1, None, 0, s, None, stop, 0)     # stop only
        hip.hipStreamSynchronize(s)
    finally:
        hip.hipStreamDestroy(s)
        hip.hipEventDestroy(start)
        hip.hipEventDestroy(stop)


def test_ext_launch_kernel_errors(mod, buf):
    g = fn(mod, "grid_ids")
    ev = hip.hipEventCreate()
    dead = hip.hipEventCreate()
    hip.hipEventDestroy(dead)
    s = hip.hipStreamCreate()
    try:
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, None, dead, None, 0)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, None, None, dead, 0)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, None, "event", None, 0)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, None, None, None, "0")
        raises(E.hipErrorInvalidDeviceFunction, hip.hipExtLaunchKernel, None, 1, 1, [buf], 0, None, ev, ev, 0)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 0, 1, [buf], 0, None, ev, ev, 0)
        raises(E.hipErrorInvalidConfiguration, hip.hipExtLaunchKernel, g, 2**31, 2, [buf], 0, None, ev, ev, 0)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 2**17, None, ev, ev, 0)
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        raises(E.hipErrorStreamCaptureUnsupported, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, s, ev, None, 0)
        hip.hipExtLaunchKernel(g, 1, 1, [buf], 0, s, None, None, 0)    # no events: a kernel node
        hip.hipGraphDestroy(hip.hipStreamEndCapture(s))
        hip.hipStreamDestroy(s)
        raises(E.hipErrorInvalidValue, hip.hipExtLaunchKernel, g, 1, 1, [buf], 0, s, None, None, 0)
        s = None
        hip.hipDeviceSynchronize()
        assert (read(buf) == -1).all()
    finally:
        if s is not None:
            hip.hipStreamDestroy(s)
        hip.hipEventDestroy(ev)


# -- cooperative launches ----------------------------------------------------------------------------
def test_cooperative_attribute(mod):
    for d in range(hip.hipGetDeviceCount()):
        assert hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeCooperativeLaunch, d) == 1
        assert hip.hipGetDeviceProperties(d).cooperativeLaunch == 1
        assert hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeCooperativeMultiDeviceLaunch,
                                         d) == 0


@pytest.mark.parametrize("block, shared", [(64, 0), (256, 0), (1, 0), (1024, 0), (64, 4096), (64, 65536)])
def test_cooperative_largest_grid(mod, block, shared):
    """The largest grid hipModuleOccupancyMaxPotentialBlockSize allows runs; one block more is
    hipErrorCooperativeLaunchTooLarge, in both forms (the same limit for a 2-D or 3-D grid)."""
    f = fn(mod, "empty")
    most = hip.hipModuleOccupancyMaxPotentialBlockSize(f, shared, block)[0]
    assert most >= 1
    hip.hipLaunchCooperativeKernel(f, most, block, None, shared, None)
    hip.hipModuleLaunchCooperativeKernel(f, 1, most, 1, block, 1, 1, shared, None, None)
    hip.hipDeviceSynchronize()
    raises(E.hipErrorCooperativeLaunchTooLarge, hip.hipLaunchCooperativeKernel, f, most + 1, block, None, shared,
           None)
    raises(E.hipErrorCooperativeLaunchTooLarge, hip.hipLaunchCooperativeKernel, f, (most, 2), block, None, shared,
           None)
    raises(E.hipErrorCooperativeLaunchTooLarge, hip.hipModuleLaunchCooperativeKernel, f, 1, 1, most + 1, block, 1,
           1, shared, None, None)


def test_cooperative_runs_kernel(mod, buf):
    s = hip.hipStreamCreate()
    try:
        hip.hipLaunchCooperativeKernel(fn(mod, "grid_ids"), (2, 1, 1), (64, 1, 1), [buf], 0, s)
        hip.hipStreamSynchronize(s)
        assert ids_written(buf, 128)
        hip.hipMemset(buf, 0xFF, 4 * N)
        hip.hipModuleLaunchCooperativeKernel(fn(mod, "grid_ids"), 5, 1, 1, 32, 1, 1, 0, s, [buf])
        hip.hipStreamSynchronize(s)
        assert ids_written(buf, 160)
    finally:
        hip.hipStreamDestroy(s)


def test_launch_cooperative_kernel_errors(mod, buf):
    g = fn(mod, "grid_ids")
    dead = hip.hipStreamCreate()
    hip.hipStreamDestroy(dead)
    raises(E.hipErrorContextIsDestroyed, hip.hipLaunchCooperativeKernel, g, 1, 1, [buf], 0, dead)
    raises(E.hipErrorInvalidDeviceFunction, hip.hipLaunchCooperativeKernel, None, 1, 1, [buf], 0, None)
    raises(E.hipErrorInvalidConfiguration, hip.hipLaunchCooperativeKernel, g, 2**31, 2, [buf], 0, None)
    raises(E.hipErrorInvalidConfiguration, hip.hipLaunchCooperativeKernel, g, 1, 1025, [buf], 0, None)
    raises(E.hipErrorInvalidConfiguration, hip.hipLaunchCooperativeKernel, g, 1, (11, 11, 11), [buf], 0, None)
    raises(E.hipErrorCooperativeLaunchTooLarge, hip.hipLaunchCooperativeKernel, g, 1, 1, [buf], 65537, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, 1, 1, [buf], -1, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, 0, 1, [buf], 0, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, 1, 0, [buf], 0, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, 1, 1, None, 0, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, 1, 1, [buf, 2], 0, None)
    raises(E.hipErrorInvalidValue, hip.hipLaunchCooperativeKernel, g, "1", 1, [buf], 0, None)
    hip.hipDeviceSynchronize()
    assert (read(buf) == -1).all()


def test_module_launch_cooperative_kernel_errors(mod, buf):
    g = fn(mod, "grid_ids")
    dead = hip.hipStreamCreate()
    hip.hipStreamDestroy(dead)
    ok = [g, 1, 1, 1, 1, 1, 1, 0, None, [buf]]

    def bad(err, **change):
        args = list(ok)
        for k, v in change.items():
            args[int(k[1:])] = v
        raises(err, hip.hipModuleLaunchCooperativeKernel, *args)

    bad(E.hipErrorInvalidValue, a8=dead)
    bad(E.hipErrorInvalidResourceHandle, a0=None)
    bad(E.hipErrorInvalidResourceHandle, a0="grid_ids")
    for i in range(1, 7):
        bad(E.hipErrorInvalidValue, **{f"a{i}": 0})
    bad(E.hipErrorInvalidConfiguration, a1=2**31, a4=2)
    for i in (4, 5, 6):
        bad(E.hipErrorInvalidValue, **{f"a{i}": 1025})
    bad(E.hipErrorInvalidValue, a4=11, a5=11, a6=11)
    bad(E.hipErrorInvalidValue, a7=65537)
    bad(E.hipErrorInvalidValue, a9=None)
    bad(E.hipErrorInvalidValue, a9=[])
    bad(E.hipErrorInvalidValue, a1=1.0)
    hip.hipDeviceSynchronize()
    assert (read(buf) == -1).all()


def test_cooperative_capture(mod, buf):
    s = hip.hipStreamCreate()
    try:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        hip.hipModuleLaunchCooperativeKernel(fn(mod, "grid_ids"), 2, 1, 1, 64, 1, 1, 0, s, [buf])
        graph = hip.hipStreamEndCapture(s)
        ex = hip.hipGraphInstantiate(graph)
        hip.hipGraphLaunch(ex, s)
        hip.hipStreamSynchronize(s)
        assert ids_written(buf, 128)
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(graph)
    finally:
        hip.hipStreamDestroy(s)


# -- _device_more --------------------------------------------------------------------------------------
def test_uuid(mod):
    u0, u1 = hip.hipDeviceGetUuid(0), hip.hipDeviceGetUuid(hip.hipDeviceGet(1))
    assert len(u0) == 16 and len(u1) == 16 and u0 != u1 and any(u0)
    assert u0 == hip.hipDeviceGetUuid(0) == hip.hipGetDeviceProperties(0).uuid
    assert u1 == hip.hipGetDeviceProperties(1).uuid
    int(u0, 16)                                             # ASCII hex digits, as ROCm's GPU-<id>
    for d in (-1, 2, None, 1.0, True):
        raises(E.hipErrorInvalidDevice, hip.hipDeviceGetUuid, d)


def test_p2p_attribute(mod):
    A = hip.hipDeviceP2PAttr
    for src, dst in ((0, 1), (1, 0)):
        assert hip.hipDeviceGetP2PAttribute(A.hipDevP2PAttrAccessSupported, src, dst) == \
            hip.hipDeviceCanAccessPeer(src, dst) == 1
        assert hip.hipDeviceGetP2PAttribute(hip.hipDevP2PAttrHipArrayAccessSupported, src, dst) == 1
        assert hip.hipDeviceGetP2PAttribute(hip.hipDevP2PAttrNativeAtomicSupported, src, dst) == 1
        assert hip.hipDeviceGetP2PAttribute(hip.hipDevP2PAttrPerformanceRank, src, dst) == \
            hip.hipExtGetLinkTypeAndHopCount(src, dst)[0]
    assert hip.hipDeviceGetP2PAttribute(1, 0, 1) == 1       # a plain int attribute
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrAccessSupported, 0, 0)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrAccessSupported, 2, 0)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrAccessSupported, 0, 2)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrAccessSupported, -1, 0)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrPerformanceRank, 0, -1)
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, A.hipDevP2PAttrAccessSupported, None, 1)
    raises(E.hipErrorInvalidValue, hip.hipDeviceGetP2PAttribute, 10, 0, 1)
    raises(E.hipErrorInvalidValue, hip.hipDeviceGetP2PAttribute, 10, -1, 1)     # attr is checked before < 0
    raises(E.hipErrorInvalidDevice, hip.hipDeviceGetP2PAttribute, 10, 2, 1)     # ... and after >= count


def test_link_type_and_hop_count(mod):
    assert hip.hipExtGetLinkTypeAndHopCount(0, 1) == hip.hipExtGetLinkTypeAndHopCount(1, 0) == \
        (hip.HSA_AMD_LINK_INFO_TYPE_PCIE, 1)
    for d1, d2 in ((0, 0), (-1, 0), (0, -1), (-1, -2), (None, 1)):
        raises(E.hipErrorInvalidValue, hip.hipExtGetLinkTypeAndHopCount, d1, d2)
    for d1, d2 in ((2, 0), (0, 2), (2, 3)):
        raises(E.hipErrorInvalidDevice, hip.hipExtGetLinkTypeAndHopCount, d1, d2)


def test_not_supported(mod):
    raises(E.hipErrorNotSupported, hip.hipProfilerStart)
    raises(E.hipErrorNotSupported, hip.hipProfilerStop)
    raises(E.hipErrorNotSupported, hip.hipSetValidDevices, [0, 1], 2)
    raises(E.hipErrorNotSupported, hip.hipSetValidDevices, None, 0)


def test_mem_alloc_host(mod):
    p = hip.hipMemAllocHost(4 * 16)
    try:
        a = hip.host_array(p, np.int32, 16)
        a[:] = np.arange(16)
        d = hip.hipMalloc(64)
        hip.hipMemcpy(d, p, 64, hip.hipMemcpyHostToDevice)
        assert np.array_equal(read(d, 16), np.arange(16))
        hip.hipFree(d)
        assert hip.hipHostGetFlags(p) == 0
    finally:
        hip.hipHostFree(p)
    assert hip.hipMemAllocHost(0) == 0
    raises(E.hipErrorInvalidValue, hip.hipMemAllocHost, -1)
    raises(E.hipErrorInvalidValue, hip.hipMemAllocHost, None)
    s = hip.hipStreamCreate()
    try:
        hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
        raises(E.hipErrorStreamCaptureUnsupported, hip.hipMemAllocHost, 64)
        with pytest.raises(hip.HipError):
            hip.hipStreamEndCapture(s)                  # the capture was invalidated
        hip.hipGetLastError()
    finally:
        hip.hipStreamDestroy(s)


def test_get_device_properties_r0600(mod):
    for d in (0, 1):
        assert hip.hipGetDevicePropertiesR0600(d) == hip.hipGetDeviceProperties(d)
    raises(E.hipErrorInvalidDevice, hip.hipGetDevicePropertiesR0600, 2)
    raises(E.hipErrorInvalidDevice, hip.hipGetDevicePropertiesR0600, -1)
