"""3-D memory (hostside.hip._memory3d): hipMalloc3D's pitch, hipMemset3D and hipMemcpy3D over every
pair of sides (device, pinned, managed, pageable numpy) with positions and slices that are and are not
one run of rows, only the region's bytes touched, the checks in hip-tests' order, async in a
stream's order, and a rejected call that leaves memory as it was."""
import numpy as np
import pytest

from hostside import hip
from tests.unit.hostside.hip.embedded import embedded_module
from tests.upstream.hipkit import Gate

pytestmark = pytest.mark.timeout(120)
E = hip.hipError_t
K = hip.hipMemcpyKind


@pytest.fixture(scope="module")
def mod():
    yield from embedded_module({"agents": 1, "memory_mib": 16, "host_pool_mib": 16, "engines": 2}, "upstream.py")


def expect(err, f, *args):
    with pytest.raises(hip.HipError) as ei:
        f(*args)
    assert ei.value.error == err, f"{f.__name__}: {ei.value.name}, expected {err.name}: {ei.value}"
    return ei.value


def dev_bytes(ptr, n):
    out = np.zeros(n, np.uint8)
    hip.hipMemcpy(out, ptr, n, K.hipMemcpyDefault)
    return out


def test_malloc3d_pitch_and_zero_extent(mod):
    pp = hip.hipMalloc3D(hip.make_hipExtent(184, 57, 16))
    assert pp.pitch == 256 and pp.xsize == 184 and pp.ysize == 57 and pp.ptr
    assert hip.hipPointerGetAttributes(pp.ptr + 256 * 57 * 16 - 1).type == hip.hipMemoryTypeDevice
    hip.hipFree(pp.ptr)
    for ext in ((0, 4, 4), (4, 0, 4), (4, 4, 0)):
        z = hip.hipMalloc3D(hip.hipExtent(*ext))
        assert z.ptr == 0 and z.pitch == 0
    expect(E.hipErrorInvalidValue, hip.hipMalloc3D, (4, 4, 4))
    expect(E.hipErrorInvalidValue, hip.hipMalloc3D, hip.hipExtent(-1, 4, 4))


def test_memset3d_fills_only_the_region(mod):
    ext = hip.make_hipExtent(100, 7, 5)
    pp = hip.hipMalloc3D(ext)
    n = pp.pitch * pp.ysize * 5
    hip.hipMemset(pp.ptr, 0, n)
    sub = hip.hipExtent(30, 4, 3)          # slices of 7 rows, 4 filled: not one run of rows
    hip.hipMemset3D(hip.hipPitchedPtr(pp.ptr + 2 * pp.pitch * pp.ysize + pp.pitch + 10, pp.pitch, 100, 7), 0x5A, sub)
    got = dev_bytes(pp.ptr, n).reshape(5, 7, pp.pitch)
    want = np.zeros((5, 7, pp.pitch), np.uint8)
    want[2:5, 1:5, 10:40] = 0x5A
    assert (got == want).all()
    s = hip.hipStreamCreate()
    hip.hipMemset3DAsync(pp, 0x11, ext, s)    # whole allocation width: padding left alone
    hip.hipStreamSynchronize(s)
    got = dev_bytes(pp.ptr, n).reshape(5, 7, pp.pitch)
    want[:, :, :100] = 0x11
    assert (got == want).all()
    hip.hipStreamDestroy(s)
    hip.hipFree(pp.ptr)


def test_memset3d_checks_as_hip_tests(mod):
    ext = hip.make_hipExtent(184, 57, 16)
    pp = hip.hipMalloc3D(ext)
    base = dev_bytes(pp.ptr, 64)
    big = 2 ** 64 - 1
    bad = [hip.hipPitchedPtr(), hip.hipPitchedPtr(0, pp.pitch, 184, 57), hip.hipPitchedPtr(pp.ptr, 1, 184, 57),
           hip.hipPitchedPtr(np.zeros(184 * 57 * 16, np.uint8), pp.pitch, 184, 57),
           hip.hipPitchedPtr(pp.ptr + pp.pitch * 57 * 16 + 1, pp.pitch, 184, 57)]
    for p in bad:
        for f, args in ((hip.hipMemset3D, (p, 0x42, ext)), (hip.hipMemset3DAsync, (p, 0x42, ext, None))):
            expect(E.hipErrorInvalidValue, f, *args)
    for e in (hip.hipExtent(big, 57, 16), hip.hipExtent(184, big, 16), hip.hipExtent(184, 57, big),
              hip.hipExtent(pp.pitch + 1, 57, 16)):
        expect(E.hipErrorInvalidValue, hip.hipMemset3D, pp, 0x42, e)
    hip.hipMemset3D(bad[-1], 0x42, hip.hipExtent(0, 0, 0))      # a zero extent does nothing, anywhere
    expect(E.hipErrorInvalidValue, hip.hipMemset3D, pp, "x", ext)
    assert (dev_bytes(pp.ptr, 64) == base).all()
    hip.hipFree(pp.ptr)


def _ref(n, seed):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


@pytest.mark.parametrize("dst_kind", ["device", "pinned", "managed", "pageable"])
@pytest.mark.parametrize("src_kind", ["device", "pinned", "managed", "pageable"])
def test_memcpy3d_every_side_with_positions(mod, dst_kind, src_kind):
    """A 3-slice sub-box copied between two 3-D allocations of different pitches and slice heights:
    exactly those bytes change, on every pair of sides."""
    W, H, D = 64, 6, 4                       # the boxes: source pitch 80, 6 rows; destination 96, 9 rows
    sp, sy, dp, dy = 80, 6, 96, 9
    made = []

    def alloc(kind, nbytes, fill):
        if kind == "pageable":
            return fill.copy(), None
        p = {"device": lambda: hip.hipMalloc(nbytes), "pinned": lambda: hip.hipHostMalloc(nbytes),
             "managed": lambda: hip.hipMallocManaged(nbytes)}[kind]()
        hip.hipMemcpy(p, fill, nbytes, K.hipMemcpyDefault)
        made.append((kind, p))
        return p, p

    def read(obj, nbytes):
        if isinstance(obj, np.ndarray):
            return obj.copy()
        return dev_bytes(obj, nbytes)

    sn, dn = sp * sy * D, dp * dy * D
    src_init, dst_init = _ref(sn, 1), _ref(dn, 2)
    src, _ = alloc(src_kind, sn, src_init)
    dst, _ = alloc(dst_kind, dn, dst_init)
    p = hip.hipMemcpy3DParms(srcPtr=hip.make_hipPitchedPtr(src, sp, W, sy), srcPos=hip.make_hipPos(5, 1, 1),
                             dstPtr=hip.make_hipPitchedPtr(dst, dp, W, dy), dstPos=hip.make_hipPos(20, 3, 0),
                             extent=hip.make_hipExtent(40, 4, 3), kind=K.hipMemcpyDefault)
    hip.hipMemcpy3D(p)
    got = read(dst, dn).reshape(D, dy, dp)
    want = dst_init.reshape(D, dy, dp).copy()
    want[0:3, 3:7, 20:60] = src_init.reshape(D, sy, sp)[1:4, 1:5, 5:45]
    assert (got == want).all()
    assert (read(src, sn) == src_init).all()
    for kind, ptr in made:
        (hip.hipHostFree if kind == "pinned" else hip.hipFree)(ptr)


def test_memcpy3d_run_of_slices_async_and_checks(mod):
    ext = hip.make_hipExtent(48, 5, 6)
    a, b = hip.hipMalloc3D(ext), hip.hipMalloc3D(ext)
    n = a.pitch * 5 * 6
    host = _ref(48 * 5 * 6, 3)
    s = hip.hipStreamCreate()
    p = hip.hipMemcpy3DParms(srcPtr=hip.make_hipPitchedPtr(host, 48, 48, 5), dstPtr=a, extent=ext,
                             kind=K.hipMemcpyHostToDevice)
    hip.hipMemcpy3DAsync(p, s)
    hip.hipMemcpy3DAsync(hip.hipMemcpy3DParms(srcPtr=a, dstPtr=b, extent=ext, kind=K.hipMemcpyDeviceToDevice), s)
    back = np.zeros(48 * 5 * 6, np.uint8)
    hip.hipMemcpy3DAsync(hip.hipMemcpy3DParms(srcPtr=b, dstPtr=hip.make_hipPitchedPtr(back, 48, 48, 5), extent=ext,
                                              kind=K.hipMemcpyDeviceToHost), s)
    hip.hipStreamSynchronize(s)
    assert (back == host).all()
    before = dev_bytes(b.ptr, n)
    good = dict(srcPtr=a, dstPtr=b, extent=ext, kind=K.hipMemcpyDeviceToDevice)

    def parms(**kw):
        d = dict(good)
        d.update(kw)
        return hip.hipMemcpy3DParms(**d)
    cases = [
        (E.hipErrorInvalidValue, parms(dstPtr=hip.hipPitchedPtr(0, b.pitch, 48, 5))),
        (E.hipErrorInvalidValue, parms(srcPtr=hip.hipPitchedPtr(None, a.pitch, 48, 5))),
        (E.hipErrorInvalidPitchValue, parms(dstPtr=hip.hipPitchedPtr(b.ptr, 47, 48, 5))),
        (E.hipErrorInvalidValue, parms(srcPtr=hip.hipPitchedPtr(a.ptr, 2 ** 40, 48, 5))),
        (E.hipErrorInvalidValue, parms(dstPos=hip.hipPos(b.pitch - 48 + 1, 0, 0))),
        (E.hipErrorInvalidValue, parms(srcPos=hip.hipPos(0, 1, 0))),
        (E.hipErrorInvalidValue, parms(dstPos=hip.hipPos(0, 0, 1))),
        (E.hipErrorInvalidMemcpyDirection, parms(kind=-1)),
        (E.hipErrorInvalidMemcpyDirection, parms(kind=K.hipMemcpyHostToDevice)),
        (E.hipErrorInvalidValue, parms(srcArray=object())),
        (E.hipErrorInvalidValue, parms(extent=(48, 5, 6))),
    ]
    for err, bad in cases:
        expect(err, hip.hipMemcpy3D, bad)
        expect(err, hip.hipMemcpy3DAsync, bad, s)
    expect(E.hipErrorInvalidValue, hip.hipMemcpy3D, None)
    hip.hipMemcpy3D(parms(dstPtr=hip.hipPitchedPtr(0, 0, 0, 0), extent=hip.hipExtent(0, 5, 6)))   # nothing to copy
    assert (dev_bytes(b.ptr, n) == before).all()
    hip.hipStreamDestroy(s)
    hip.hipFree(a.ptr)
    hip.hipFree(b.ptr)


def test_memset3d_and_memcpy3d_in_a_graph_capture(mod):
    ext = hip.make_hipExtent(32, 3, 2)
    a = hip.hipMalloc3D(ext)
    host = np.zeros(32 * 3 * 2, np.uint8)
    s = hip.hipStreamCreate()
    hip.hipStreamBeginCapture(s, hip.hipStreamCaptureModeGlobal)
    hip.hipMemset3DAsync(a, 0x7F, ext, s)
    hip.hipMemcpy3DAsync(hip.hipMemcpy3DParms(srcPtr=a, dstPtr=hip.make_hipPitchedPtr(host, 32, 32, 3), extent=ext,
                                              kind=K.hipMemcpyDeviceToHost), s)
    g = hip.hipStreamEndCapture(s)
    ge = hip.hipGraphInstantiate(g)
    hip.hipGraphLaunch(ge, s)
    hip.hipStreamSynchronize(s)
    assert (host == 0x7F).all()
    hip.hipGraphExecDestroy(ge)
    hip.hipGraphDestroy(g)
    hip.hipStreamDestroy(s)
    hip.hipFree(a.ptr)


def test_pitched_async_calls_of_many_rows_never_wait_behind_device_work(mod):
    """A pitched region is one SDMA packet, whatever its height: with the stream held by a kernel
    that only the host lets go, async 2-D/3-D fills and copies of thousands of rows return at once
    (one packet a row filled the 256-slot ring and blocked the host: with the gate opened only after
    them, a deadlock until the wait timeout), and then run in order."""
    rows = 2000
    a, pitch = hip.hipMallocPitch(100, rows)
    b, _ = hip.hipMallocPitch(100, rows)
    pp = hip.hipPitchedPtr(a, pitch, 100, rows // 4)          # 4 slices of 500 rows
    s = hip.hipStreamCreate()
    with Gate(mod) as g:
        g.launch(s)
        for i in range(3):                   # 3 of each: several rings' worth of rows
            hip.hipMemset2DAsync(a, pitch, 0x30 + i, 100, rows, s)
            hip.hipMemset3DAsync(pp, 0x40 + i, hip.hipExtent(100, rows // 4 - 10, 4), s)   # a packet a slice
            hip.hipMemcpy2DAsync(b, pitch, a, pitch, 100, rows, K.hipMemcpyDeviceToDevice, s)
        assert hip.hipStreamQuery(s) == E.hipErrorNotReady     # all queued behind the closed gate
        g.open()
        hip.hipStreamSynchronize(s)
    got = dev_bytes(b, pitch * rows).reshape(4, rows // 4, pitch)
    assert (got[:, :-10, :100] == 0x42).all() and (got[:, -10:, :100] == 0x32).all()
    hip.hipStreamDestroy(s)
    hip.hipFree(a)
    hip.hipFree(b)
