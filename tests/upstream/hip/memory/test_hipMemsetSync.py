"""Whether a memset waits for earlier device work: with device work still running on the stream,
asynchronous memsets and synchronous ones on device memory return at once (the stream is then still
busy); a synchronous memset of pinned host memory waits for it. 1-D, 2-D and 3-D memsets; the
hipHostRegister allocation kinds are left out (not in hdemu). Upstream's 100 ms delay kernel is a gate;
upstream's GENERATEs over the sizes are loops inside each case. Unit_hipMemset3DSync's heights and
depths are 16 and 32, not upstream's 128 and 256 (buffers of up to 16 MiB, half a ported platform's
device or host pool). Upstream's 2-D device case memsets and reads back with the width as the pitch
(not hipMallocPitch's), and its 3-D device read-back copies whole pitches: both as there."""
import numpy as np
import pytest

from hostside import hip
from tests.upstream.hip.memory import memset_common as m

UPSTREAM = "ROCm/hip-tests:catch/unit/memory/hipMemsetSync.cc"

TEST_VALUE = 0x11
WIDTHS = (512, 1024)
#: Unit_hipMemset2DSync's (width, height) pairs: GENERATE(512, 1024) of each
SHAPES_2D = [(w, h) for w in (512, 1024) for h in (512, 1024)]
#: Unit_hipMemset3DSync's (width, height, depth): upstream GENERATE(128, 256) of each; the port keeps the
#: widths and shrinks the heights and depths to 16 and 32
SHAPES_3D = [(w, h, d) for w in (128, 256) for h in (16, 32) for d in (16, 32)]


def _cases():
    for kind in m.ALLOC_KINDS:
        for stream_type in ("null", "created"):
            for is_async in (True, False):
                yield pytest.param(kind, stream_type, is_async,
                                   id=f"{kind}-{stream_type}-{'async' if is_async else 'sync'}")


def _run_tests(kmod, api, dtype, kind, stream_type, is_async):
    stream = hip.hipStreamCreate() if stream_type == "created" else None
    try:
        for width in WIDTHS:
            ptr = m.alloc(kind, width * np.dtype(dtype).itemsize)
            try:
                m.sync_check(kmod, lambda: m.memset_call(api, ptr, TEST_VALUE, width, is_async, stream),
                             should_wait=not (is_async or kind == "deviceMalloc"), stream=stream)
                hip.hipStreamSynchronize(stream)
                assert np.all(m.read_back(kind, ptr, width, dtype) == TEST_VALUE), width
            finally:
                m.free(kind, ptr)
    finally:
        if stream is not None:
            hip.hipStreamDestroy(stream)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
def test_Unit_hipMemsetSync(kmod, kind, stream_type, is_async):
    _run_tests(kmod, "hipMemset", np.int8, kind, stream_type, is_async)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
@pytest.mark.parametrize("api,dtype", [("D8", np.int8), ("D16", np.int16), ("D32", np.uint32)],
                         ids=["int8_t", "int16_t", "uint32_t"])
def test_Unit_hipMemsetDSync(kmod, api, dtype, kind, stream_type, is_async):
    _run_tests(kmod, api, dtype, kind, stream_type, is_async)


def _run_multi_d(kmod, kind, stream_type, is_async, shapes, init, memset, read):
    """runTests for hipMemset2D / hipMemset3D: ``init(kind, shape)`` gives (pointer, pitch),
    ``memset(ptr, pitch, shape, is_async, stream)`` sets it, ``read(kind, ptr, pitch, shape)`` gives the host copy as an
    array indexed [slice, row, byte] of the pitch (verifyData)."""
    stream = hip.hipStreamCreate() if stream_type == "created" else None
    try:
        for shape in shapes:
            ptr, pitch = init(kind, shape)
            try:
                m.sync_check(kmod, lambda: memset(ptr, pitch, shape, is_async, stream),
                             should_wait=not (is_async or kind == "deviceMalloc"), stream=stream)
                hip.hipStreamSynchronize(stream)
                host = read(kind, ptr, pitch, shape)
                assert np.all(host[:, :, :shape[0]] == TEST_VALUE), shape
            finally:
                m.free(kind, ptr)
    finally:
        if stream is not None:
            hip.hipStreamDestroy(stream)


def _init_2d(kind, shape):
    width, height = shape
    if kind == "deviceMalloc":
        ptr, _pitch = hip.hipMallocPitch(width, height)
        return ptr, width                       # dataPitch = dataW * elementSize, as upstream
    return hip.hipHostMalloc(width * height), width


def _memset_2d(ptr, pitch, shape, is_async, stream):
    width, height = shape
    if is_async:
        hip.hipMemset2DAsync(ptr, pitch, TEST_VALUE, width, height, stream)
    else:
        hip.hipMemset2D(ptr, pitch, TEST_VALUE, width, height)


def _read_2d(kind, ptr, pitch, shape):
    width, height = shape
    host = np.zeros(pitch * height, dtype=np.int8)
    direction = hip.hipMemcpyDeviceToHost if kind == "deviceMalloc" else hip.hipMemcpyHostToHost
    hip.hipMemcpy2D(host, width, ptr, pitch, width, height, direction)
    return host.reshape(1, height, pitch)


def _init_3d(kind, shape):
    width, height, depth = shape
    if kind == "deviceMalloc":
        pitched = hip.hipMalloc3D(hip.make_hipExtent(width, height, depth))
        return pitched.ptr, pitched.pitch
    return hip.hipHostMalloc(width * height * depth), width


def _memset_3d(ptr, pitch, shape, is_async, stream):
    width, height, depth = shape
    pitched, extent = hip.make_hipPitchedPtr(ptr, pitch, width, height), hip.make_hipExtent(width, height, depth)
    if is_async:
        hip.hipMemset3DAsync(pitched, TEST_VALUE, extent, stream)
    else:
        hip.hipMemset3D(pitched, TEST_VALUE, extent)


def _read_3d(kind, ptr, pitch, shape):
    width, height, depth = shape
    host = np.zeros(pitch * height * depth, dtype=np.int8)
    src = hip.make_hipPitchedPtr(ptr, pitch, width, height)
    if kind == "deviceMalloc":                  # deviceMallocCopy: whole pitches, device to host
        dst, extent = hip.make_hipPitchedPtr(host, pitch, width, height), hip.make_hipExtent(pitch, height, depth)
        direction = hip.hipMemcpyDeviceToHost
    else:                                       # hostCopy: the width, host to host
        dst, extent = hip.make_hipPitchedPtr(host, width, width, height), hip.make_hipExtent(width, height, depth)
        direction = hip.hipMemcpyHostToHost
    hip.hipMemcpy3D(hip.hipMemcpy3DParms(srcPos=hip.make_hipPos(0, 0, 0), srcPtr=src, dstPos=hip.make_hipPos(0, 0, 0),
                                         dstPtr=dst, extent=extent, kind=direction))
    return host.reshape(depth, height, pitch)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
def test_Unit_hipMemset2DSync(kmod, kind, stream_type, is_async):
    _run_multi_d(kmod, kind, stream_type, is_async, SHAPES_2D, _init_2d, _memset_2d, _read_2d)


@pytest.mark.parametrize("kind,stream_type,is_async", list(_cases()))
def test_Unit_hipMemset3DSync(kmod, kind, stream_type, is_async):
    _run_multi_d(kmod, kind, stream_type, is_async, SHAPES_3D, _init_3d, _memset_3d, _read_3d)
