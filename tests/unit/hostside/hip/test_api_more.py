"""The calls added to match CLR: hipInit, device names / memory / flags / limits / cache configs / PCI
ids, hipChooseDevice, hipPointerGetAttribute, hipMemGetAddressRange, hipModuleLoadDataEx, function
attributes and occupancy; pitched memory (hipMallocPitch, hipMemcpy2D*, hipMemset2D*); the
stream-ordered allocator (hipMallocAsync, hipFreeAsync, the default pool)."""
import numpy as np
import pytest

from hostside import hip
from tests.paths import kernel_file
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
PA = hip.hipPointer_attribute


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 2, "memory_mib": 16, "host_pool_mib": 16, "engines": 2, "signals": 4096},
                               "upstream.py")


@pytest.fixture
def on_device():
    yield hip.hipSetDevice
    hip.hipSetDevice(0)


def expect(err, f, *args):
    with pytest.raises(hip.HipError) as ei:
        f(*args)
    assert ei.value.error == err, f"{f.__name__}: {ei.value.name}, expected {err.name}: {ei.value}"
    assert hip.hipGetLastError() == err
    return ei.value


def fn(mod, name):
    return hip.hipModuleGetFunction(mod, name)


# -- group 1: the small calls --------------------------------------------------------------------------
def test_init_name_total_mem(mod):
    hip.hipInit(0)
    expect(E.hipErrorInvalidValue, hip.hipInit, 1)
    p = hip.hipGetDeviceProperties(1)
    assert hip.hipDeviceGetName(1) == p.name
    assert hip.hipDeviceGetName(4, 0) == p.name[:3]          # cut to len - 1, as CLR copies it
    assert hip.hipDeviceTotalMem(0) == p.totalGlobalMem == 16 << 20
    expect(E.hipErrorInvalidDevice, hip.hipDeviceGetName, 2)
    expect(E.hipErrorInvalidDevice, hip.hipDeviceGetName, 0, 5)  # device checked before len
    expect(E.hipErrorInvalidValue, hip.hipDeviceGetName, 0, 0)
    expect(E.hipErrorInvalidDevice, hip.hipDeviceTotalMem, -1)


def test_device_flags_keep_the_schedule_per_device(mod, on_device):
    assert hip.hipGetDeviceFlags() == hip.hipDeviceScheduleAuto
    hip.hipSetDeviceFlags(hip.hipDeviceScheduleBlockingSync | hip.hipDeviceMapHost | hip.hipDeviceLmemResizeToMax)
    assert hip.hipGetDeviceFlags() == hip.hipDeviceScheduleBlockingSync      # CLR keeps the schedule part
    on_device(1)
    assert hip.hipGetDeviceFlags() == hip.hipDeviceScheduleAuto
    hip.hipSetDeviceFlags(hip.hipDeviceScheduleYield)
    assert hip.hipGetDeviceFlags() == hip.hipDeviceScheduleYield
    on_device(0)
    assert hip.hipGetDeviceFlags() == hip.hipDeviceScheduleBlockingSync
    expect(E.hipErrorInvalidValue, hip.hipSetDeviceFlags, hip.hipDeviceScheduleSpin | hip.hipDeviceScheduleYield)
    expect(E.hipErrorInvalidValue, hip.hipSetDeviceFlags, 0x20)
    hip.hipSetDeviceFlags(hip.hipDeviceScheduleAuto)


def test_limits_defaults_set_and_errors(mod):
    assert hip.hipDeviceGetLimit(hip.hipLimitStackSize) == 1024
    assert hip.hipDeviceGetLimit(hip.hipLimitMallocHeapSize) == 8 << 20
    hip.hipDeviceSetLimit(hip.hipLimitStackSize, 1024 + 8)
    assert hip.hipDeviceGetLimit(hip.hipLimitStackSize) == 1024 + 16      # rounded up to 16
    hip.hipDeviceSetLimit(hip.hipLimitMallocHeapSize, 1 << 20)
    assert hip.hipDeviceGetLimit(hip.hipLimitMallocHeapSize) == 1 << 20
    expect(E.hipErrorInvalidValue, hip.hipDeviceSetLimit, hip.hipLimitStackSize, 128 << 10)
    expect(E.hipErrorInvalidValue, hip.hipDeviceSetLimit, hip.hipLimitMallocHeapSize, 16 << 20)
    expect(E.hipErrorUnsupportedLimit, hip.hipDeviceGetLimit, -1)
    expect(E.hipErrorUnsupportedLimit, hip.hipDeviceSetLimit, -1, 1024)
    expect(E.hipErrorUnsupportedLimit, hip.hipDeviceGetLimit, hip.hipLimitPrintfFifoSize)
    expect(E.hipErrorInvalidValue, hip.hipDeviceGetLimit, 3)                 # hipLimitRange
    hip.hipDeviceSetLimit(hip.hipLimitStackSize, 1024)
    hip.hipDeviceSetLimit(hip.hipLimitMallocHeapSize, 8 << 20)


def test_cache_configs(mod, on_device):
    assert hip.hipDeviceGetCacheConfig() == hip.hipFuncCachePreferNone
    hip.hipDeviceSetCacheConfig(hip.hipFuncCachePreferL1)
    assert hip.hipDeviceGetCacheConfig() == hip.hipFuncCachePreferL1
    on_device(1)
    assert hip.hipDeviceGetCacheConfig() == hip.hipFuncCachePreferNone
    on_device(0)
    expect(E.hipErrorInvalidValue, hip.hipDeviceSetCacheConfig, 4)
    hip.hipDeviceSetCacheConfig(hip.hipFuncCachePreferNone)
    hip.hipFuncSetCacheConfig(fn(mod, "empty"), hip.hipFuncCachePreferShared)
    expect(E.hipErrorInvalidDeviceFunction, hip.hipFuncSetCacheConfig, None, hip.hipFuncCachePreferShared)
    expect(E.hipErrorInvalidValue, hip.hipFuncSetCacheConfig, fn(mod, "empty"), -1)


def test_pci_bus_ids_round_trip_and_choose_device(mod):
    for d in range(2):
        bus = hip.hipDeviceGetPCIBusId(d)
        p = hip.hipGetDeviceProperties(d)
        assert bus == f"{p.pciDomainID:04x}:{p.pciBusID:02x}:{p.pciDeviceID:02x}.0"
        assert hip.hipDeviceGetPCIBusId(13, d) == bus
        assert hip.hipDeviceGetByPCIBusId(bus) == d
    assert hip.hipDeviceGetPCIBusId(1) == "0000:01:00.0"
    expect(E.hipErrorInvalidValue, hip.hipDeviceGetPCIBusId, 12, 0)
    expect(E.hipErrorInvalidDevice, hip.hipDeviceGetPCIBusId, 13, 2)
    expect(E.hipErrorInvalidValue, hip.hipDeviceGetByPCIBusId, "0000:07:00.0")
    expect(E.hipErrorInvalidValue, hip.hipDeviceGetByPCIBusId, "not a bus id")
    assert hip.hipChooseDevice({"major": 9}) == 0
    assert hip.hipChooseDevice(hip.hipGetDeviceProperties(1)) == 0     # both match all: the first wins
    assert hip.hipChooseDevice({"totalGlobalMem": 1 << 40}) == 0       # none matches: device 0
    expect(E.hipErrorInvalidValue, hip.hipChooseDevice, None)


def test_pointer_get_attribute_and_address_range(mod, dmem, on_device):
    on_device(1)
    d = dmem(1000)
    on_device(0)
    h = dmem(512, host=True)
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 8) == hip.hipMemoryTypeDevice
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, h) == hip.hipMemoryTypeHost
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d) == 1
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 8) == d + 8
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER, h + 4) == h + 4
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 999) == d
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_RANGE_SIZE, d) == 1024
    assert hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_IS_MANAGED, d) is False
    ids = {hip.hipPointerGetAttribute(PA.HIP_POINTER_ATTRIBUTE_BUFFER_ID, p) for p in (d, d + 4, h)}
    assert len(ids) == 2
    expect(E.hipErrorInvalidValue, hip.hipPointerGetAttribute, PA.HIP_POINTER_ATTRIBUTE_HOST_POINTER, d)
    expect(E.hipErrorNotSupported, hip.hipPointerGetAttribute, PA.HIP_POINTER_ATTRIBUTE_CONTEXT, d)
    expect(E.hipErrorInvalidValue, hip.hipPointerGetAttribute, 99, d)
    expect(E.hipErrorInvalidValue, hip.hipPointerGetAttribute, PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, 0)
    expect(E.hipErrorInvalidValue, hip.hipPointerGetAttribute, PA.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
           np.zeros(4, np.int32))
    assert hip.hipMemGetAddressRange(d + 100) == (d, 1024)
    assert hip.hipMemGetAddressRange(h) == (h, 512)
    expect(E.hipErrorNotFound, hip.hipMemGetAddressRange, 0)
    expect(E.hipErrorNotFound, hip.hipMemGetAddressRange, d + 4096)


def test_module_load_data_ex_and_function_attributes(mod):
    with open(kernel_file("basic.py"), "rb") as f:
        image = f.read()
    m = hip.hipModuleLoadDataEx(image, 0, None, None)
    try:
        f = hip.hipModuleGetFunction(m, "vadd")
        a = hip.hipFuncGetAttributes(f)
        assert a.maxThreadsPerBlock == 1024 and a.binaryVersion == 90 and a.sharedSizeBytes == 0
        assert a.maxDynamicSharedSizeBytes == hip.hipGetDeviceProperties(0).sharedMemPerBlock
        FA = hip.hipFunction_attribute
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == 1024
        assert hip.hipFuncGetAttribute(FA.HIP_FUNC_ATTRIBUTE_NUM_REGS, f) == 0
        expect(E.hipErrorInvalidValue, hip.hipFuncGetAttribute, -1, f)
        expect(E.hipErrorInvalidResourceHandle, hip.hipFuncGetAttribute, FA.HIP_FUNC_ATTRIBUTE_NUM_REGS, None)
        expect(E.hipErrorInvalidDeviceFunction, hip.hipFuncGetAttributes, None)
    finally:
        hip.hipModuleUnload(m)
    expect(E.hipErrorInvalidHandle, hip.hipFuncGetAttributes, f)
    expect(E.hipErrorInvalidImage, hip.hipModuleLoadDataEx, "", 0, None, None)
    expect(E.hipErrorInvalidValue, hip.hipModuleLoadDataEx, None, 0, None, None)
    expect(E.hipErrorInvalidValue, hip.hipModuleLoadDataEx, image, 2, [1], [2])


def test_occupancy(mod):
    f = fn(mod, "empty")
    cus = hip.hipGetDeviceProperties(0).multiProcessorCount
    assert hip.hipModuleOccupancyMaxPotentialBlockSize(f, 0, 0) == (2 * cus, 1024)
    assert hip.hipModuleOccupancyMaxPotentialBlockSize(f, 0, 100) == (16 * cus, 128)    # a multiple of 64
    assert hip.hipOccupancyMaxPotentialBlockSize(f) == (2 * cus, 1024)
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 256, 0) == 8
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 65, 0) == 16
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 64, 32768) == 2        # LDS-limited
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 2048, 0) == 0
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 1024) == 2
    expect(E.hipErrorInvalidValue, hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, f, 0, 0)
    expect(E.hipErrorInvalidValue, hip.hipModuleOccupancyMaxPotentialBlockSize, None, 0, 0)
    expect(E.hipErrorInvalidDeviceFunction, hip.hipOccupancyMaxPotentialBlockSize, None)


# -- group 2: pitched memory -----------------------------------------------------------------------------
def test_malloc_pitch_rounds_to_256(mod):
    p, pitch = hip.hipMallocPitch(100, 7)
    try:
        assert pitch == 256
        assert hip.hipMemGetAddressRange(p) == (p, 256 * 7)
    finally:
        hip.hipFree(p)
    assert hip.hipMallocPitch(0, 5) == (0, 0)
    expect(E.hipErrorInvalidValue, hip.hipMallocPitch, -1, 5)


@pytest.mark.parametrize("host", ["pageable", "pinned"])
def test_memcpy2d_round_trip_touches_only_the_rectangle(mod, dmem, host):
    w, h, spitch = 40, 9, 48
    src = np.arange(spitch * h, dtype=np.uint8)
    d, dpitch = hip.hipMallocPitch(w, h)
    try:
        hip.hipMemset(d, 0xEE, dpitch * h)
        if host == "pinned":
            hs = dmem(src.nbytes, host=True)
            hip.host_array(hs, np.uint8, src.nbytes)[:] = src
        else:
            hs = src
        hip.hipMemcpy2D(d, dpitch, hs, spitch, w, h, hip.hipMemcpyHostToDevice)
        dev = np.zeros(dpitch * h, np.uint8)
        hip.hipMemcpy(dev, d, dev.nbytes, hip.hipMemcpyDeviceToHost)
        rows = dev.reshape(h, dpitch)
        assert np.array_equal(rows[:, :w], src.reshape(h, spitch)[:, :w])
        assert (rows[:, w:] == 0xEE).all()                   # the padding is left alone
        out = np.full((h, 64), 7, np.uint8)                  # D2H into a wider pitched host array
        hip.hipMemcpy2D(out, 64, d, dpitch, w, h, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(out[:, :w], src.reshape(h, spitch)[:, :w]) and (out[:, w:] == 7).all()
        d2, p2 = hip.hipMallocPitch(w, h)
        try:                                                 # D2D between pitched buffers, then contiguous
            hip.hipMemcpy2D(d2, p2, d, dpitch, w, h, hip.hipMemcpyDeviceToDevice)
            flat = np.zeros(w * h, np.uint8)
            hip.hipMemcpy2D(flat, w, d2, p2, w, h, hip.hipMemcpyDefault)
            assert np.array_equal(flat.reshape(h, w), src.reshape(h, spitch)[:, :w])
        finally:
            hip.hipFree(d2)
    finally:
        hip.hipFree(d)


def test_memcpy2d_async_keeps_stream_order_and_host_to_host(mod, stream, dmem):
    w, h = 64, 16
    d, pitch = hip.hipMallocPitch(w, h)
    try:
        pin = dmem(w * h, host=True)
        pa = hip.host_array(pin, np.uint8, w * h)
        pa[:] = 3
        hip.hipMemset2DAsync(d, pitch, 1, w, h, stream)
        hip.hipMemcpy2DAsync(d, pitch, pin, w, w, h // 2, hip.hipMemcpyHostToDevice, stream)   # after the fill
        out = dmem(pitch * h, host=True)
        hip.hipMemcpy2DAsync(out, pitch, d, pitch, w, h, hip.hipMemcpyDeviceToHost, stream)
        hip.hipStreamSynchronize(stream)
        rows = hip.host_array(out, np.uint8, pitch * h).reshape(h, pitch)[:, :w]
        assert (rows[:h // 2] == 3).all() and (rows[h // 2:] == 1).all()
        a, b = np.arange(100, dtype=np.uint8), np.zeros(200, np.uint8)
        hip.hipMemcpy2D(b, 20, a, 10, 10, 10, hip.hipMemcpyHostToHost)
        assert np.array_equal(b.reshape(10, 20)[:, :10], a.reshape(10, 10)) and not b.reshape(10, 20)[:, 10:].any()
    finally:
        hip.hipFree(d)


def test_memcpy2d_and_memset2d_errors(mod, dmem):
    d, pitch = hip.hipMallocPitch(64, 8)
    try:
        host = np.zeros(pitch * 8, np.uint8)
        K = hip.hipMemcpyHostToDevice
        hip.hipMemcpy2D(d, pitch, host, pitch, 0, 8, K)                 # zero width: nothing, no checks
        expect(E.hipErrorInvalidPitchValue, hip.hipMemcpy2D, d, 63, host, pitch, 64, 8, K)
        expect(E.hipErrorInvalidPitchValue, hip.hipMemcpy2D, d, pitch, host, 10, 64, 8, K)
        expect(E.hipErrorInvalidValue, hip.hipMemcpy2D, 0, pitch, host, pitch, 64, 8, K)
        expect(E.hipErrorInvalidValue, hip.hipMemcpy2D, d, 2**31, host, pitch, 64, 8, K)    # over memPitch
        expect(E.hipErrorInvalidValue, hip.hipMemcpy2D, d, pitch, host, pitch, 64, 9, K)    # past the end
        expect(E.hipErrorInvalidMemcpyDirection, hip.hipMemcpy2D, d, pitch, host, pitch, 64, 8, 7)
        expect(E.hipErrorInvalidMemcpyDirection, hip.hipMemcpy2D, d, pitch, host, pitch, 64, 8,
               hip.hipMemcpyDeviceToHost)
        expect(E.hipErrorInvalidValue, hip.hipMemset2D, d, 1, 0, 64, 8)                     # pitch < width
        expect(E.hipErrorInvalidValue, hip.hipMemset2D, d, pitch, 0, pitch + 1, 8)
        expect(E.hipErrorInvalidValue, hip.hipMemset2D, 0, pitch, 0, 64, 8)
        expect(E.hipErrorInvalidValue, hip.hipMemset2D, host, pitch, 0, 64, 8)
        expect(E.hipErrorInvalidValue, hip.hipMemset2D, d + pitch * 8 + 1, pitch, 0, 64, 8)
        hip.hipMemset2D(d, pitch, 0x5A, 64, 8)
        hip.hipMemcpy2D(host, pitch, d, pitch, 64, 8, hip.hipMemcpyDeviceToHost)
        assert (host.reshape(8, pitch)[:, :64] == 0x5A).all()
    finally:
        hip.hipFree(d)


def test_memset2d_capture_is_one_node_memcpy2d_row_nodes(mod, stream, dmem):
    """A captured hipMemset2DAsync is one memset node (rows a pitch apart: one rectangular packet), as
    HIP captures it; a hipMemcpy2DAsync one memcpy node per row."""
    w, h = 16, 4
    d, pitch = hip.hipMallocPitch(w, h)
    try:
        pin = dmem(w * h, host=True)
        hip.host_array(pin, np.uint8, w * h)[:] = np.arange(w * h, dtype=np.uint8)
        hip.hipMemset(d, 0, pitch * h)
        hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
        hip.hipMemset2DAsync(d, pitch, 9, w, h, stream)
        hip.hipMemcpy2DAsync(d, pitch, pin, w, w - 4, h, hip.hipMemcpyHostToDevice, stream)
        g = hip.hipStreamEndCapture(stream)
        assert len(hip.hipGraphGetNodes(g)) == 1 + h
        ex = hip.hipGraphInstantiate(g)
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        out = np.zeros(pitch * h, np.uint8)
        hip.hipMemcpy(out, d, pitch * h, hip.hipMemcpyDeviceToHost)
        rows = out.reshape(h, pitch)
        want = np.zeros((h, pitch), np.uint8)
        want[:, :w] = 9
        want[:, :w - 4] = np.arange(w * h, dtype=np.uint8).reshape(h, w)[:, :w - 4]
        assert np.array_equal(rows, want)
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(g)
    finally:
        hip.hipFree(d)


def test_memset_node_with_hip_fields_width_height_pitch(mod, stream):
    """hipMemsetParams with HIP's fields: height rows of width elements, pitch bytes apart; only those
    bytes are written; a pitch under the row or a height of 0 is hipErrorInvalidValue."""
    d, pitch = hip.hipMallocPitch(24, 6)
    try:
        hip.hipMemset(d, 0, pitch * 6)
        g = hip.hipGraphCreate()
        p = hip.hipMemsetParams()
        p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = d, 0xA1B2, 2, 10, 6, pitch
        hip.hipGraphAddMemsetNode(g, None, p)
        ex = hip.hipGraphInstantiate(g)
        hip.hipGraphLaunch(ex, stream)
        hip.hipStreamSynchronize(stream)
        out = np.zeros(pitch * 6, np.uint8)
        hip.hipMemcpy(out, d, pitch * 6, hip.hipMemcpyDeviceToHost)
        rows = out.reshape(6, pitch)
        assert (rows[:, :20].copy().view("<u2") == 0xA1B2).all() and (rows[:, 20:] == 0).all()
        for bad in (dict(pitch=19), dict(height=0), dict(width=-1)):
            q = hip.hipMemsetParams(d, 1, 0, 2, width=10, height=6, pitch=pitch)
            for k, v in bad.items():
                setattr(q, k, v)
            expect(E.hipErrorInvalidValue, hip.hipGraphAddMemsetNode, g, None, q)
        hip.hipGraphExecDestroy(ex)
        hip.hipGraphDestroy(g)
    finally:
        hip.hipFree(d)


# -- group 3: the stream-ordered allocator ------------------------------------------------------------
def _stream_on_another_engine(stream):
    """A non-blocking stream whose queue runs on another engine than ``stream``'s: an engine runs one
    kernel at a time, so a stream on the gated stream's engine would wait for the gate. Which engine a
    new queue gets depends on the queues the process already holds (least-loaded), so try a few."""
    tried = []
    try:
        for _ in range(8):
            s = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
            if s.vgpu.queue.engine != stream.vgpu.queue.engine:
                return s
            tried.append(s)
        pytest.fail(f"no stream got another engine than {stream.vgpu.queue.engine} in 8 tries")
    finally:
        for t in tried:
            hip.hipStreamDestroy(t)


def test_free_async_waits_for_the_streams_earlier_work(mod, stream):
    """A block freed behind a gated kernel is not handed out again until the kernel is done: the next
    hipMallocAsync (another stream) gets other memory, and the kernel's result is intact."""
    n = 1024
    other = _stream_on_another_engine(stream)
    out = hip.hipMalloc(4 * n)
    try:
        with Gate(mod) as gate:
            p = hip.hipMallocAsync(4 * n, stream)
            hip.hipModuleLaunchKernel(fn(mod, "set_value"), 1, 1, 1, n, 1, 1, 0, stream, [p, 5, n])
            gate.launch(stream)
            hip.hipMemcpyAsync(out, p, 4 * n, hip.hipMemcpyDeviceToDevice, stream)
            hip.hipFreeAsync(p, stream)
            pool = hip.hipDeviceGetDefaultMemPool(0)
            assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrReservedMemCurrent) >= 4 * n
            q = hip.hipMallocAsync(4 * n, other)
            assert q != p                                   # p is still the gated stream's
            hip.hipModuleLaunchKernel(fn(mod, "set_value"), 1, 1, 1, n, 1, 1, 0, other, [q, -1, n])
            hip.hipFreeAsync(q, other)
            hip.hipStreamSynchronize(other)
            gate.open()
            hip.hipStreamSynchronize(stream)
        res = np.zeros(n, np.int32)
        hip.hipMemcpy(res, out, 4 * n, hip.hipMemcpyDeviceToHost)
        assert (res == 5).all()
        hip.hipMemPoolTrimTo(pool, 0)
        assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrUsedMemCurrent) == 0
        assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrReservedMemCurrent) == 0
    finally:
        hip.hipFree(out)
        hip.hipStreamDestroy(other)


def test_malloc_kernel_free_loop_without_sync(mod, stream):
    """200 malloc / write / copy-out / free rounds over two streams with no sync: every round's value
    arrives intact in the results buffer (a block reused while a kernel still wrote it would not)."""
    n, rounds = 256, 200
    other = hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)
    res = hip.hipMalloc(4 * n * rounds)
    setv = fn(mod, "set_value")
    try:
        for i in range(rounds):
            s = stream if i % 2 else other
            p = hip.hipMallocAsync(4 * n, s)
            hip.hipModuleLaunchKernel(setv, 1, 1, 1, n, 1, 1, 0, s, [p, i, n])
            hip.hipMemcpyAsync(res + 4 * n * i, p, 4 * n, hip.hipMemcpyDeviceToDevice, s)
            hip.hipFreeAsync(p, s)
        hip.hipDeviceSynchronize()
        out = np.zeros((rounds, n), np.int32)
        hip.hipMemcpy(out, res, out.nbytes, hip.hipMemcpyDeviceToHost)
        assert np.array_equal(out, np.repeat(np.arange(rounds, dtype=np.int32)[:, None], n, axis=1))
    finally:
        hip.hipFree(res)
        hip.hipStreamDestroy(other)


def test_malloc_async_waits_for_pending_frees_when_full(mod, stream):
    """The device is nearly full of blocks freed behind a gate: the next hipMallocAsync waits for
    those frees instead of failing (the gate opens from a host function of a third stream)."""
    free, _total = hip.hipMemGetInfo()
    big = (free // 2) & ~0xFFFF
    with Gate(mod) as gate:
        a = hip.hipMallocAsync(big, stream)
        gate.launch(stream)
        hip.hipFreeAsync(a, stream)
        b = hip.hipMallocAsync(big, stream)         # fits next to the pending block
        hip.hipFreeAsync(b, stream)
        gate.open()                                 # open before the third: its wait must end
        c = hip.hipMallocAsync(big + big // 2, 0)   # needs a pending block back
        hip.hipFreeAsync(c, 0)
    hip.hipDeviceSynchronize()


def test_malloc_free_async_errors_and_pool_attributes(mod, stream):
    expect(E.hipErrorInvalidValue, hip.hipFreeAsync, 0, stream)
    p = hip.hipMallocAsync(1000, stream)
    expect(E.hipErrorInvalidHandle, hip.hipFreeAsync, p, -1)
    expect(E.hipErrorInvalidHandle, hip.hipMallocAsync, 16, 12345)
    expect(E.hipErrorInvalidValue, hip.hipFreeAsync, p + 4, stream)
    hip.hipFreeAsync(p, stream)
    expect(E.hipErrorInvalidValue, hip.hipFreeAsync, p, stream)          # pending: a double free
    hip.hipStreamSynchronize(stream)
    expect(E.hipErrorInvalidValue, hip.hipFreeAsync, p, stream)          # done: no allocation there
    assert hip.hipMallocAsync(0, stream) == 0
    m = hip.hipMalloc(256)
    hip.hipFreeAsync(m, stream)                                           # not from a pool: hipFree
    expect(E.hipErrorNotFound, hip.hipMemGetAddressRange, m)             # freed at once
    pool = hip.hipDeviceGetDefaultMemPool(1)
    assert pool is hip.hipDeviceGetMemPool(1) and pool is not hip.hipDeviceGetDefaultMemPool(0)
    expect(E.hipErrorInvalidDevice, hip.hipDeviceGetDefaultMemPool, 2)
    assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold) == 0
    hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold, 1 << 20)
    assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolAttrReleaseThreshold) == 1 << 20
    assert hip.hipMemPoolGetAttribute(pool, hip.hipMemPoolReuseAllowOpportunistic) == 1
    hip.hipMemPoolSetAttribute(pool, hip.hipMemPoolAttrUsedMemHigh, 0)
    expect(E.hipErrorInvalidValue, hip.hipMemPoolSetAttribute, pool, hip.hipMemPoolAttrUsedMemHigh, 5)
    expect(E.hipErrorInvalidValue, hip.hipMemPoolSetAttribute, pool, hip.hipMemPoolAttrUsedMemCurrent, 0)
    expect(E.hipErrorInvalidValue, hip.hipMemPoolGetAttribute, pool, 99)
    expect(E.hipErrorInvalidValue, hip.hipMemPoolTrimTo, None, 0)
    hip.hipStreamBeginCapture(stream, hip.hipStreamCaptureModeGlobal)
    ptr = hip.hipMallocAsync(64, stream)          # captured: a memory alloc node, then a free node (as CLR)
    hip.hipFreeAsync(ptr, stream)
    g = hip.hipStreamEndCapture(stream)
    assert [hip.hipGraphNodeGetType(n) for n in hip.hipGraphGetNodes(g)] == \
        [hip.hipGraphNodeType.hipGraphNodeTypeMemAlloc, hip.hipGraphNodeType.hipGraphNodeTypeMemFree]
    hip.hipGraphDestroy(g)
